"""Time zones by name, with or without an IANA database on the system.

`zoneinfo` needs the IANA database: CPython finds it in /usr/share/zoneinfo or the
`tzdata` package; Pyodide has neither. When `zoneinfo` cannot find a zone we build
it from data/tz_rules.json (every zone's transitions since 2020 and its POSIX rule
for after them), which is exact from 2020 on and approximate before.

Names are read as zone names first ("Europe/Paris", "tokyo"), then as large cities from
data/city_zones.json ("Mumbai": Asia/Kolkata), also written "City, Country" ("Portland, Oregon").
"""

from __future__ import annotations

import datetime
import difflib
import io
import json
import re
import struct
import zoneinfo
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources

from botpsy_agent.tooling import ToolError

_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
_UTC_NAMES = {"utc", "gmt", "z", "zulu", "universal"}


@lru_cache(maxsize=1)
def bundled_rules() -> dict[str, dict]:
    """{zone name: {rule, types, transitions}} from data/tz_rules.json."""
    text = resources.files("botpsy_agent.tools").joinpath("data/tz_rules.json").read_text()
    return json.loads(text)["zones"]


@lru_cache(maxsize=1)
def zone_names_by_lowercase() -> dict[str, str]:
    """Lower-cased full names and city names ("new york") -> the canonical zone name."""
    names: dict[str, str] = {}
    for name in bundled_rules():
        city = name.rsplit("/", 1)[-1].replace("_", " ").lower()
        names.setdefault(city, name)
    for name in bundled_rules():
        names[name.lower()] = name
    return names


@lru_cache(maxsize=1)
def city_zones() -> dict[str, str]:
    """{lower-cased city name: zone} for large cities that name no zone, from data/city_zones.json."""
    text = resources.files("botpsy_agent.tools").joinpath("data/city_zones.json").read_text(encoding="utf-8")
    return json.loads(text)["cities"]


def tzif_from_entry(entry: dict) -> bytes:
    """A TZif version 2 file from a tz_rules.json entry (see data/build_tz_rules.py)."""
    kinds = entry.get("types") or [[0, 0, "UTC"]]
    transitions = entry.get("transitions", [])
    abbreviations = b""
    ttinfos = b""
    for offset, dst, abbreviation in kinds:
        ttinfos += struct.pack(">lBB", offset, dst, len(abbreviations))
        abbreviations += abbreviation.encode("ascii") + b"\0"
    empty_v1 = b"TZif2" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, 0, 1, 4) + struct.pack(">lBB", 0, 0, 0) + b"UTC\0"
    header = b"TZif2" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, len(transitions), len(kinds), len(abbreviations))
    body = (b"".join(struct.pack(">q", time) for time, _ in transitions)
            + bytes(index for _, index in transitions) + ttinfos + abbreviations)
    return empty_v1 + header + body + b"\n" + entry["rule"].encode("ascii") + b"\n"


@lru_cache(maxsize=256)
def _zone_from_rules(name: str) -> zoneinfo.ZoneInfo:
    return zoneinfo.ZoneInfo.from_file(io.BytesIO(tzif_from_entry(bundled_rules()[name])), key=name)


def _known_name(name: str) -> str | None:
    """The zone a zone name, zone city or large city names ("City, Country" too); None if none."""
    underscored = "_".join(name.split())
    if underscored in bundled_rules():
        return underscored
    spaced = " ".join(name.replace("_", " ").split()).lower()
    found = (zone_names_by_lowercase().get(underscored.lower()) or zone_names_by_lowercase().get(spaced)
             or city_zones().get(spaced))
    if found is None and "," in name:
        return _known_name(name.split(",", 1)[0])     # "Mumbai, India", "Portland, Oregon"
    return found


def canonical_name(name: str) -> str:
    """The IANA name for `name` (any case, or a city), else ToolError with suggestions."""
    found = _known_name(name) if isinstance(name, str) else None
    if found:
        return found
    lowered = " ".join(name.lower().split()) if isinstance(name, str) else ""
    known = {**city_zones(), **zone_names_by_lowercase()}
    close = difflib.get_close_matches(lowered, list(known), n=3, cutoff=0.6)
    # a city is shown with its zone ("Mumbai (Asia/Kolkata)"), a zone name as itself
    suggestions = [known[match] if "/" in match else f"{match.title()} ({known[match]})" for match in close]
    hint = f"; did you mean {', '.join(dict.fromkeys(suggestions))}?" if suggestions else (
        "; use an IANA name such as 'Europe/Paris' or 'America/New_York', or an offset like '+05:30'")
    raise ToolError(f"unknown time zone {name!r}{hint}")


def _utc_or_offset(name: str) -> datetime.tzinfo | None:
    """UTC for 'UTC' / 'GMT' / 'Z', a fixed offset for '+05:30' / 'UTC-3'; None for anything else."""
    if name.lower() in _UTC_NAMES:
        return datetime.timezone.utc
    offset = _OFFSET.match(name)
    if not offset:
        return None
    sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
    if hours > 14 or minutes > 59:
        raise ToolError(f"time zone offset {name!r} is out of range (-14:00 to +14:00)")
    delta = datetime.timedelta(hours=hours, minutes=minutes)
    return datetime.timezone(-delta if sign == "-" else delta)


def _zone_for(key: str) -> datetime.tzinfo:
    try:
        return zoneinfo.ZoneInfo(key)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return _zone_from_rules(key)


def get_zone(name: str) -> datetime.tzinfo:
    """A tzinfo for an IANA name, a city, 'UTC', or a fixed offset such as '+05:30' / 'UTC-3'."""
    if not isinstance(name, str) or not name.strip():
        raise ToolError("the time zone is empty; use an IANA name such as 'Europe/Paris'")
    stripped = name.strip()
    return _utc_or_offset(stripped) or _zone_for(canonical_name(stripped))


def zone_mentions(text: str, longest_place: int = 5) -> Iterator[tuple[str, datetime.tzinfo]]:
    """Each way to read `text` as something said in a place: "3pm Tokyo time" -> ("3pm", Asia/Tokyo),
    "18:40 in New York on December 19th" -> ("18:40 on December 19th", America/New_York). Longer
    places come first, then places later in the text; "in" before a place and "time" after it go too."""
    words = text.split()
    for size in range(min(len(words), longest_place), 0, -1):
        for start in range(len(words) - size, -1, -1):
            place = " ".join(words[start:start + size]).strip(",.")
            try:
                zone = _utc_or_offset(place) or (_zone_for(key) if (key := _known_name(place)) else None)
            except ToolError:
                continue
            if zone is None:
                continue
            before, after = words[:start], words[start + size:]
            if before and before[-1].lower() == "in":
                before = before[:-1]
            if after and after[0].lower().strip(",.") == "time":
                after = after[1:]
            yield " ".join(before + after), zone


def zone_label(zone: datetime.tzinfo) -> str:
    """The name to show for a zone."""
    return getattr(zone, "key", None) or str(zone)
