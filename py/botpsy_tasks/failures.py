"""Why a task was not done: its failure classes (docs/tasks.md), read from its record and its
checks' verdicts. A task may have several; a task done has none."""

from __future__ import annotations

from .session import REPEATED_CALLS

CLASSES = ("error", "invented_tool", "repeated_call", "no_final_words", "unwanted_acting_call", "no_call",
           "wrong_tool", "wrong_arguments", "wrong_number", "wrong_words", "wrong_stored_data", "not_asked")


def _repeated(turn: dict) -> bool:
    """The loop stopped a repeat (its error event), or one step's calls ran again in the next."""
    if any(REPEATED_CALLS in error for error in turn.get("errors", [])):
        return True
    if turn.get("final_event", {}).get("answered_from_results"):
        return True
    by_step: dict[int, list] = {}
    for call in turn.get("calls", []):
        by_step.setdefault(call.get("step", 0), []).append((call["name"], repr(call.get("arguments"))))
    steps = sorted(by_step)
    return any(by_step[a] == by_step[b] for a, b in zip(steps, steps[1:]) if b == a + 1)


def failure_classes(record: dict, verdicts: list[dict]) -> list[str]:
    failed = [verdict["check"] for verdict in verdicts if not verdict["passed"]]
    if not failed:
        return []
    if record.get("error"):
        return ["error"]
    turns = record.get("turns", [])
    calls = [call for turn in turns for call in turn.get("calls", [])]
    found = set()
    if any(not call.get("offered") for call in calls):
        found.add("invented_tool")
    if any(_repeated(turn) for turn in turns):
        found.add("repeated_call")
    if any(not (turn.get("answer") or "").strip() for turn in turns):
        found.add("no_final_words")
    if any(call.get("refused") in ("InvalidArguments", "MalformedToolCall") for call in calls):
        found.add("wrong_arguments")
    answer_has_words = bool(turns and (turns[-1].get("answer") or "").strip())
    for check in failed:
        kind = next(iter(check))
        if kind == "acting_calls":
            found.add("unwanted_acting_call")
        elif kind == "called":
            ran = [call for call in calls if call.get("ran")]
            if not ran:
                found.add("no_call")
            elif any(call["name"] == check["called"] for call in ran):
                found.add("wrong_arguments")
            else:
                found.add("wrong_tool")
        elif kind == "not_called":
            found.add("wrong_tool")
        elif kind == "answer_number" and answer_has_words:
            found.add("wrong_number")
        elif kind in ("answer_contains", "answer_lacks") and answer_has_words:
            found.add("wrong_words")
        elif kind == "stored":
            found.add("wrong_stored_data")
        elif kind == "asked":
            found.add("not_asked")
    return [name for name in CLASSES if name in found]
