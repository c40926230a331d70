"""Reading the dates and times that people and models write, in a given time zone.

Accepted: ISO 8601 ("2026-11-30", "2026-11-30T14:00", "2026-11-30 14:00+01:00",
"...Z"), a bare time ("14:30", taken as today), "now", "today", "tomorrow",
"yesterday" and weekday names ("friday": the next one, today included;
"next friday": strictly after today).
"""

from __future__ import annotations

import datetime

from botpsy_agent.tooling import ToolError

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_RELATIVE_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}
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


def parse_datetime(text: str, zone: datetime.tzinfo, now: datetime.datetime,
                   what: str = "time") -> datetime.datetime:
    """An aware datetime; naive input is read in `zone`, a date alone means its midnight."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError(f"the {what} is empty; {FORMAT_HINT}")
    cleaned = " ".join(text.strip().lower().split())
    local_now = now.astimezone(zone)
    if cleaned == "now":
        return local_now
    day = _day_word(cleaned, local_now.date())
    if day is not None:
        return datetime.datetime.combine(day, datetime.time(), zone)
    if cleaned.endswith("z"):
        cleaned = cleaned[:-1] + "+00:00"
    try:
        if ":" in cleaned and "-" not in cleaned[:5] and len(cleaned) <= 8:
            moment = datetime.datetime.combine(local_now.date(), datetime.time.fromisoformat(cleaned))
        else:
            moment = datetime.datetime.fromisoformat(cleaned.upper())
    except ValueError:
        raise ToolError(f"could not read {text!r} as a {what}; {FORMAT_HINT}") from None
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment


def parse_date(text: str, zone: datetime.tzinfo, now: datetime.datetime,
               what: str = "date") -> datetime.date:
    """A calendar date (a time part, if given, is ignored)."""
    return parse_datetime(text, zone, now, what).date()


def has_time_part(text: str) -> bool:
    """True when the text names a time of day, not just a day."""
    return ":" in text or text.strip().lower() == "now"


def describe(moment: datetime.datetime) -> dict:
    """The parts of a moment a person (or model) wants to read back."""
    offset = moment.strftime("%z")
    return {"datetime": moment.isoformat(timespec="minutes" if moment.second == 0 else "seconds"),
            "date": moment.date().isoformat(), "time": moment.strftime("%H:%M"),
            "weekday": moment.strftime("%A"), "utc_offset": f"{offset[:3]}:{offset[3:]}" if offset else "",
            "timezone": getattr(moment.tzinfo, "key", None) or moment.tzname() or "UTC"}
