"""Rebuild tz_rules.json from the `tzdata` package (run under CPython, not in the page).

Pyodide's standard library has `zoneinfo` but no IANA database. tz_rules.json keeps,
for every zone name, what decides its offsets from 2020 on: the transitions since
then (types and times) and the POSIX TZ rule that applies after the last one.
Dates before 2020 are only approximate in the fallback.

    .venv/bin/python py/botpsy_agent/tools/data/build_tz_rules.py
"""

from __future__ import annotations

import json
import struct
from importlib import resources
from pathlib import Path

KEEP_FROM = 1577836800  # 2020-01-01T00:00:00Z: about 40 kB of JSON; from 2000 about 130 kB


def parse_tzif(tzif: bytes) -> dict:
    """Transitions, types and footer rule from the 64-bit part of a version 2+ TZif file."""
    if not tzif.startswith(b"TZif") or tzif[4:5] < b"2":
        raise ValueError("not a version 2+ TZif file")
    counts = struct.unpack(">6l", tzif[20:44])
    isut, isstd, leap, times, types, chars = counts
    start = 44 + times * 5 + types * 6 + chars + leap * 8 + isstd + isut + 44   # skip the v1 part
    isut, isstd, leap, times, types, chars = struct.unpack(">6l", tzif[start - 24:start])
    position = start
    transition_times = struct.unpack(f">{times}q", tzif[position:position + 8 * times])
    position += 8 * times
    indices = list(tzif[position:position + times])
    position += times
    raw_types = [struct.unpack(">lBB", tzif[position + 6 * i:position + 6 * i + 6]) for i in range(types)]
    position += 6 * types
    abbreviations = tzif[position:position + chars]
    kinds = [[offset, dst, abbreviations[index:abbreviations.index(b"\0", index)].decode("ascii")]
             for offset, dst, index in raw_types]
    rule = tzif.rstrip(b"\n").rsplit(b"\n", 1)[1].decode("ascii")
    return {"times": list(transition_times), "indices": indices, "types": kinds, "rule": rule}


def recent_part(zone: dict) -> dict:
    """The transitions from KEEP_FROM on, plus the last one before it (so that KEEP_FROM
    itself is exact), with only the types they use."""
    pairs = list(zip(zone["times"], zone["indices"]))
    first = next((i for i, (time, _) in enumerate(pairs) if time >= KEEP_FROM), len(pairs))
    kept = pairs[max(first - 1, 0):] if first < len(pairs) else []
    entry = {"rule": zone["rule"]}
    if kept:
        order = list(dict.fromkeys(index for _, index in kept))
        entry["types"] = [zone["types"][index] for index in order]
        entry["transitions"] = [[time, order.index(index)] for time, index in kept]
    return entry


def build() -> dict:
    import tzdata

    names = resources.files("tzdata").joinpath("zones").read_text().split()
    zones = {}
    for name in names:
        *folders, leaf = name.split("/")
        package = ".".join(["tzdata", "zoneinfo", *folders])
        zones[name] = recent_part(parse_tzif(resources.files(package).joinpath(leaf).read_bytes()))
    return {"source": f"IANA tzdata {tzdata.IANA_VERSION}, transitions since 2000", "zones": zones}


if __name__ == "__main__":
    target = Path(__file__).with_name("tz_rules.json")
    target.write_text(json.dumps(build(), separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {target} ({target.stat().st_size} bytes)")
