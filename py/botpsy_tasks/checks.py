"""The checks a task makes on its run (docs/tasks.md): each one's problems as written in a task
file, and its verdict on a run's record (session.py writes the record).

A check is an object whose first key names its kind; the other keys are its options. A verdict is
{"check": the check as written, "passed": bool, "why": a sentence}.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from .conditions import condition_problem, contains, describe, holds
from .numbers import default_tolerance, numbers_in

STORED_COLLECTIONS = ("notes", "todos", "events")
ANSWER_KINDS = ("answer_number", "answer_contains", "answer_lacks", "answer_words")
CALL_KINDS = ("called", "not_called", "acting_calls", "asked")
KINDS = ANSWER_KINDS + ("stored",) + CALL_KINDS
# Options each kind takes besides its own key.
OPTIONS = {"answer_number": {"tolerance", "turn"}, "answer_contains": {"turn"}, "answer_lacks": {"turn"},
           "answer_words": {"turn"}, "stored": {"where", "exists", "count"}, "called": {"with", "turn"},
           "not_called": {"turn"}, "acting_calls": {"turn"}, "asked": {"turn"}}


def _texts_problem(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return None
    if isinstance(value, list) and value and all(isinstance(item, str) and item for item in value):
        return None
    return f"must be non-empty text or a list of non-empty texts, got {json.dumps(value, ensure_ascii=False)}"


def _names_problem(value: Any, known: set[str], allow_empty: bool = False) -> str | None:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names) \
            or (not names and not allow_empty):
        return f"must be a tool's name or a list of names, got {json.dumps(value)}"
    unknown = [name for name in names if name not in known]
    if unknown:
        return f"no tool is named {unknown[0]!r}"
    return None


def _conditions_problem(value: Any, option: str) -> tuple[str, str] | None:
    if not isinstance(value, dict):
        return option, "must be an object of field: condition"
    for field, condition in value.items():
        problem = condition_problem(condition)
        if problem:
            return f"{option}.{field}", problem
    return None


def check_problem(check: Any, turns: int, known_tools: set[str]) -> tuple[str, str] | None:
    """(field within the check, what is wrong) for a check as written in a task, or None."""
    if not isinstance(check, dict) or not check:
        return "", f"must be an object whose first key is one of {', '.join(KINDS)}"
    kind = next(iter(check))
    if kind not in KINDS:
        return kind, f"unknown check; the kinds are {', '.join(KINDS)}"
    unknown = [key for key in list(check)[1:] if key not in OPTIONS[kind]]
    if unknown:
        return unknown[0], f"{kind} takes no option {unknown[0]!r} (its options: {', '.join(sorted(OPTIONS[kind]))})"
    value = check[kind]
    if "turn" in check and not (isinstance(check["turn"], int) and not isinstance(check["turn"], bool)
                                and 1 <= check["turn"] <= turns):
        return "turn", f"must be a turn's number, 1 to {turns}, got {json.dumps(check['turn'])}"
    problem = None
    if kind == "answer_number":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            problem = f"must be a number, got {json.dumps(value)}"
        elif "tolerance" in check and not (isinstance(check["tolerance"], (int, float))
                                           and not isinstance(check["tolerance"], bool) and check["tolerance"] >= 0):
            return "tolerance", f"must be a number of at least 0, got {json.dumps(check['tolerance'])}"
    elif kind in ("answer_contains", "answer_lacks"):
        problem = _texts_problem(value)
    elif kind == "answer_words":
        problem = None if value is True else "takes true"
    elif kind == "stored":
        if value not in STORED_COLLECTIONS:
            problem = f"must be one of {', '.join(STORED_COLLECTIONS)}, got {json.dumps(value)}"
        elif "where" in check and _conditions_problem(check["where"], "where"):
            return _conditions_problem(check["where"], "where")
        elif "exists" in check and not isinstance(check["exists"], bool):
            return "exists", "takes true or false"
        elif "count" in check and not (isinstance(check["count"], int) and not isinstance(check["count"], bool)
                                       and check["count"] >= 0):
            return "count", f"must be a whole number of at least 0, got {json.dumps(check['count'])}"
        elif "count" in check and "exists" in check:
            return "count", "give count or exists, not both"
    elif kind in ("called", "asked"):
        problem = (f"must be one tool's name, got {json.dumps(value)}" if not isinstance(value, str)
                   else _names_problem(value, known_tools))
        if problem is None and kind == "called" and "with" in check:
            return _conditions_problem(check["with"], "with")
    elif kind == "not_called":
        problem = _names_problem(value, known_tools)
    elif kind == "acting_calls":
        problem = (f"must be a list of tool names, got {json.dumps(value)}" if not isinstance(value, list)
                   else _names_problem(value, known_tools, allow_empty=True))
    return (kind, problem) if problem else None


def _verdict(check: dict, passed: bool, why: str) -> dict:
    return {"check": check, "passed": bool(passed), "why": why}


def _turns(record: dict, check: dict) -> list[dict]:
    turns = record.get("turns", [])
    return [turns[check["turn"] - 1]] if "turn" in check and check["turn"] <= len(turns) else (
        [] if "turn" in check else turns)


def _answer(record: dict, check: dict) -> str | None:
    turns = record.get("turns", [])
    index = check.get("turn", len(turns)) - 1
    if not turns or index >= len(turns) or index < 0:
        return None
    return turns[index].get("answer") or ""


def _call_text(call: dict) -> str:
    return f"{call['name']}({json.dumps(call.get('arguments'), ensure_ascii=False)})"


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def judge_answer(check: dict, record: dict) -> dict:
    kind = next(iter(check))
    answer = _answer(record, check)
    if answer is None:
        return _verdict(check, False, "the run has no such turn (it stopped before)")
    shown = f"the answer {_short(answer)!r}" if answer.strip() else "the answer is empty"
    if kind == "answer_words":
        return _verdict(check, bool(answer.strip()), shown)
    if kind == "answer_contains":
        return _verdict(check, contains(answer, check[kind]), f"{shown} ({describe(check[kind])} wanted)")
    if kind == "answer_lacks":
        return _verdict(check, not contains(answer, check[kind]), f"{shown} (none of {check[kind]!r} wanted)")
    wanted = check[kind]
    tolerance = check.get("tolerance", default_tolerance(wanted))
    found = numbers_in(answer)
    near = [number for number in found if abs(number - wanted) <= tolerance + 1e-12]
    return _verdict(check, bool(near), f"{shown}: numbers {found[:8]}, {wanted} ± {tolerance:g} wanted")


def judge_stored(check: dict, record: dict, zone: datetime.tzinfo) -> dict:
    collection = check["stored"]
    records = record.get("stored", {}).get(collection, [])
    where = check.get("where", {})
    matching = [item for item in records if all(holds(item.get(field), condition, zone)
                                                for field, condition in where.items())]
    wanted = (f"{collection} where " + "; ".join(f"{field} {describe(condition)}" for field, condition in where.items())
              if where else collection)
    listed = "; ".join(_short(json.dumps({key: value for key, value in item.items() if key != "created"},
                                         ensure_ascii=False), 120) for item in records[:5]) or "none"
    if "count" in check:
        return _verdict(check, len(matching) == check["count"],
                        f"{len(matching)} of {len(records)} {wanted}, {check['count']} wanted; stored: {listed}")
    if check.get("exists", True):
        return _verdict(check, bool(matching), f"{len(matching)} of {len(records)} {wanted}; stored: {listed}")
    return _verdict(check, not matching, f"{len(matching)} of {len(records)} {wanted}, none wanted; stored: {listed}")


def acting(call: dict) -> bool:
    """A call that acted or asked to: a valid call of a tool with side effects (approved or denied)."""
    return bool(call.get("acting")) and bool(call.get("asked") or call.get("ran"))


def judge_calls(check: dict, record: dict, zone: datetime.tzinfo) -> dict:
    kind = next(iter(check))
    calls = [call for turn in _turns(record, check) for call in turn.get("calls", [])]
    every = ", ".join(_short(_call_text(call), 100) for call in calls) or "no call"
    if kind == "called":
        name, conditions = check["called"], check.get("with", {})
        ran = [call for call in calls if call["name"] == name and call.get("ran")]
        matching = [call for call in ran if isinstance(call.get("arguments"), dict) and all(
            holds(call["arguments"].get(field), condition, zone)
            for field, condition in conditions.items())]
        wanted = name + (" with " + "; ".join(f"{field} {describe(condition)}" for field, condition in conditions.items())
                         if conditions else "")
        return _verdict(check, bool(matching), f"{wanted} wanted; calls: {every}")
    if kind == "not_called":
        names = [check[kind]] if isinstance(check[kind], str) else check[kind]
        made = [call for call in calls if call["name"] in names]
        return _verdict(check, not made, f"none of {', '.join(names)} wanted; calls: {every}")
    if kind == "asked":
        asked = [call for call in calls if call["name"] == check[kind] and call.get("asked")]
        return _verdict(check, bool(asked), f"a confirmation for {check[kind]} wanted; calls: {every}")
    allowed = set(check[kind])
    acted = [call for call in calls if acting(call)]
    unwanted = [call for call in acted if call["name"] not in allowed]
    return _verdict(check, not unwanted,
                    (f"acting calls not expected: {', '.join(_short(_call_text(call), 100) for call in unwanted)}"
                     if unwanted else f"acting calls {', '.join(call['name'] for call in acted) or 'none'}; "
                                      f"expected at most {', '.join(sorted(allowed)) or 'none'}"))


def judge(checks: list[dict], record: dict, zone: datetime.tzinfo) -> list[dict]:
    """Every check's verdict on the record. A run that failed (record["error"]) fails them all."""
    verdicts = []
    for check in checks:
        kind = next(iter(check))
        if record.get("error"):
            verdicts.append(_verdict(check, False, f"the run failed: {record['error']}"))
        elif kind in ANSWER_KINDS:
            verdicts.append(judge_answer(check, record))
        elif kind == "stored":
            verdicts.append(judge_stored(check, record, zone))
        else:
            verdicts.append(judge_calls(check, record, zone))
    return verdicts
