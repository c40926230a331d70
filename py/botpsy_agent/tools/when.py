"""Reading the dates and times that people and models write, in a given time zone.

Accepted: ISO 8601 ("2026-11-30", "2026-11-30T14:00", "2026-11-30 14:00+01:00",
"...Z"), a bare time ("14:30", "9:05", "9am", "7:30 pm": today), "now", "today",
"tomorrow", "yesterday", weekday names ("friday": the next one, today included;
"next friday": strictly after today; before a date, "friday 11 december", it must be that date's
weekday), and a day followed by a time
("tomorrow 9am", "friday at 14:00", "2026-12-01 9:30") or a time followed by its day
("3pm on friday"). Days by name: "december 19th", "19 dec", "the 3rd of march 2027" (the
coming one when no year is said). Words for times: "noon", "midnight", and parts of a day ("tomorrow
morning" 09:00, "friday afternoon" 15:00, "this evening" / "tonight" 19:00), also with a clock
time, which wins and is read in that part of the day ("tomorrow morning at 8" 08:00, "tonight 7"
19:00, "friday at 8 in the evening" 20:00). From now: "in 2 hours", "in ten minutes", "in half an
hour", "in 3 days".
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable

from botpsy_agent.tooling import ToolError

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_RELATIVE_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}
_CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$")
_DAY_THEN_TIME = re.compile(r"^(.+?)(?:\s+at|\s|t)\s*(\d{1,2}(?::\d{2}){0,2}\s*(?:am|pm|a\.m\.|p\.m\.)?)$")
_MONTHS = {name: index for index, name in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_ORDINAL = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_MONTH_DAY = re.compile(rf"^{_MONTH}\s+(?:the\s+)?{_ORDINAL}{_YEAR}$")
_DAY_MONTH = re.compile(rf"^(?:the\s+)?{_ORDINAL}\s+(?:of\s+)?{_MONTH}{_YEAR}$")
_DAY_THEN_PART = re.compile(r"^(.+?)\s+(?:at\s+)?(noon|midday|midnight|morning|afternoon|evening|night)$")
_TIME_THEN_DAY = re.compile(r"^(.+?)\s+(?:on\s+)?(today|tomorrow|yesterday|(?:next\s+)?[a-z]+day|\d{4}-\d{2}-\d{2}|"
                            r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[a-z]+\.?(?:,?\s+\d{4})?|[a-z]+\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?)$")
_NAMED_TIMES = {"noon": datetime.time(12), "midday": datetime.time(12), "midnight": datetime.time(0),
                "morning": datetime.time(9), "afternoon": datetime.time(15), "evening": datetime.time(19),
                "night": datetime.time(21)}
# A part of the day said with a clock time: "tomorrow morning at 8", "friday at 8 in the evening", "tonight 7pm".
_PART_OF_DAY = re.compile(r"\b(?:(?:in\s+the|this)\s+)?(morning|afternoon|evening|night)\b|\b(tonight)\b")
_THIS = {"this morning": "today morning", "this afternoon": "today afternoon", "this evening": "today evening",
         "tonight": "today evening"}
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
                 "thirty": 30, "forty-five": 45, "forty five": 45}
_FROM_NOW = re.compile(r"^in\s+(half an hour|(\d+(?:\.\d+)?|[a-z]+(?:[ -][a-z]+)?)\s+(minute|min|hour|hr|day|week)s?)$")
_UNIT_MINUTES = {"minute": 1, "min": 1, "hour": 60, "hr": 60, "day": 1440, "week": 10080}
FORMAT_HINT = ("use ISO format such as 2026-11-30 or 2026-11-30T14:00, or the person's words: today, tomorrow 9am, "
               "friday afternoon, in 2 hours")


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


def _from_now(text: str, local_now: datetime.datetime) -> datetime.datetime | None:
    """"in 2 hours", "in ten minutes", "in half an hour": that long after now; None otherwise."""
    match = _FROM_NOW.match(text)
    if not match:
        return None
    if match.group(1) == "half an hour":
        return local_now + datetime.timedelta(minutes=30)
    amount = match.group(2)
    count = _NUMBER_WORDS.get(amount) if not amount[0].isdigit() else float(amount)
    if count is None:
        return None
    later = local_now + datetime.timedelta(minutes=count * _UNIT_MINUTES[match.group(3)])
    if match.group(3) in ("day", "week"):  # "in 3 days": that day, no time of day
        return datetime.datetime.combine(later.date(), datetime.time(), local_now.tzinfo)
    return later


def _clock(text: str) -> datetime.time | None:
    """A time of day from "14:30", "9:05", "9am", "7:30 pm", "12am", "noon", "evening"; None if it is not one."""
    if text.strip() in _NAMED_TIMES:
        return _NAMED_TIMES[text.strip()]
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


def _month_day(text: str, today: datetime.date) -> datetime.date | None:
    """"december 19th", "19 dec", "the 19th of december 2026", "mar 3": that day, this year unless
    named (a day already past this year is next year's: people mean the coming one)."""
    match = _MONTH_DAY.match(text) or _DAY_MONTH.match(text)
    if not match:
        return None
    month = _MONTHS.get(match.group("month")[:3])
    if month is None:
        return None
    year = int(match.group("year")) if match.group("year") else today.year
    try:
        day = datetime.date(year, month, int(match.group("day")))
    except ValueError:
        return None
    if not match.group("year") and day < today:
        try:
            day = day.replace(year=year + 1)
        except ValueError:
            return None
    return day


_WEEKDAY_THEN_DATE = re.compile(rf"^(?:on\s+)?({'|'.join(_WEEKDAYS)}),?\s+(?:the\s+)?(\S.*)$")


def _named_weekday_date(text: str, today: datetime.date) -> datetime.date | None:
    """"friday 11 december 2026", "Monday, 2026-12-07": the date, when its weekday is the one
    named. A weekday that does not match its date is refused with both readings, so the caller can
    write the one it meant (a model mixes the person's "friday" with today's date)."""
    match = _WEEKDAY_THEN_DATE.match(text)
    if not match:
        return None
    named, date = match.group(1), _day(match.group(2), today)
    if date is None or date.weekday() == _WEEKDAYS.index(named):
        return date
    coming = _day_word(named, today)
    raise ToolError(f"{date.day} {date:%B %Y} is a {date:%A}, not a {named.title()}: write the date alone "
                    f"({date.isoformat()}), or the day alone ({named}, the coming one: {coming.isoformat()})")


def _day(text: str, today: datetime.date) -> datetime.date | None:
    found = _named_weekday_date(text, today)
    if found is not None:
        return found
    found = _day_word(text, today)
    if found is not None:
        return found
    found = _month_day(text.removeprefix("on ").strip(), today)
    if found is not None:
        return found
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


def _day_and_clock(text: str, today: datetime.date,
                   read_clock: Callable[[str], datetime.time | None]) -> tuple[datetime.date, datetime.time] | None:
    """"tomorrow 9am", "friday at noon", "3pm on friday": the day and the time of day; None otherwise."""
    split = _DAY_THEN_TIME.match(text) or _DAY_THEN_PART.match(text)
    if split:
        day, clock = _day(split.group(1).strip(), today), read_clock(split.group(2))
        if day is not None and clock is not None:
            return day, clock
    split = _TIME_THEN_DAY.match(text)
    if split:
        clock, day = read_clock(split.group(1).removeprefix("at ").strip()), _day(split.group(2).strip(), today)
        if day is not None and clock is not None:
            return day, clock
    return None


def _clock_in_part(text: str, part: str) -> datetime.time | None:
    """A clock time said within a part of the day. An am/pm or 24-hour time is read as written; a
    bare hour or 12-hour time as am in the morning and pm after it ("8" in the evening: 20:00).
    A bare 12 is only read in the afternoon: at night it would mean the next day's midnight."""
    match = _CLOCK.match(text.strip())
    if not match:
        return None
    hour = int(match.group(1))
    if match.group(4):
        return _clock(text)
    if hour == 0 or hour > 12:
        return _clock(text if match.group(2) else f"{hour}:00")
    if hour == 12 and part != "afternoon":
        return None
    return _clock(f"{text.strip()} {'am' if part == 'morning' else 'pm'}")


def _in_part_of_day(text: str, today: datetime.date) -> tuple[datetime.date, datetime.time] | None:
    """"tomorrow morning at 8", "tomorrow at 8 in the morning", "friday evening 7pm", "tonight 7":
    the day (today when none is said) at the clock time, read in that part of the day; None otherwise."""
    match = _PART_OF_DAY.search(text)
    if not match:
        return None
    part = match.group(1) or "evening"     # "tonight" reads like "this evening"
    rest = " ".join((text[:match.start()] + " " + text[match.end():]).split())
    if not rest:
        return None
    read_clock = functools.partial(_clock_in_part, part=part)
    clock = read_clock(rest.removeprefix("at ").strip())
    if clock is not None:
        return today, clock
    found = _day_and_clock(rest, today, read_clock)
    if found is not None:
        return found
    day = _day(rest, today)       # "friday in the evening": the part's own hour
    return (day, _NAMED_TIMES[part]) if day is not None else None


def parse_datetime(text: str, zone: datetime.tzinfo, now: datetime.datetime,
                   what: str = "time") -> datetime.datetime:
    """An aware datetime; naive input is read in `zone`, a date alone means its midnight."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError(f"the {what} is empty; {FORMAT_HINT}")
    cleaned = " ".join(text.strip().lower().split())
    local_now = now.astimezone(zone)
    today = local_now.date()
    cleaned = _THIS.get(cleaned, cleaned)
    if cleaned == "now":
        return local_now
    later = _from_now(cleaned, local_now)
    if later is not None:
        return later.replace(second=0, microsecond=0)
    day = _day(cleaned, today)
    if day is not None:
        return datetime.datetime.combine(day, datetime.time(), zone)
    clock = _clock(cleaned)
    if clock is not None:
        return datetime.datetime.combine(today, clock, zone)
    found = _day_and_clock(cleaned, today, _clock) or _in_part_of_day(cleaned, today)
    if found is not None:
        return datetime.datetime.combine(*found, zone)
    try:
        iso = cleaned[:-1] + "+00:00" if cleaned.endswith("z") else cleaned
        moment = datetime.datetime.fromisoformat(iso.upper())
    except ValueError:
        raise ToolError(f"could not read {text!r} as a {what}; {FORMAT_HINT}") from None
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment


_RANGE = re.compile(r"^(?:from\s+)?(.+?)\s*(?:\s(?:to|until|till)\s|\s-\s|[–—])\s*(.+)$")


def split_range(text: str) -> tuple[str, str] | None:
    """A span written in one value ("saturday 1pm to 2:30pm", "from 9 until 11", "3pm – 4pm") as its
    two ends, or None. A hyphen counts only with spaces around it (ISO dates hold hyphens)."""
    found = _RANGE.match(" ".join(text.strip().split()))
    return (found.group(1), found.group(2)) if found else None


def parse_range(text: str, zone: datetime.tzinfo, now: datetime.datetime,
                what: str = "time") -> tuple[datetime.datetime, datetime.datetime] | None:
    """Both ends of a span written in one value, or None when `text` is not one. The second end is
    read from the first ("saturday 1pm to 2:30pm" ends on that Saturday); one that would come
    before the start is on the next day ("11pm to 1am")."""
    parts = split_range(text)
    if parts is None:
        return None
    begins = parse_datetime(parts[0], zone, now, what)
    ends = parse_datetime(parts[1], zone, begins, what)
    if ends <= begins and not _day(" ".join(parts[1].lower().split()), begins.date()):
        ends += datetime.timedelta(days=1)
    return begins, ends


def clock_only(text: str) -> bool:
    """True when the text is a time of day and names no day ("14:30", "4pm", "noon")."""
    return _clock(" ".join(text.strip().lower().split())) is not None


def has_time_part(text: str) -> bool:
    """True when the text names a time of day, not just a day."""
    cleaned = " ".join(text.strip().lower().split())
    from_now = _FROM_NOW.match(cleaned)
    return (cleaned == "now" or cleaned in _THIS or ":" in cleaned
            or bool(from_now and (from_now.group(1) == "half an hour" or from_now.group(3) not in ("day", "week")))
            or bool(re.search(r"\d\s*(am|pm|a\.m\.|p\.m\.)(\s|$)", cleaned))
            or any(re.search(rf"\b{word}\b", cleaned) for word in _NAMED_TIMES)
            or bool(_PART_OF_DAY.search(cleaned)))


def describe(moment: datetime.datetime) -> dict:
    """The parts of a moment a person (or model) wants to read back."""
    offset = moment.strftime("%z")
    return {"datetime": moment.isoformat(timespec="minutes" if moment.second == 0 else "seconds"),
            "date": moment.date().isoformat(), "time": moment.strftime("%H:%M"),
            "weekday": moment.strftime("%A"), "utc_offset": f"{offset[:3]}:{offset[3:]}" if offset else "",
            "timezone": getattr(moment.tzinfo, "key", None) or moment.tzname() or "UTC"}
