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
model wrote moves with the start, keeping the length it gave. The call event carries what
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
    words = [_as_day_word(word.rstrip(".").lower()) for word in _WORD.findall(message)]
    found, start = [], 0
    while start < len(words):
        for end in range(min(len(words), start + _MAX_PHRASE_WORDS), start, -1):
            phrase = " ".join(words[start:end])
            if phrase != "now" and _reads(phrase, zone, now):
                found.append(phrase)
                start = end
                break
        else:
            start += 1
    return found


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
    phrases = when_phrases(message, zone, now)
    if len(phrases) != 1:
        return arguments, {}
    said = phrases[0]
    meant = parse_datetime(said, zone, now)
    written = arguments.get(name, "")
    if split_range(written or ""):            # "saturday 1pm to 2:30pm": the tool reads spans itself
        return arguments, {}
    wrote = _reads(written, zone, now) if written.strip() else None
    if wrote is not None and (wrote == meant if has_time_part(said) else wrote.astimezone(zone).date() == meant.date()):
        return arguments, {}
    local = wrote.astimezone(zone) if wrote is not None else None
    if clock_only(said):
        if local is not None and local.time() == meant.time():
            return arguments, {}
        # the person's time of day, on the model's day
        value = said if local is None else f"{local.date().isoformat()}T{meant:%H:%M}"
    elif has_time_part(said) or local is None or not has_time_part(written):
        value = said
    else:                                     # the person's day, the model's time of day
        value = f"{meant.date().isoformat()}T{local:%H:%M}"
    changed = dict(arguments, **{name: value})
    changes = {name: {"written": written, "used": value, "said": said}}
    end = arguments.get("end")
    if isinstance(end, str) and end.strip():
        ends = _reads(end, zone, now)
        starts = parse_datetime(value, zone, now)
        if wrote is not None and ends is not None and ends > wrote and has_time_part(value):
            changed["end"] = (starts + (ends - wrote)).astimezone(zone).isoformat(timespec="minutes")
        else:
            changed["end"] = ""
        changes["end"] = {"written": end, "used": changed["end"]}
    return changed, changes
