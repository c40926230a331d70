"""A small RFC 5545 checker for the tests: structure, line format and required properties."""

from __future__ import annotations

import re

_CONTENT_LINE = re.compile(r"^[A-Z][A-Z0-9-]*(;[A-Z0-9-]+=[^;:]+)*:.*$")
_UTC_DATE_TIME = re.compile(r"^\d{8}T\d{6}Z$")
_DATE = re.compile(r"^\d{8}$")


def unfold(text: str) -> list[str]:
    """Content lines after undoing folding; checks CRLF endings and the 75-octet limit."""
    assert text.endswith("\r\n"), "the stream must end with CRLF"
    physical = text[:-2].split("\r\n")
    for line in physical:
        assert "\n" not in line and "\r" not in line, f"bare line break in {line!r}"
        assert len(line.encode("utf-8")) <= 75, f"line longer than 75 octets: {line!r}"
    lines: list[str] = []
    for line in physical:
        if line.startswith((" ", "\t")):
            assert lines, "a continuation line cannot come first"
            lines[-1] += line[1:]
        else:
            lines.append(line)
    return lines


def unescape(value: str) -> str:
    return re.sub(r"\\([\\;,nN])", lambda m: "\n" if m.group(1) in "nN" else m.group(1), value)


def parse_calendar(text: str) -> list[dict[str, tuple[str, str]]]:
    """Checks the calendar; returns the events as {NAME: (parameters, value)}."""
    lines = unfold(text)
    for line in lines:
        assert _CONTENT_LINE.match(line), f"not a content line: {line!r}"
    assert lines[0] == "BEGIN:VCALENDAR" and lines[-1] == "END:VCALENDAR"
    properties = {line.split(":", 1)[0] for line in lines}
    assert "VERSION" in properties and "PRODID" in properties
    assert "VERSION:2.0" in lines
    events, current = [], None
    for line in lines[1:-1]:
        name_and_parameters, value = line.split(":", 1)
        name, _, parameters = name_and_parameters.partition(";")
        if line == "BEGIN:VEVENT":
            assert current is None, "nested VEVENT"
            current = {}
        elif line == "END:VEVENT":
            assert current is not None, "END:VEVENT without BEGIN"
            for required in ("UID", "DTSTAMP", "DTSTART"):
                assert required in current, f"VEVENT without {required}"
            assert _UTC_DATE_TIME.match(current["DTSTAMP"][1])
            for key in ("DTSTART", "DTEND"):
                if key in current:
                    pattern = _DATE if current[key][0] == "VALUE=DATE" else _UTC_DATE_TIME
                    assert pattern.match(current[key][1]), f"bad {key} {current[key]}"
            assert "DTEND" not in current or current["DTEND"][1] > current["DTSTART"][1], "DTEND before DTSTART"
            events.append(current)
            current = None
        elif current is not None:
            assert name not in current, f"{name} twice in one VEVENT"
            current[name] = (parameters, value)
    assert current is None, "unterminated VEVENT"
    uids = [event["UID"][1] for event in events]
    assert len(uids) == len(set(uids)), "UIDs must be unique"
    return events
