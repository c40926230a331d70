"""Time zones: names, cities, offsets, and the bundled fallback that Pyodide relies on."""

import datetime
import zoneinfo
from importlib import resources

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.data.build_city_zones import city_zones as build_city_zones
from botpsy_agent.tools.data.build_tz_rules import parse_tzif
from botpsy_agent.tools.timezones import (_zone_from_rules, bundled_rules, canonical_name, city_zones, get_zone,
                                          zone_names_by_lowercase)

UTC = datetime.timezone.utc


def tzdata_zone(name: str) -> zoneinfo.ZoneInfo:
    """The zone straight from the `tzdata` package the bundled rules were built from."""
    *folders, leaf = name.split("/")
    package = ".".join(["tzdata", "zoneinfo", *folders])
    with resources.files(package).joinpath(leaf).open("rb") as file:
        return zoneinfo.ZoneInfo.from_file(file, key=name)


def test_bundled_rules_cover_the_iana_database():
    names = set(resources.files("tzdata").joinpath("zones").read_text().split())
    assert names == set(bundled_rules())
    assert {"Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"} <= names


def moments_to_check(name: str) -> list[datetime.datetime]:
    """Every 10 days from 2020 to 2040, plus either side of each transition the database lists."""
    *folders, leaf = name.split("/")
    tzif = resources.files(".".join(["tzdata", "zoneinfo", *folders])).joinpath(leaf).read_bytes()
    start, end = datetime.datetime(2020, 1, 1, tzinfo=UTC), datetime.datetime(2040, 1, 1, tzinfo=UTC)
    moments = [start + datetime.timedelta(days=10 * step) for step in range(731)]
    for seconds in parse_tzif(tzif)["times"]:
        if start.timestamp() <= seconds < end.timestamp():
            moment = datetime.datetime.fromtimestamp(seconds, UTC)
            moments += [moment - datetime.timedelta(seconds=1), moment]
    return moments


def test_fallback_matches_the_iana_database_from_2020_on():
    """Every zone: same offset and abbreviation every 10 days and on both sides of each transition."""
    mismatches = []
    for name in bundled_rules():
        real, fallback = tzdata_zone(name), _zone_from_rules(name)
        for moment in moments_to_check(name):
            expected, got = moment.astimezone(real), moment.astimezone(fallback)
            if (expected.utcoffset(), expected.tzname()) != (got.utcoffset(), got.tzname()):
                mismatches.append((name, moment.isoformat()))
                break
    assert mismatches == []


def test_fallback_handles_daylight_saving_transitions_exactly():
    paris = _zone_from_rules("Europe/Paris")
    before = datetime.datetime(2027, 3, 28, 0, 59, tzinfo=UTC).astimezone(paris)
    after = datetime.datetime(2027, 3, 28, 1, 0, tzinfo=UTC).astimezone(paris)
    assert (before.utcoffset(), after.utcoffset()) == (datetime.timedelta(hours=1), datetime.timedelta(hours=2))
    assert (before.tzname(), after.tzname()) == ("CET", "CEST")


@pytest.mark.parametrize("written, canonical", [
    ("Europe/Paris", "Europe/Paris"), ("europe/paris", "Europe/Paris"), ("Tokyo", "Asia/Tokyo"),
    ("new york", "America/New_York"), ("  Los_Angeles ", "America/Los_Angeles"),
])
def test_names_and_cities_resolve(written, canonical):
    assert canonical_name(written) == canonical
    assert get_zone(written).key == canonical


@pytest.mark.parametrize("written, canonical", [
    ("Mumbai", "Asia/Kolkata"), ("delhi", "Asia/Kolkata"), ("San Francisco", "America/Los_Angeles"),
    ("Seattle", "America/Los_Angeles"), ("Boston", "America/New_York"), ("Beijing", "Asia/Shanghai"),
    ("Munich", "Europe/Berlin"), ("Köln", "Europe/Berlin"), ("koln", "Europe/Berlin"),
    ("Miami", "America/New_York"), ("Hyderabad", "Asia/Kolkata"),   # India's, the more populous one
])
def test_large_cities_that_name_no_zone_resolve(written, canonical):
    assert canonical_name(written) == canonical
    assert get_zone(written).key == canonical


def test_zone_names_and_their_own_cities_come_before_the_city_table():
    assert canonical_name("Paris") == "Europe/Paris"
    assert canonical_name("Vancouver") == "America/Vancouver"
    assert "paris" not in city_zones()


@pytest.mark.parametrize("written, canonical", [
    ("Mumbai, India", "Asia/Kolkata"), ("Portland, Oregon", "America/Los_Angeles"),
    ("Paris, France", "Europe/Paris"), ("New York, NY", "America/New_York"),
    ("Washington, D.C.", "America/New_York"),
])
def test_city_comma_country_uses_the_city(written, canonical):
    assert canonical_name(written) == canonical


@pytest.mark.parametrize("written, message", [
    ("Mumbay", r"did you mean Mumbai \(Asia/Kolkata\)"),
    ("San Fransisco", r"did you mean San Francisco \(America/Los_Angeles\)"),
    ("Atlantis, Ocean", "unknown time zone 'Atlantis, Ocean'"),
])
def test_misspelled_cities_are_refused_with_close_names(written, message):
    with pytest.raises(ToolError, match=message):
        canonical_name(written)


def test_city_table_is_small_and_points_only_at_bundled_zones():
    """city_zones.json is generated: rebuild it with data/build_city_zones.py (its docstring says how)."""
    stored = resources.files("botpsy_agent.tools").joinpath("data/city_zones.json").read_bytes()
    assert len(stored) < 45_000      # it ships to every page
    table = city_zones()
    assert len(table) > 1000 and set(table.values()) <= set(bundled_rules())
    assert all(name == name.lower().strip() for name in table)
    assert not set(table) & set(zone_names_by_lowercase())


def test_city_table_build_keeps_big_cities_and_the_most_populous_of_a_name():
    cities = [
        {"name": "Valencia", "population": 800_000, "timezone": "Europe/Madrid"},
        {"name": "Valencia", "population": 1_400_000, "timezone": "America/Caracas"},
        {"name": "São Gonçalo", "population": 1_000_000, "timezone": "America/Sao_Paulo"},
        {"name": "Smallville", "population": 10_000, "timezone": "America/Chicago"},
        {"name": "Paris", "population": 2_000_000, "timezone": "Europe/Paris"},
        {"name": "Nowhere", "population": 900_000, "timezone": "Mars/Olympus"},
    ]
    table = build_city_zones(cities, zone_names_by_lowercase(), min_population=400_000)
    assert table == {"valencia": "America/Caracas", "são gonçalo": "America/Sao_Paulo",
                     "sao goncalo": "America/Sao_Paulo"}


@pytest.mark.parametrize("written, hours", [("UTC", 0), ("gmt", 0), ("Z", 0), ("+05:30", 5.5), ("UTC-3", -3),
                                            ("GMT+10", 10), ("-0930", -9.5)])
def test_utc_and_fixed_offsets(written, hours):
    zone = get_zone(written)
    assert zone.utcoffset(None) == datetime.timedelta(hours=hours)


@pytest.mark.parametrize("written, message", [
    ("Europe/Pari", "did you mean Europe/Paris"),
    ("Atlantis/Capital", "unknown time zone"),
    ("", "empty"),
    ("+15:00", "out of range"),
])
def test_unknown_zones_are_refused_with_help(written, message):
    with pytest.raises(ToolError, match=message):
        get_zone(written)


def test_bundled_rules_are_exactly_what_the_build_script_makes():
    """tz_rules.json is generated: rebuild it with data/build_tz_rules.py after a tzdata upgrade."""
    import json

    from botpsy_agent.tools.data.build_tz_rules import build

    stored = json.loads(resources.files("botpsy_agent.tools").joinpath("data/tz_rules.json").read_text())
    assert build() == stored
