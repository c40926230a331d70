"""How written dates and times are read. The clock is Monday 2026-11-30 08:00 UTC."""

import datetime

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.timezones import get_zone
from botpsy_agent.tools.when import has_time_part, parse_datetime

from .conftest import FIXED_NOW

PARIS = get_zone("Europe/Paris")


@pytest.mark.parametrize("written, expected", [
    ("now", "2026-11-30T09:00:00+01:00"),
    ("today", "2026-11-30T00:00:00+01:00"),
    ("Tomorrow", "2026-12-01T00:00:00+01:00"),
    ("yesterday", "2026-11-29T00:00:00+01:00"),
    ("monday", "2026-11-30T00:00:00+01:00"),
    ("next monday", "2026-12-07T00:00:00+01:00"),
    ("friday", "2026-12-04T00:00:00+01:00"),
    ("14:30", "2026-11-30T14:30:00+01:00"),
    ("9:05", "2026-11-30T09:05:00+01:00"),
    ("9am", "2026-11-30T09:00:00+01:00"),
    ("7:30 pm", "2026-11-30T19:30:00+01:00"),
    ("12am", "2026-11-30T00:00:00+01:00"),
    ("12pm", "2026-11-30T12:00:00+01:00"),
    ("tomorrow 9am", "2026-12-01T09:00:00+01:00"),
    ("friday at 14:00", "2026-12-04T14:00:00+01:00"),
    ("2026-12-24", "2026-12-24T00:00:00+01:00"),
    ("2026-12-24 9:30", "2026-12-24T09:30:00+01:00"),
    ("2026-12-24T18:00", "2026-12-24T18:00:00+01:00"),
    ("2026-07-01T18:00", "2026-07-01T18:00:00+02:00"),
    ("2026-12-24T18:00Z", "2026-12-24T18:00:00+00:00"),
    ("2026-12-24T18:00-05:00", "2026-12-24T18:00:00-05:00"),
    ("noon", "2026-11-30T12:00:00+01:00"),
    ("friday at noon", "2026-12-04T12:00:00+01:00"),
    ("tomorrow morning", "2026-12-01T09:00:00+01:00"),
    ("Friday afternoon", "2026-12-04T15:00:00+01:00"),
    ("this evening", "2026-11-30T19:00:00+01:00"),
    ("tonight", "2026-11-30T19:00:00+01:00"),
    ("3pm on friday", "2026-12-04T15:00:00+01:00"),
    ("at 3pm next monday", "2026-12-07T15:00:00+01:00"),
    ("in 2 hours", "2026-11-30T11:00:00+01:00"),
    ("in two hours", "2026-11-30T11:00:00+01:00"),
    ("in half an hour", "2026-11-30T09:30:00+01:00"),
    ("in 45 minutes", "2026-11-30T09:45:00+01:00"),
    ("in 3 days", "2026-12-03T00:00:00+01:00"),
    ("December 19th", "2026-12-19T00:00:00+01:00"),
    ("19 dec", "2026-12-19T00:00:00+01:00"),
    ("the 3rd of March 2027", "2027-03-03T00:00:00+01:00"),
    ("march 7", "2027-03-07T00:00:00+01:00"),          # past this year: the coming one
    ("18:40 on December 19th", "2026-12-19T18:40:00+01:00"),
    ("december 19th at 6pm", "2026-12-19T18:00:00+01:00"),
    ("Friday 4 December 2026", "2026-12-04T00:00:00+01:00"),     # a weekday that is the date's
    ("friday, 4 december 2026 10:00", "2026-12-04T10:00:00+01:00"),
    ("Monday, 2026-11-30", "2026-11-30T00:00:00+01:00"),
])
def test_readable_forms(written, expected):
    assert parse_datetime(written, PARIS, FIXED_NOW).isoformat() == expected


@pytest.mark.parametrize("written, expected", [
    ("tomorrow morning 8am", "2026-12-01T08:00:00+01:00"),
    ("tomorrow morning at 8", "2026-12-01T08:00:00+01:00"),
    ("tomorrow at 8 in the morning", "2026-12-01T08:00:00+01:00"),
    ("8am tomorrow morning", "2026-12-01T08:00:00+01:00"),
    ("friday evening 7pm", "2026-12-04T19:00:00+01:00"),
    ("friday at 8 in the evening", "2026-12-04T20:00:00+01:00"),
    ("tomorrow evening at 8:30", "2026-12-01T20:30:00+01:00"),
    ("tomorrow afternoon at 3", "2026-12-01T15:00:00+01:00"),
    ("tomorrow night at 11", "2026-12-01T23:00:00+01:00"),
    ("tonight 7pm", "2026-11-30T19:00:00+01:00"),
    ("tonight at 8", "2026-11-30T20:00:00+01:00"),
    ("this evening at 7", "2026-11-30T19:00:00+01:00"),
    ("this morning at 10:15", "2026-11-30T10:15:00+01:00"),
    ("8 in the morning", "2026-11-30T08:00:00+01:00"),
    ("friday in the evening", "2026-12-04T19:00:00+01:00"),
])
def test_a_part_of_the_day_with_a_clock_time_reads_the_hour_in_that_part(written, expected):
    assert parse_datetime(written, PARIS, FIXED_NOW).isoformat() == expected


@pytest.mark.parametrize("written, expected", [
    ("tomorrow morning at 8pm", "2026-12-01T20:00:00+01:00"),      # am/pm as said
    ("tomorrow evening at 19:30", "2026-12-01T19:30:00+01:00"),    # a 24-hour time as said
])
def test_an_explicit_clock_time_wins_over_the_part_of_the_day(written, expected):
    assert parse_datetime(written, PARIS, FIXED_NOW).isoformat() == expected


@pytest.mark.parametrize("written", ["", "soon", "25:00", "13pm", "9", "2026-13-01", "friday at noonish", "in several hours", "feb 30", "may",
                                     "tomorrow at 8", "tomorrow morning at 25", "tonight at 12"])
def test_unreadable_forms_are_refused_with_the_accepted_formats(written):
    with pytest.raises(ToolError, match="ISO format|empty"):
        parse_datetime(written, PARIS, FIXED_NOW, "start")


def test_has_time_part():
    assert has_time_part("2026-12-01T09:00") and has_time_part("tomorrow 9am") and has_time_part("now")
    assert not has_time_part("2026-12-01") and not has_time_part("friday")
    assert has_time_part("tomorrow morning") and has_time_part("in 2 hours") and has_time_part("3pm on friday")
    assert not has_time_part("in 3 days")
    assert has_time_part("tonight at 8")


def test_result_is_always_aware():
    assert parse_datetime("today", datetime.timezone.utc, FIXED_NOW).tzinfo is not None


def test_a_weekday_that_is_not_its_dates_says_both_readings():
    """A small model mixed the person's "on friday" with today's date: "friday 30 November 2026 10:00"
    (a Monday). Neither reading is taken on trust; the error names both, so the next call can."""
    with pytest.raises(ToolError) as refused:
        parse_datetime("friday 30 November 2026 10:00", PARIS, FIXED_NOW, "due time")
    message = str(refused.value)
    assert "30 November 2026 is a Monday, not a Friday" in message
    assert "2026-11-30" in message and "friday, the coming one: 2026-12-04" in message
