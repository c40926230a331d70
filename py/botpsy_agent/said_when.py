"""When the person said a thing happens, their words win over the date the model worked out.

Asked "Put lunch with Sam in my calendar on Friday at 1pm" on Monday 7 December, Qwen2.5-Coder-0.5B
wrote start "2026-12-07T10:00"; "remind me to renew my passport on friday" became due "friday 7
December 2026 10:00" (a Monday, refused); "tomorrow morning at 8" became "tomorrow morning" (09:00)
(bench/tasks-done.md, issue 41). The person's message held the answer, in words the tools already
read (tools/when.py): a small model copies badly what it should not compute at all.

So for a call of a tool that declares which argument says when (`@tool(said_when=...)`: an
event's start, a todo's due time), the agent looks for what the person's message of this turn says
about when. When it says exactly one thing (a phrase when.py reads, "now" aside; a day's name
misspelt, "tommorow", is read as the day) and the model's value is empty, unreadable or another
moment, the person's words win for what they say: a day and a time replace the value, a day alone
keeps the model's time of day if it wrote one, a time alone keeps the model's day. An end the
model wrote moves with the start, keeping the length it gave. A span said as two phrases and
nothing more ("on Saturday, 1pm to 2:30pm", under a day long) gives the start and, for a tool
with an `end`, the end. The call event carries what
was changed, and the page's confirmation shows the call as it will run.

Only the person's own words are read, never a tool's result: what a web page or a file says
cannot move the person's events.
"""

from __future__ import annotations

import datetime
import difflib
import re

from .tooling import Tool, ToolError
from .tools.when import clock_only, has_time_part, parse_datetime, split_range

_MAX_PHRASE_WORDS = 7
_WORD = re.compile(r"[\w:'.\-]+")
_DAY_WORDS = ("today", "tomorrow", "yesterday", "tonight", "monday", "tuesday", "wednesday", "thursday",
              "friday", "saturday", "sunday")
_TYPO_MIN_LENGTH = 7        # shorter words near a day's name are other words ("sundae", "monday" vs "money")


def _as_day_word(word: str) -> str:
    if len(word) < _TYPO_MIN_LENGTH or word in _DAY_WORDS:
        return word
    close = difflib.get_close_matches(word, _DAY_WORDS, n=1, cutoff=0.85)
    return close[0] if close else word


def when_phrases(message: str, zone: datetime.tzinfo, now: datetime.datetime) -> list[str]:
    """The phrases of `message` that say when, longest first from the left, none overlapping:
    "Put lunch with Sam in my calendar on Friday at 1pm" -> ["friday at 1pm"]."""
    return [phrase for phrase, _, _ in _phrases_at(message, zone, now)]


def _phrases_at(message: str, zone: datetime.tzinfo, now: datetime.datetime) -> list[tuple[str, int, int]]:
    """when_phrases with where each one starts and ends among the message's words."""
    words = _words(message)
    found, start = [], 0
    while start < len(words):
        for end in range(min(len(words), start + _MAX_PHRASE_WORDS), start, -1):
            phrase = " ".join(words[start:end])
            if phrase != "now" and _reads(phrase, zone, now):
                found.append((phrase, start, end))
                start = end
                break
        else:
            start += 1
    return found


def _words(message: str) -> list[str]:
    return [_as_day_word(word.rstrip(".,").lower()) for word in _WORD.findall(message.replace("–", " - "))]


def said_span(message: str, zone: datetime.tzinfo,
              now: datetime.datetime) -> tuple[str, str, datetime.datetime] | None:
    """(the start's phrase, the end's phrase, the end) when the message says when as a span and
    nothing more: two phrases with "to", "until", "till" or a dash between them ("on Saturday, 1pm
    to 2:30pm"), the end read from the start, less than a day after it. None otherwise."""
    found = _phrases_at(message, zone, now)
    if len(found) != 2 or found[1][1] - found[0][2] != 1:
        return None
    if _words(message)[found[0][2]] not in _SPAN_WORDS:
        return None
    begins = parse_datetime(found[0][0], zone, now)
    ends = parse_datetime(found[1][0], zone, begins)
    if clock_only(found[1][0]) and ends <= begins:       # "11pm to 1am": the next day
        ends += datetime.timedelta(days=1)
    if not datetime.timedelta(0) < ends - begins < datetime.timedelta(days=1):
        return None
    return found[0][0], found[1][0], ends


_SPAN_WORDS = {"to", "until", "till", "-"}


# A part of the day said alone is not a moment: "a haiku about a frosty winter morning".
_PARTS_OF_DAY = {"morning", "afternoon", "evening", "night"}


def says_a_moment(message: str, zone: datetime.tzinfo, now: datetime.datetime) -> bool:
    """True when `message` says a day or a clock time ("on Saturday, 1pm to 2:30pm", "24 December",
    "tonight at 7pm", "today"), not only a part of the day."""
    return any(phrase not in _PARTS_OF_DAY for phrase in when_phrases(message, zone, now))


def _reads(text: str, zone: datetime.tzinfo, now: datetime.datetime) -> datetime.datetime | None:
    try:
        return parse_datetime(text, zone, now)
    except ToolError:
        return None


def with_the_persons_when(tool: Tool, arguments: dict, message: str, zone: datetime.tzinfo,
                          now: datetime.datetime) -> tuple[dict, dict]:
    """(the arguments to run, {argument: {"written", "used"}} for each one changed, the one that
    says when also with "said": the person's phrase)."""
    name = tool.said_when
    if not name or not isinstance(arguments.get(name, ""), str):
        return arguments, {}
    written = arguments.get(name, "")
    if split_range(written or ""):            # "saturday 1pm to 2:30pm": the tool reads spans itself
        return arguments, {}
    span = said_span(message, zone, now) if _END in tool.parameters.get("properties", {}) else None
    phrases = [span[0]] if span else when_phrases(message, zone, now)
    if len(phrases) != 1:
        return arguments, {}
    said = phrases[0]
    wrote = _reads(written, zone, now) if written.strip() else None
    value = _persons_start(said, written, wrote, zone, now)
    changed, changes = dict(arguments), {}
    if value is not None:
        changed[name] = value
        changes[name] = {"written": written, "used": value, "said": said}
    end = arguments.get(_END)
    if span:                                  # the end the person said, whatever the model wrote
        _, end_said, ends = span
        used = ends.isoformat(timespec="minutes")
        if not (isinstance(end, str) and _reads(end, zone, now) == ends):
            changed[_END] = used
            changes[_END] = {"written": end if isinstance(end, str) else "", "used": used, "said": end_said}
    elif value is not None and isinstance(end, str) and end.strip():
        ends = _reads(end, zone, now)         # the model's end moves with its start
        starts = parse_datetime(value, zone, now)
        if wrote is not None and ends is not None and ends > wrote and has_time_part(value):
            changed[_END] = (starts + (ends - wrote)).astimezone(zone).isoformat(timespec="minutes")
        else:
            changed[_END] = ""
        changes[_END] = {"written": end, "used": changed[_END]}
    return (changed, changes) if changes else (arguments, {})


_END = "end"


def _persons_start(said: str, written: str, wrote: datetime.datetime | None, zone: datetime.tzinfo,
                   now: datetime.datetime) -> str | None:
    """The value the person's phrase `said` gives the argument the model wrote as `written` (read as
    `wrote`), or None when the model's already means it."""
    meant = parse_datetime(said, zone, now)
    if wrote is not None and (wrote == meant if has_time_part(said) else wrote.astimezone(zone).date() == meant.date()):
        return None
    local = wrote.astimezone(zone) if wrote is not None else None
    if clock_only(said):
        if local is not None and local.time() == meant.time():
            return None
        # the person's time of day, on the model's day
        return said if local is None else f"{local.date().isoformat()}T{meant:%H:%M}"
    if has_time_part(said) or local is None or not has_time_part(written):
        return said
    return f"{meant.date().isoformat()}T{local:%H:%M}"   # the person's day, the model's time of day
