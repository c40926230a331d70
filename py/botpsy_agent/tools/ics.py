"""iCalendar (RFC 5545) text for a list of events: escaping, line folding, CRLF."""

from __future__ import annotations

import datetime

PRODUCT_ID = "-//botpsy-web//on-device calendar//EN"
MAX_LINE_OCTETS = 75


def escape_text(value: str) -> str:
    """TEXT value escaping (RFC 5545 3.3.11)."""
    return (value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n"))


def fold(line: str) -> str:
    """Split a content line into pieces of at most 75 octets, never inside a UTF-8 character."""
    pieces, current, size = [], "", 0
    for character in line:
        width = len(character.encode("utf-8"))
        limit = MAX_LINE_OCTETS if not pieces else MAX_LINE_OCTETS - 1   # continuation lines start with a space
        if size + width > limit:
            pieces.append(current)
            current, size = "", 0
        current += character
        size += width
    pieces.append(current)
    return "\r\n ".join(pieces)


def utc_stamp(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def event_lines(event: dict, stamp: datetime.datetime, domain: str) -> list[str]:
    start = datetime.datetime.fromisoformat(event["start"])
    end = datetime.datetime.fromisoformat(event["end"])
    lines = ["BEGIN:VEVENT", f"UID:{event['id']}-{event.get('created', '').replace(':', '')}@{domain}",
             f"DTSTAMP:{utc_stamp(stamp)}"]
    if event.get("all_day"):
        lines += [f"DTSTART;VALUE=DATE:{start.strftime('%Y%m%d')}", f"DTEND;VALUE=DATE:{end.strftime('%Y%m%d')}"]
    else:
        lines += [f"DTSTART:{utc_stamp(start)}", f"DTEND:{utc_stamp(end)}"]
    lines.append(f"SUMMARY:{escape_text(event['title'])}")
    for key, name in (("location", "LOCATION"), ("description", "DESCRIPTION")):
        if event.get(key):
            lines.append(f"{name}:{escape_text(event[key])}")
    lines.append("END:VEVENT")
    return lines


def calendar_text(events: list[dict], stamp: datetime.datetime, domain: str = "botpsy-web.local") -> str:
    """A complete VCALENDAR with one VEVENT per event; lines end with CRLF."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODUCT_ID}", "CALSCALE:GREGORIAN", "METHOD:PUBLISH"]
    for event in events:
        lines += event_lines(event, stamp, domain)
    lines.append("END:VCALENDAR")
    return "".join(fold(line) + "\r\n" for line in lines)
