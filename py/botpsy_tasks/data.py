"""The task files (docs/tasks.md): read, every line checked, then selected.

A bad line stops the run before any model loads, with `FILE:LINE: field: what is wrong`.
Defaults (`now`, `timezone`) are written into each task, so the agent worker, the records
file and the task's digest all see the same values.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .checks import check_problem

TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
DEFAULT_NOW = "2026-12-07T10:00:00"  # a Monday
DEFAULT_TIMEZONE = "Europe/London"
FIELDS = ("id", "category", "turns", "checks", "now", "timezone", "setup", "settings", "approve", "note")
SETUP_TOOLS = {"notes": "notes_create", "todos": "todo_add", "events": "calendar_add_event"}
SETTINGS = ("enabledTools", "alsoEnabled", "allowNetwork", "thinking")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_CATEGORY = re.compile(r"[a-z0-9][a-z0-9_-]*")
_NOW = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?")
# What a run depends on: everything but the checks and the note (a changed check is judged again,
# never run again: --resume).
RUN_FIELDS = ("turns", "now", "timezone", "setup", "settings", "approve")


class TaskFileError(ValueError):
    """A task file that cannot be used; the message names the file, the line and the field."""


@dataclass(frozen=True)
class Task:
    data: dict          # as written, with now and timezone filled in: what the agent worker gets
    file: str
    line: int

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def category(self) -> str:
        return self.data["category"]

    @property
    def checks(self) -> list[dict]:
        """The task's checks, plus {"acting_calls": approve} when it has no acting_calls check."""
        checks = list(self.data["checks"])
        if not any(next(iter(check)) == "acting_calls" for check in checks):
            checks.append({"acting_calls": list(self.data.get("approve", []))})
        return checks

    def run_digest(self) -> str:
        """Identifies what the run depends on (not the checks): a stored run of the same digest stands."""
        text = json.dumps({key: self.data.get(key) for key in RUN_FIELDS}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def zone(self) -> datetime.tzinfo:
        from botpsy_agent.tools.timezones import get_zone

        return get_zone(self.data["timezone"])


@lru_cache(maxsize=1)
def builtin_tools_by_name() -> dict:
    from botpsy_agent.tools import builtin_tools

    return {tool.name: tool for tool in builtin_tools()}


def default_task_files() -> list[Path]:
    return sorted(TASKS_DIR.glob("*.jsonl"))


def _problem(data: dict) -> tuple[str, str] | None:
    """(field, what is wrong) for one parsed line, or None."""
    from botpsy_agent.tools.timezones import get_zone
    from botpsy_agent.tooling import ToolError
    from botpsy_agent.validation import check_arguments

    tools = builtin_tools_by_name()
    unknown = [key for key in data if key not in FIELDS]
    if unknown:
        return unknown[0], f"unknown field; the fields are {', '.join(FIELDS)}"
    for key in ("id", "category", "turns", "checks"):
        if key not in data:
            return key, "missing (every task needs id, category, turns and checks)"
    if not isinstance(data["id"], str) or not _ID.fullmatch(data["id"]):
        return "id", f"must be letters, digits, '-', '_' or '.', got {json.dumps(data['id'])}"
    if not isinstance(data["category"], str) or not _CATEGORY.fullmatch(data["category"]):
        return "category", f"must be lowercase letters, digits, '_' or '-', got {json.dumps(data['category'])}"
    turns = data["turns"]
    if not isinstance(turns, list) or not turns:
        return "turns", "must be a list of the person's messages (at least one)"
    for index, turn in enumerate(turns):
        if not isinstance(turn, str) or not turn.strip():
            return f"turns[{index}]", "must be a non-empty message"
    if not isinstance(data.get("now"), str) or not _NOW.fullmatch(data["now"]):
        return "now", f"must be a local time YYYY-MM-DDTHH:MM[:SS], got {json.dumps(data.get('now'))}"
    try:
        datetime.datetime.fromisoformat(data["now"])
    except ValueError as error:
        return "now", str(error)
    if not isinstance(data.get("timezone"), str):
        return "timezone", f"must be an IANA zone name, got {json.dumps(data.get('timezone'))}"
    try:
        get_zone(data["timezone"])
    except ToolError as error:
        return "timezone", str(error)
    approve = data.get("approve", [])
    if not isinstance(approve, list) or not all(isinstance(name, str) for name in approve):
        return "approve", "must be a list of tool names"
    for name in approve:
        if name not in tools:
            return "approve", f"no tool is named {name!r}"
        if not tools[name].side_effects:
            return "approve", f"{name} does not act (no side effects): the gate never asks about it"
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        return "settings", f"must be an object of {', '.join(SETTINGS)}"
    for key, value in settings.items():
        if key not in SETTINGS:
            return f"settings.{key}", f"unknown setting; the settings are {', '.join(SETTINGS)}"
        if key in ("enabledTools", "alsoEnabled"):
            if (value is None and key == "alsoEnabled") or \
                    (value is not None and (not isinstance(value, list) or not all(isinstance(n, str) for n in value))):
                return f"settings.{key}", "must be a list of tool names" + (" or null" if key == "enabledTools" else "")
            missing = [name for name in value or [] if name not in tools]
            if missing:
                return f"settings.{key}", f"no tool is named {missing[0]!r}"
        elif not isinstance(value, bool):
            return f"settings.{key}", "takes true or false"
    problem = _setup_problem(data.get("setup", {}), tools, check_arguments)
    if problem:
        return problem
    checks = data["checks"]
    if not isinstance(checks, list) or not checks:
        return "checks", "must be a list of at least one check"
    for index, check in enumerate(checks):
        problem = check_problem(check, len(turns), set(tools))
        if problem:
            field, message = problem
            return f"checks[{index}]" + (f".{field}" if field else ""), message
    if "note" in data and not isinstance(data["note"], str):
        return "note", "must be text"
    return None


def _setup_problem(setup, tools: dict, check_arguments) -> tuple[str, str] | None:
    if not isinstance(setup, dict):
        return "setup", "must be an object of notes, todos, events, files"
    for key, entries in setup.items():
        if key not in (*SETUP_TOOLS, "files"):
            return f"setup.{key}", "unknown; setup takes notes, todos, events, files"
        if not isinstance(entries, list):
            return f"setup.{key}", "must be a list"
        for index, entry in enumerate(entries):
            where = f"setup.{key}[{index}]"
            if not isinstance(entry, dict):
                return where, "must be an object"
            if key == "files":
                unknown = [field for field in entry if field not in ("name", "text", "type")]
                if unknown:
                    return f"{where}.{unknown[0]}", "unknown; a file has name, text and type"
                for field in ("name", "text"):
                    if not isinstance(entry.get(field), str) or (field == "name" and not entry[field].strip()):
                        return f"{where}.{field}", "must be text (a name must not be empty)"
                if "type" in entry and not isinstance(entry["type"], str):
                    return f"{where}.type", "must be a media type such as text/csv"
                continue
            arguments = dict(entry)
            if key == "todos" and "done" in arguments:
                if not isinstance(arguments.pop("done"), bool):
                    return f"{where}.done", "takes true or false"
            issues = check_arguments(arguments, tools[SETUP_TOOLS[key]].parameters)
            if issues:
                return where, f"as arguments of {SETUP_TOOLS[key]}: {issues[0].removeprefix('arguments')}"
    return None


def read_task_file(path: Path) -> list[Task]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise TaskFileError(f"{path}: cannot read it: {error.strerror or error}") from None
    tasks = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaskFileError(f"{path}:{number}: not JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(data, dict):
            raise TaskFileError(f"{path}:{number}: must be one JSON object per line")
        data = {**data, "now": data.get("now", DEFAULT_NOW), "timezone": data.get("timezone", DEFAULT_TIMEZONE)}
        problem = _problem(data)
        if problem:
            field, message = problem
            task_id = f" (task {data['id']})" if isinstance(data.get("id"), str) else ""
            raise TaskFileError(f"{path}:{number}{task_id}: {field}: {message}")
        tasks.append(Task(_with_enabled_tools(data), str(path), number))
    return tasks


def _with_enabled_tools(data: dict) -> dict:
    """settings.alsoEnabled written out as enabledTools (the page's default set, or the task's
    own enabledTools, plus these): what the agent worker and the task's digest see."""
    settings = dict(data.get("settings", {}))
    also = settings.pop("alsoEnabled", None)
    if also is None:
        return data
    from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS

    base = settings.get("enabledTools") or list(DEFAULT_ENABLED_TOOLS)
    settings["enabledTools"] = base + [name for name in also if name not in base]
    return {**data, "settings": settings}


def load_tasks(paths: list[Path] | None = None) -> list[Task]:
    """Every task of the files (default: tasks/*.jsonl), in order; ids unique across them."""
    paths = list(paths) if paths else default_task_files()
    if not paths:
        raise TaskFileError(f"no task files: {TASKS_DIR} holds no *.jsonl and no --tasks was given")
    tasks, seen = [], {}
    for path in paths:
        for task in read_task_file(path):
            if task.id in seen:
                raise TaskFileError(f"{task.file}:{task.line}: id: {task.id!r} is already the id of the task at "
                                    f"{seen[task.id]}")
            seen[task.id] = f"{task.file}:{task.line}"
            tasks.append(task)
    return tasks


def select_tasks(tasks: list[Task], categories: list[str] | None = None, limit: int | None = None) -> list[Task]:
    """The tasks of the named categories (all by default), the first `limit` of each in file order."""
    known = list(dict.fromkeys(task.category for task in tasks))
    if categories:
        unknown = [category for category in categories if category not in known]
        if unknown:
            raise TaskFileError(f"no task has category {unknown[0]!r}; the categories are {', '.join(known)}")
    chosen, counts = [], {}
    for task in tasks:
        if categories and task.category not in categories:
            continue
        counts[task.category] = counts.get(task.category, 0) + 1
        if limit is None or counts[task.category] <= limit:
            chosen.append(task)
    return chosen
