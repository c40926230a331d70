"""One task through the page's agent, turn by turn, into its record (CPython and Pyodide).

The agent is the page's own: a copy of the page session's Agent (chat format, tools, which are on
by default, its options with the default tool-call mode, special tokens), given per task:
- a fresh store (TaskStore) over the session's real one (IndexedDB in the browser), which the
  task's `setup` fills through the tools that make such records;
- the task's fixed clock and time zone (ToolContext.now, Settings.timezone), and its settings;
- the simulated person as its `confirm`: calls of the tools in `approve` are approved, every other
  confirmation is denied; each request is recorded;
- the run's temperature (default 0: greedy).

The record (docs/tasks.md) holds every generation (prompt, output, seconds), every call (whether
it was acting, asked, approved, ran; its result), each turn's answer and errors, and the store's
notes, todos and events after the last turn. checks.py judges it; nothing here judges.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import time
from dataclasses import replace
from typing import AsyncIterator, Callable

from botpsy_agent.agent import Agent, Model
from botpsy_agent.storage import Store
from botpsy_agent.tooling import Tool
from botpsy_agent.tools import add_user_file, calendar_events, notes, todos
from botpsy_agent.tools.timezones import get_zone
from botpsy_eval.constraint import constraint_digest

# The collections checks read (docs/tasks.md), by the names the tools store them under.
STORED = {"notes": notes.COLLECTION, "todos": todos.COLLECTION, "events": calendar_events.COLLECTION}
# How a call that never ran was refused: the loop's own error types ("Error: Denied: ...").
_REFUSAL = re.compile(r"Error: (\w+)")
REPEATED_CALLS = "again with the same arguments"  # the loop's notice before issue 41 (older records)


class TaskStore(Store):
    """A task's own store inside another: its collections live under `prefix`, so the tools see
    their usual collections, empty at the start, and nothing passes between tasks."""

    def __init__(self, inner: Store, prefix: str = ""):
        self.inner = inner
        self.prefix = prefix
        self.touched: set[str] = set()

    def _name(self, collection: str) -> str:
        self.touched.add(collection)
        return self.prefix + collection

    async def get(self, collection, key):
        return await self.inner.get(self._name(collection), key)

    async def put(self, collection, key, value):
        await self.inner.put(self._name(collection), key, value)

    async def delete(self, collection, key):
        return await self.inner.delete(self._name(collection), key)

    async def items(self, collection):
        return await self.inner.items(self._name(collection))

    async def has(self, collection, key):
        return await self.inner.has(self._name(collection), key)

    async def clear(self) -> None:
        """Remove everything the task stored (the browser's IndexedDB is shared by the run's tasks)."""
        for collection in sorted(self.touched):
            for key, _ in await self.items(collection):
                await self.delete(collection, key)


class SimulatedPerson:
    """Approves calls of the named tools, denies every other confirmation; remembers each answer."""

    def __init__(self, approve: list[str]):
        self.approve = set(approve)
        self.answers: dict[str, bool] = {}

    async def confirm(self, request: dict) -> dict:
        approved = request["name"] in self.approve
        self.answers[request["id"]] = approved
        return {"approved": approved}


class RecordingModel:
    """The model, with every generation recorded in the current turn's list."""

    def __init__(self, model: Model, on_step: Callable[[dict], None]):
        self.model = model
        self.on_step = on_step
        self.generations: list[dict] = []
        self.first_constraint: str | None = None

    async def generate(self, prompt: str, options: dict) -> AsyncIterator[str]:
        if self.first_constraint is None:
            self.first_constraint = constraint_digest(options.get("logitsProcessors"))
        generation = {"prompt": prompt, "output": "", "seconds": 0.0}
        self.generations.append(generation)
        pieces: list[str] = []
        started = time.perf_counter()
        try:
            async for chunk in self.model.generate(prompt, options):
                pieces.append(chunk)
                yield chunk
        finally:
            generation["output"] = "".join(pieces)
            generation["seconds"] = round(time.perf_counter() - started, 3)
            self.on_step({"step": len(self.generations), "output_chars": len(generation["output"]),
                          "seconds": generation["seconds"]})


def fixed_clock(now: str, zone_name: str) -> Callable[[], datetime.datetime]:
    """ToolContext.now for a task: always the same aware moment, the local time `now` in the zone."""
    moment = datetime.datetime.fromisoformat(now).replace(tzinfo=get_zone(zone_name))
    return lambda: moment


def _marking(tool: Tool, ran: set[str]) -> Tool:
    """The tool, noting its name in `ran` each time it really runs (past the loop's checks and the gate)."""
    handler = tool.handler

    def marked(*args, **kwargs):
        ran.add(tool.name)
        return handler(*args, **kwargs)

    return replace(tool, handler=marked)


def task_agent(page_agent: Agent, model: Model, store: Store, task: dict, person: SimulatedPerson,
               temperature: float, ran: set[str]) -> Agent:
    """A copy of the page's agent for one task (see the module's docstring)."""
    settings = task.get("settings", {})
    context = replace(page_agent.context, store=store, now=fixed_clock(task["now"], task["timezone"]), files={},
                      settings=replace(page_agent.context.settings, timezone=task["timezone"],
                                       enabled_tools=settings.get("enabledTools"),
                                       allow_network=settings.get("allowNetwork", False),
                                       thinking=settings.get("thinking", False)))
    return Agent(model=model, chat_format=page_agent.chat_format, context=context, confirm=person.confirm,
                 options=replace(page_agent.options, temperature=temperature),
                 tools={name: _marking(tool, ran) for name, tool in page_agent.tools.items()},
                 pre_approved=set(page_agent.pre_approved), off_by_default=set(page_agent.off_by_default),
                 special_tokens=page_agent.special_tokens)


async def set_up(agent: Agent, setup: dict) -> None:
    """The task's starting data, written by the tools that make such records (with the task's clock)."""
    tools, context = agent.tools, agent.context
    for entry in setup.get("notes", []):
        await tools["notes_create"].call(context, entry)
    for entry in setup.get("todos", []):
        arguments = {key: value for key, value in entry.items() if key != "done"}
        added = await tools["todo_add"].call(context, arguments)
        if entry.get("done"):
            await tools["todo_complete"].call(context, {"todo_id": added["id"]})
    for entry in setup.get("events", []):
        await tools["calendar_add_event"].call(context, entry)
    for entry in setup.get("files", []):
        await add_user_file(context.store, entry["name"], entry["text"], entry.get("type", "text/plain"))


async def stored_records(store: Store) -> dict[str, list[dict]]:
    return {name: [value for _, value in await store.items(collection)] for name, collection in STORED.items()}


async def _run_turn(agent: Agent, text: str, person: SimulatedPerson, ran: set[str]) -> dict:
    turn = {"user": text, "generations": [], "calls": [], "answer": "", "errors": [], "final": False}
    calls: dict[str, dict] = {}
    started = time.perf_counter()
    async for event in agent.run_turn(text):
        kind = event["type"]
        if kind == "tool_call":
            tool = agent.tools.get(event["name"]) if event["name"] in {t.name for t in agent.active_tools()} else None
            ran.clear()
            call = {"id": event["id"], "name": event["name"], "arguments": event["arguments"],
                    "offered": tool is not None, "acting": bool(tool and tool.side_effects),
                    "step": len(agent.model.generations), "asked": False, "approved": None, "ran": False,
                    "ok": None, "result": None}
            if event.get("error"):
                call["parse_error"] = event["error"]
            if event.get("said_when"):  # arguments the person's words about when replaced (said_when.py)
                call["said_when"] = event["said_when"]
            calls[event["id"]] = call
            turn["calls"].append(call)
        elif kind == "confirmation":
            calls[event["id"]]["asked"] = True
        elif kind == "tool_result":
            call = calls[event["id"]]
            call.update(ok=event["ok"], result=event["result"], ran=call["name"] in ran)
            if call["asked"]:
                call["approved"] = person.answers.get(call["id"])
            if not call["ran"]:
                refused = _REFUSAL.match(event["result"] or "")
                call["refused"] = refused.group(1) if refused else "?"
        elif kind == "error":
            turn["errors"].append(event["message"])
        elif kind == "final":
            turn.update(answer=event["text"], steps=event["steps"], final=True)
            # How the turn ended beyond its words (cancelled, answered_from_results, untrusted_reads, ...).
            turn["final_event"] = {key: value for key, value in event.items() if key not in ("type", "text", "steps")}
        elif kind not in ("text", "thinking", "tool_call_delta"):  # what else the loop said (a notice)
            turn.setdefault("notices", []).append(event)
    for call in turn["calls"]:
        if call["result"] is None and not call["ran"]:  # announced, never run: a repeat the loop held back
            refused = _REFUSAL.match(call.get("parse_error") or "")  # or a tool nobody offered
            call["refused"] = refused.group(1) if refused else "NotRun"
    turn["seconds"] = round(time.perf_counter() - started, 3)
    return turn


async def run_task(page_agent: Agent, model: Model, store: Store, task: dict, temperature: float = 0.0,
                   on_step: Callable[[dict], None] = lambda progress: None) -> dict:
    """task: a task as data.Task.data holds it. Returns its record (docs/tasks.md)."""
    recorder = RecordingModel(model, lambda progress: on_step({"task_id": task["id"], "turn": len(record["turns"]),
                                                               **progress}))
    person = SimulatedPerson(task.get("approve", []))
    ran: set[str] = set()
    agent = task_agent(page_agent, recorder, store, task, person, temperature, ran)
    record = {"task_id": task["id"], "category": task["category"], "tool_calls": agent.options.tool_calls,
              "temperature": temperature, "now": task["now"], "timezone": task["timezone"], "turns": [],
              "error": None}
    started = time.perf_counter()
    try:
        await set_up(agent, task.get("setup", {}))
    except Exception as error:  # a task whose data the tools refuse: its line says which
        record["error"] = f"setup failed: {type(error).__name__}: {error}"
        return record
    record["setup_seconds"] = round(time.perf_counter() - started, 3)
    for text in task["turns"]:
        recorder.generations = []
        turn = await _run_turn(agent, text, person, ran)
        turn["generations"] = recorder.generations
        record["turns"].append(turn)
        if not turn["final"]:  # the model or the template failed: later turns would mean nothing
            record["error"] = f"turn {len(record['turns'])}: {'; '.join(turn['errors']) or 'no final event'}"
            break
    record["stored"] = await stored_records(store)
    record["seconds"] = round(sum(turn["seconds"] for turn in record["turns"]), 3)
    record["generations"] = sum(len(turn["generations"]) for turn in record["turns"])
    record["confirmations"] = sum(call["asked"] for turn in record["turns"] for call in turn["calls"])
    first = next((turn["generations"][0]["prompt"] for turn in record["turns"] if turn["generations"]), "")
    record["first_prompt_digest"] = hashlib.sha256(first.encode()).hexdigest()[:16]
    record["first_constraint"] = recorder.first_constraint or ""
    return record
