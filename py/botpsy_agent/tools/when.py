"""Reading the dates and times that people and models write, in a given time zone.

Accepted: ISO 8601 ("2026-11-30", "2026-11-30T14:00", "2026-11-30 14:00+01:00",
"...Z"), a bare time ("14:30", "9:05", "9am", "7:30 pm": today), "now", "today",
"tomorrow", "yesterday", weekday names ("friday": the next one, today included;
"next friday": strictly after today), and a day followed by a time
("tomorrow 9am", "friday at 14:00", "2026-12-01 9:30").
"""

from __future__ import annotations

import datetime
import re

from botpsy_agent.tooling import ToolError

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_RELATIVE_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}
_CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$")
_DAY_THEN_TIME = re.compile(r"^(.+?)(?:\s+at|\s|t)\s*(\d{1,2}(?::\d{2}){0,2}\s*(?:am|pm|a\.m\.|p\.m\.)?)$")
FORMAT_HINT = "use ISO format such as 2026-11-30 or 2026-11-30T14:00, or today/tomorrow/a weekday"


def _day_word(word: str, today: datetime.date) -> datetime.date | None:
    if word in _RELATIVE_DAYS:
        return today + datetime.timedelta(days=_RELATIVE_DAYS[word])
    name = word.removeprefix("next ")
    if name in _WEEKDAYS:
        ahead = (_WEEKDAYS.index(name) - today.weekday()) % 7
        if ahead == 0 and name != word:
            ahead = 7    # "next friday" said on a Friday: a week later
        return today + datetime.timedelta(days=ahead)
    return None


def _clock(text: str) -> datetime.time | None:
    """A time of day from "14:30", "9:05", "9am", "7:30 pm", "12am"; None if it is not one."""
    match = _CLOCK.match(text.strip())
    if not match or (match.group(2) is None and match.group(4) is None):
        return None          # a bare number is not a time
    hour, minute, second = int(match.group(1)), int(match.group(2) or 0), int(match.group(3) or 0)
    meridiem = (match.group(4) or "").replace(".", "")
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem == "pm" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    return datetime.time(hour, minute, second)


def _day(text: str, today: datetime.date) -> datetime.date | None:
    found = _day_word(text, today)
    if found is not None:
        return found
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


def parse_datetime(text: str, zone: datetime.tzinfo, now: datetime.datetime,
                   what: str = "time") -> datetime.datetime:
    """An aware datetime; naive input is read in `zone`, a date alone means its midnight."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError(f"the {what} is empty; {FORMAT_HINT}")
    cleaned = " ".join(text.strip().lower().split())
    local_now = now.astimezone(zone)
    today = local_now.date()
    if cleaned == "now":
        return local_now
    day = _day(cleaned, today)
    if day is not None:
        return datetime.datetime.combine(day, datetime.time(), zone)
    clock = _clock(cleaned)
    if clock is not None:
        return datetime.datetime.combine(today, clock, zone)
    split = _DAY_THEN_TIME.match(cleaned)
    if split:
        day, clock = _day(split.group(1).strip(), today), _clock(split.group(2))
        if day is not None and clock is not None:
            return datetime.datetime.combine(day, clock, zone)
    try:
        iso = cleaned[:-1] + "+00:00" if cleaned.endswith("z") else cleaned
        moment = datetime.datetime.fromisoformat(iso.upper())
    except ValueError:
        raise ToolError(f"could not read {text!r} as a {what}; {FORMAT_HINT}") from None
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment


def has_time_part(text: str) -> bool:
    """True when the text names a time of day, not just a day."""
    cleaned = " ".join(text.strip().lower().split())
    return cleaned == "now" or ":" in cleaned or bool(re.search(r"\d\s*(am|pm|a\.m\.|p\.m\.)$", cleaned))


def describe(moment: datetime.datetime) -> dict:
    """The parts of a moment a person (or model) wants to read back."""
    offset = moment.strftime("%z")
    return {"datetime": moment.isoformat(timespec="minutes" if moment.second == 0 else "seconds"),
            "date": moment.date().isoformat(), "time": moment.strftime("%H:%M"),
            "weekday": moment.strftime("%A"), "utc_offset": f"{offset[:3]}:{offset[3:]}" if offset else "",
            "timezone": getattr(moment.tzinfo, "key", None) or moment.tzname() or "UTC"}
