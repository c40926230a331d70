"""Conditions on one field of a stored record or of a call's arguments (docs/tasks.md):

    "dentist" / ["dentist", "teeth"]     the field, as text, contains it (or one of them); case ignored
    3, true, false, null                 the field equals it
    {"contains": text or [texts]}        as a string
    {"equals": value}
    {"date": "2026-12-11"}               a date or date-time on that day in the task's time zone
    {"time": "15:00"}                    a date-time at that local hour and minute
    {"absent": true}                     missing or empty

An object may combine several ({"date": ..., "time": ...}): all must hold.
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

CONDITION_KEYS = ("contains", "equals", "date", "time", "absent")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}")


def condition_problem(condition: Any) -> str | None:
    """What is wrong with a condition as written in a task, or None."""
    if isinstance(condition, str) or condition is None or isinstance(condition, (bool, int, float)):
        return None
    if isinstance(condition, list):
        if not condition or not all(isinstance(item, str) and item for item in condition):
            return "a list of alternatives must hold non-empty strings"
        return None
    if not isinstance(condition, dict) or not condition:
        return f"must be text, a list of texts, a number, true/false/null or an object of {', '.join(CONDITION_KEYS)}"
    unknown = [key for key in condition if key not in CONDITION_KEYS]
    if unknown:
        return f"unknown condition {unknown[0]!r}; known: {', '.join(CONDITION_KEYS)}"
    if "contains" in condition and condition_problem(condition["contains"]) is not None \
            or "contains" in condition and not isinstance(condition["contains"], (str, list)):
        return "contains takes text or a list of texts"
    if "date" in condition and not (isinstance(condition["date"], str) and _DATE.fullmatch(condition["date"])):
        return f"date must be YYYY-MM-DD, got {condition['date']!r}"
    if "time" in condition and not (isinstance(condition["time"], str) and _TIME.fullmatch(condition["time"])):
        return f"time must be HH:MM, got {condition['time']!r}"
    if "absent" in condition and condition["absent"] is not True:
        return "absent takes true"
    return None


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def contains(value: Any, wanted: str | list[str]) -> bool:
    text = as_text(value).casefold()
    return any(option.casefold() in text for option in ([wanted] if isinstance(wanted, str) else wanted))


def _local(value: Any, zone: datetime.tzinfo) -> datetime.datetime | datetime.date | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if len(value) == 10:  # a date alone
        return moment.date()
    return moment.astimezone(zone) if moment.tzinfo else moment


def _equal(value: Any, wanted: Any) -> bool:
    """JSON equality: true is not 1, 2 is 2.0."""
    return value == wanted and isinstance(value, bool) == isinstance(wanted, bool)


def holds(value: Any, condition: Any, zone: datetime.tzinfo) -> bool:
    """Whether a field's value (None when missing) meets the condition."""
    if isinstance(condition, (str, list)):
        return value is not None and contains(value, condition)
    if not isinstance(condition, dict):
        return _equal(value, condition)
    checks = []
    if "contains" in condition:
        checks.append(value is not None and contains(value, condition["contains"]))
    if "equals" in condition:
        checks.append(_equal(value, condition["equals"]))
    if "absent" in condition:
        checks.append(value in (None, "", [], {}))
    if "date" in condition or "time" in condition:
        moment = _local(value, zone)
        if "date" in condition:
            day = moment.date() if isinstance(moment, datetime.datetime) else moment
            checks.append(day is not None and day.isoformat() == condition["date"])
        if "time" in condition:
            checks.append(isinstance(moment, datetime.datetime)
                          and moment.strftime("%H:%M") == condition["time"])
    return all(checks)


def describe(condition: Any) -> str:
    """A condition as a short phrase for a verdict's reason."""
    if isinstance(condition, str):
        return f"contains {condition!r}"
    if isinstance(condition, list):
        return "contains one of " + ", ".join(map(repr, condition))
    if not isinstance(condition, dict):
        return f"equals {json.dumps(condition)}"
    return " and ".join(f"{key} {json.dumps(value, ensure_ascii=False)}" for key, value in condition.items())
