"""One multi-turn case through our agent loop, turn by turn, into a transcript.

The same code runs in the agent worker's Pyodide (in_worker.py, the browser runtime's
model) and under CPython (the PyTorch reference, the tests). The agent is
botpsy_agent.Agent with the app's system prompt, chat format, parser and (constrained)
tool-call grammar; its tools are the environment's methods (environment.py), pre-approved
(nobody is there to confirm), documented by the case's function docs. Each user turn is one
`Agent.run_turn`: generate, run the calls, feed the results back, until a reply calls no
tool. A turn may take `max_steps` generations; a turn that still calls tools at its last
step ends the conversation (BFCL's force-quit: the case then fails). Functions BFCL holds
out arrive before the turn it names (the case's added_functions).

The transcript (documented in docs/eval-multi-turn.md) records every generation (raw
output, seconds), every call (arguments, whether it ran, the result the model read, the
state it changed) and how each turn ended. checker.py reads the calls that ran from it.
"""

from __future__ import annotations

import time
from typing import AsyncIterator, Callable

from botpsy_agent.agent import Agent, AgentOptions, Model

from ..constraint import constraint_digest
from .environment import Environment, diff_states

# Our "free"/"constrained" columns as the agent's tool-call modes.
AGENT_TOOL_CALLS = {"free": "off", "constrained": "auto"}


class _RecordingModel:
    """The model, with every generation recorded as a step of the current turn."""

    def __init__(self, model: Model, on_step: Callable[[dict], None]):
        self.model = model
        self.on_step = on_step
        self.turn = 0
        self.steps: list[dict] = []  # the current turn's
        self.first_prompt: str | None = None
        self.first_constraint: str | None = None  # constraint_digest of the first generation's grammar

    async def generate(self, prompt: str, options: dict) -> AsyncIterator[str]:
        if self.first_prompt is None:
            self.first_prompt = prompt
            self.first_constraint = constraint_digest(options.get("logitsProcessors"))
        step = {"step": len(self.steps) + 1, "prompt_chars": len(prompt), "output": "", "calls": []}
        self.steps.append(step)
        pieces: list[str] = []
        started = time.perf_counter()
        try:
            async for chunk in self.model.generate(prompt, options):
                pieces.append(chunk)
                yield chunk
        finally:
            step["output"] = "".join(pieces)
            step["seconds"] = round(time.perf_counter() - started, 3)
            self.on_step({"turn": self.turn, "step": step["step"], "output_chars": len(step["output"]),
                          "seconds": step["seconds"]})


def _agent_options(settings: dict) -> AgentOptions:
    mode = settings.get("tool_calls", "free")
    if mode not in AGENT_TOOL_CALLS:
        raise ValueError(f"tool_calls must be one of {', '.join(AGENT_TOOL_CALLS)}, got {mode!r}")
    # BFCL's protocol: every call the model writes runs, to its step limit (stop_repeated_calls
    # off), nothing but the results follows them (after_results, after_errors, after_denial off), and
    # a call of a tool nobody offered gets its error result (words_after_invented_tool off); no date
    # line of ours (now_line off): BFCL's conversations are the model's whole input. A generation
    # that loops runs to its token limit (stop_repetition off), as BFCL's harness lets it. Words are
    # never sent back for a call (figures_from_tools off).
    return AgentOptions(max_steps=int(settings["max_steps"]), max_tokens=int(settings["max_tokens"]),
                        temperature=0.0, tool_calls=AGENT_TOOL_CALLS[mode], stop_repeated_calls=False,
                        after_results=None, after_errors=None, after_denial=None,
                        words_after_invented_tool=False, now_line=False, stop_repetition=False,
                        figures_from_tools=False)


async def run_conversation(case: dict, model: Model, chat_format, settings: dict,
                           on_step: Callable[[dict], None] = lambda progress: None) -> dict:
    """case: data.MultiTurnCase.for_the_agent(); settings: {"tool_calls": "free"|"constrained",
    "max_tokens", "max_steps"}; on_step hears {"turn", "step", "output_chars", "seconds"} after
    each generation (progress of a long case). Returns the transcript."""
    started = time.perf_counter()
    environment = Environment.for_case(case)
    recorder = _RecordingModel(model, on_step)
    agent = Agent(model=recorder, chat_format=chat_format, options=_agent_options(settings))
    state = {"now": environment.state(), "call": None}

    def on_call(name: str, arguments: dict, result: str) -> None:
        after = environment.state()
        if state["call"] is not None:
            state["call"]["ran"] = True
            state["call"]["state_diff"] = diff_states(state["now"], after)
        state["now"] = after

    def add_tools(docs: list[dict]) -> list[str]:
        for doc in docs:
            agent.add_tool(environment.tool(doc, on_call), pre_approved=True)
        return [doc["name"] for doc in docs]

    transcript = {"case_id": case["id"], "category": case["category"], "tool_calls": settings.get("tool_calls", "free"),
                  "max_steps_per_turn": int(settings["max_steps"]), "functions": add_tools(case["functions"]),
                  "turns": [], "forced_quit": False, "error": None}
    for index, messages in enumerate(case["turns"]):
        turn = {"turn": index, "user": messages[-1]["content"]}
        added = case["added_functions"].get(str(index))
        if added:
            turn["functions_added"] = add_tools(added)
        for message in messages[:-1]:
            agent.conversation.add(dict(message))
        recorder.steps, recorder.turn = [], index
        turn_started = time.perf_counter()
        final = None
        async for event in agent.run_turn(messages[-1]["content"]):
            kind = event["type"]
            if kind == "tool_call":
                entry = {"name": event["name"], "arguments": event["arguments"], "ran": False, "result": None}
                if event.get("error"):
                    entry["parse_error"] = event["error"]
                recorder.steps[-1]["calls"].append(entry)
                state["call"] = entry
            elif kind == "tool_result":
                state["call"]["result"] = event["result"]
                state["call"] = None
            elif kind == "error":
                turn["error"] = event["message"]
            elif kind == "final":
                final = event
        turn["steps"] = recorder.steps
        turn["reply"] = final["text"] if final else ""
        turn["seconds"] = round(time.perf_counter() - turn_started, 3)
        # Agent.run_turn ends a turn early only when a reply calls nothing; otherwise it ran out of steps.
        turn["forced_quit"] = (len(turn["steps"]) >= agent.options.max_steps
                               and bool(turn["steps"][-1]["calls"]))
        transcript["turns"].append(turn)
        if turn["forced_quit"]:
            transcript["forced_quit"] = True
            break
        if "error" in turn:  # the model or the template failed: nothing later would be meaningful
            transcript["error"] = f"turn {index}: {turn['error']}"
            break
    transcript["first_prompt"] = recorder.first_prompt
    transcript["first_constraint"] = recorder.first_constraint
    transcript["seconds"] = round(time.perf_counter() - started, 3)
    return transcript


def executed_calls(transcript: dict) -> list[list[list[dict]]]:
    """Per turn, per step: the calls that ran in the environment ({"name", "arguments"}). Calls
    the agent refused (unknown tool, arguments against the schema, unparsable) never ran."""
    return [[[{"name": call["name"], "arguments": call["arguments"]} for call in step["calls"] if call["ran"]]
             for step in turn["steps"]]
            for turn in transcript["turns"]]
