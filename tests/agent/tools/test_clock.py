"""Date and time tools, with the clock fixed at Monday 2026-11-30 08:00 UTC."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.clock import convert_time, current_time, date_add, date_difference

from .conftest import call, make_context


def test_current_time_in_the_user_zone_and_in_another(ctx):
    assert call(current_time, ctx)["datetime"] == "2026-11-30T08:00+00:00"
    tokyo = call(current_time, ctx, timezone="Tokyo")
    assert (tokyo["time"], tokyo["utc_offset"], tokyo["timezone"]) == ("17:00", "+09:00", "Asia/Tokyo")
    assert tokyo["weekday"] == "Monday"


def test_current_time_follows_the_user_setting():
    answer = call(current_time, make_context(timezone="America/New_York"))
    assert (answer["time"], answer["timezone"]) == ("03:00", "America/New_York")


def test_convert_time_across_zones_and_daylight_saving(ctx):
    winter = call(convert_time, ctx, time="2026-12-15T14:00", from_timezone="Europe/Paris",
                  to_timezone="America/New_York")
    assert winter["to"]["datetime"] == "2026-12-15T08:00-05:00"
    # 2027-03-20: New York already on summer time, Paris not yet: 5 hours apart, not 6.
    spring = call(convert_time, ctx, time="2027-03-20T14:00", from_timezone="Europe/Paris",
                  to_timezone="America/New_York")
    assert spring["to"]["time"] == "09:00"
    assert spring["difference_hours"] == -5.0


def test_convert_a_bare_time_means_today_in_the_source_zone(ctx):
    answer = call(convert_time, ctx, time="09:30", from_timezone="Asia/Kolkata", to_timezone="UTC")
    assert answer["to"]["datetime"] == "2026-11-30T04:00+00:00"


def test_convert_time_errors_name_the_problem(ctx):
    with pytest.raises(ToolError, match="unknown time zone"):
        call(convert_time, ctx, time="now", to_timezone="Mars/Olympus")
    with pytest.raises(ToolError, match="could not read 'half past nine'"):
        call(convert_time, ctx, time="half past nine", to_timezone="UTC")


@pytest.mark.parametrize("time, from_utc", [
    ("18:40 New York", "2026-11-30T23:40+00:00"),
    ("3pm Tokyo time", "2026-11-30T06:00+00:00"),
    ("18:40 New York time on December 19th", "2026-12-19T23:40+00:00"),
    ("9am in Mumbai, India", "2026-11-30T03:30+00:00"),
    ("tomorrow 9am San Francisco time", "2026-12-01T17:00+00:00"),
])
def test_convert_time_reads_the_place_written_into_the_time(ctx, time, from_utc):
    answer = call(convert_time, ctx, time=time, to_timezone="UTC")
    assert answer["to"]["datetime"] == from_utc


def test_a_place_in_the_time_does_not_override_a_given_source_zone(ctx):
    with pytest.raises(ToolError, match="could not read '3pm Tokyo time'"):
        call(convert_time, ctx, time="3pm Tokyo time", from_timezone="Europe/Paris", to_timezone="UTC")


def test_an_unreadable_time_with_a_place_still_names_the_problem(ctx):
    with pytest.raises(ToolError, match="could not read 'half past nine Tokyo'"):
        call(convert_time, ctx, time="half past nine Tokyo", to_timezone="UTC")


def test_date_difference_counts_days_weeks_and_weekdays(ctx):
    answer = call(date_difference, ctx, start="2026-12-01", end="2026-12-25")
    assert answer["days"] == 24
    assert answer["weekdays"] == 18        # Tue 1st .. Thu 24th
    assert answer["weeks"] == pytest.approx(24 / 7, abs=0.01)
    assert "hours" not in answer
    # "what day is Christmas": the answer names it, so the model need not work it out
    assert (answer["start_weekday"], answer["end_weekday"]) == ("Tuesday", "Friday")


def test_date_difference_is_negative_backwards_and_has_hours_with_times(ctx):
    assert call(date_difference, ctx, start="2026-12-25", end="today")["days"] == -25
    timed = call(date_difference, ctx, start="2026-11-30T09:15", end="2026-12-01T11:45")
    assert (timed["hours"], timed["minutes"]) == (26.5, 1590)


@pytest.mark.parametrize("arguments, expected", [
    ({"date": "2024-01-31", "months": 1}, "2024-02-29"),
    ({"date": "2023-01-31", "months": 1}, "2023-02-28"),
    ({"date": "2026-11-30", "days": -30}, "2026-10-31"),
    ({"date": "2024-02-29", "years": 1}, "2025-02-28"),
    ({"date": "today", "weeks": 2}, "2026-12-14"),
    ({"date": "friday"}, "2026-12-04"),
    ({"date": "next monday"}, "2026-12-07"),
    ({"date": "tomorrow", "days": 1}, "2026-12-02"),
])
def test_date_add_calendar_arithmetic(ctx, arguments, expected):
    assert call(date_add, ctx, **arguments)["date"] == expected


def test_date_add_with_times_keeps_the_zone(ctx):
    answer = call(date_add, ctx, date="2026-11-30T22:30", hours=3)
    assert answer["datetime"] == "2026-12-01T01:30+00:00"


def test_date_add_refuses_impossible_results(ctx):
    with pytest.raises(ToolError, match="outside years|too long"):
        call(date_add, ctx, date="9999-12-01", months=1)
    with pytest.raises(ToolError, match="too long"):
        call(date_add, ctx, date="today", years=2_000_000)
