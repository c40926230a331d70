"""Calendar: events in time order, free slots around them, and a valid .ics export.
The clock is Monday 2026-11-30 08:00 UTC."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.calendar_events import (calendar_add_event, calendar_delete_event, calendar_export_ics,
                                                calendar_free_slots, calendar_list_events)
from botpsy_agent.tools.ics import fold

from .conftest import call, make_context
from .ics_checker import parse_calendar, unescape, unfold


def add(ctx, title, start, **extra):
    return call(calendar_add_event, ctx, title=title, start=start, **extra)


def test_add_with_duration_end_or_all_day(ctx):
    timed = add(ctx, "Dentist", "2026-12-01T10:00", duration_minutes=45, location="Main St")
    assert (timed["id"], timed["start"], timed["end"]) == ("e1", "2026-12-01T10:00+00:00", "2026-12-01T10:45+00:00")
    ended = add(ctx, "Workshop", "2026-12-02T13:00", end="2026-12-02T16:30")
    assert ended["end"] == "2026-12-02T16:30+00:00"
    holiday = add(ctx, "Holiday", "2026-12-24", end="2026-12-26")
    assert (holiday["all_day"], holiday["start"], holiday["end"]) == (True, "2026-12-24", "2026-12-26")


@pytest.mark.parametrize("start,begins,ends", [
    ("Saturday 1pm to 2:30pm", "2026-12-05T13:00+00:00", "2026-12-05T14:30+00:00"),
    ("tomorrow 9am - 10:30am", "2026-12-01T09:00+00:00", "2026-12-01T10:30+00:00"),
    ("3pm – 4pm", "2026-11-30T15:00+00:00", "2026-11-30T16:00+00:00"),
    ("friday 11pm until 1am", "2026-12-04T23:00+00:00", "2026-12-05T01:00+00:00"),
    ("24 December to 26 December", "2026-12-24", "2026-12-26"),
])
def test_a_whole_span_written_as_the_start_sets_both_ends(ctx, start, begins, ends):
    """Qwen2.5-Coder-1.5B put "Saturday 1pm to 2:30pm" in `start` and got an error it could not fix."""
    event = add(ctx, "Lunch with Sam", start)
    assert (event["start"], event["end"]) == (begins, ends)


def test_a_span_in_the_start_yields_to_an_explicit_end(ctx):
    with pytest.raises(ToolError, match="could not read 'Saturday 1pm to 2:30pm' as a start"):
        add(ctx, "Lunch", "Saturday 1pm to 2:30pm", end="Saturday 3pm")
    assert add(ctx, "Meeting", "2026-12-02T09:00")["end"] == "2026-12-02T10:00+00:00"  # ISO hyphens: no span


def test_overlaps_are_reported(ctx):
    add(ctx, "Standup", "2026-12-01T09:00", duration_minutes=30)
    clash = add(ctx, "Call with Bo", "2026-12-01T09:15")
    assert clash["overlaps_with"] == ["Standup"]
    assert "overlaps_with" not in add(ctx, "Lunch", "2026-12-01T12:00")


def test_times_are_read_and_shown_in_the_user_zone():
    ctx = make_context(timezone="Europe/Berlin")
    event = add(ctx, "Concert", "2026-12-05T20:00")
    assert event["start"] == "2026-12-05T20:00+01:00"
    events = call(calendar_list_events, ctx, start="2026-12-05", end="2026-12-05")
    assert [e["title"] for e in events] == ["Concert"]


def test_list_range_is_ordered_and_bounded(ctx):
    add(ctx, "Later", "2026-12-03T15:00")
    add(ctx, "Sooner", "2026-12-01T09:00")
    add(ctx, "Far away", "2027-02-01T09:00")
    assert [e["title"] for e in call(calendar_list_events, ctx)] == ["Sooner", "Later"]
    assert [e["title"] for e in call(calendar_list_events, ctx, start="2026-12-02", end="2026-12-03")] == ["Later"]
    assert len(call(calendar_list_events, ctx, start="2026-12-01", days=90)) == 3


def test_delete_event(ctx):
    add(ctx, "Cancelled", "2026-12-01T09:00")
    assert call(calendar_delete_event, ctx, event_id="e1")["deleted"] is True
    assert call(calendar_list_events, ctx) == []
    with pytest.raises(ToolError, match="no event with id 'e1'; calendar_list_events shows the ids"):
        call(calendar_delete_event, ctx, event_id="e1")


def test_free_slots_fit_between_events_within_working_hours(ctx):
    add(ctx, "Standup", "2026-12-01T09:00", duration_minutes=30)
    add(ctx, "Lunch", "2026-12-01T12:00", end="2026-12-01T13:00")
    add(ctx, "Review", "2026-12-01T13:00", end="2026-12-01T16:45")
    slots = call(calendar_free_slots, ctx, start="2026-12-01", end="2026-12-01", duration_minutes=60)
    assert [(s["start"][11:16], s["end"][11:16]) for s in slots] == [("09:30", "12:00")]
    short = call(calendar_free_slots, ctx, start="2026-12-01", end="2026-12-01", duration_minutes=15)
    assert [(s["start"][11:16], s["end"][11:16]) for s in short] == [("09:30", "12:00"), ("16:45", "17:00")]


def test_free_slots_skip_weekends_the_past_and_all_day_events(ctx):
    add(ctx, "Off", "2026-12-02")
    slots = call(calendar_free_slots, ctx, start="today", days=7, duration_minutes=60)
    days = [slot["start"][:10] for slot in slots]
    assert days == ["2026-11-30", "2026-12-01", "2026-12-03", "2026-12-04"]
    assert slots[0]["start"] == "2026-11-30T09:00+00:00"
    weekend = call(calendar_free_slots, ctx, start="2026-12-05", end="2026-12-06", include_weekends=True,
                   day_start="10:00", day_end="12:00")
    assert [slot["minutes"] for slot in weekend] == [120, 120]


def test_ics_export_is_valid_rfc5545(ctx):
    add(ctx, "Dentist, check-up; bring card", "2026-12-01T10:00", location="Main St\\Room 4",
        description="Line one\nLine two " + "é" * 80)
    add(ctx, "Holiday", "2026-12-24", end="2026-12-26")
    exported = call(calendar_export_ics, ctx)
    assert (exported["filename"], exported["media_type"], exported["events"]) == (
        "botpsy-calendar.ics", "text/calendar", 2)
    events = parse_calendar(exported["ics"])
    dentist, holiday = events
    assert unescape(dentist["SUMMARY"][1]) == "Dentist, check-up; bring card"
    assert unescape(dentist["LOCATION"][1]) == "Main St\\Room 4"
    assert unescape(dentist["DESCRIPTION"][1]) == "Line one\nLine two " + "é" * 80
    assert dentist["DTSTART"] == ("", "20261201T100000Z") and dentist["DTEND"] == ("", "20261201T110000Z")
    assert holiday["DTSTART"] == ("VALUE=DATE", "20261224") and holiday["DTEND"] == ("VALUE=DATE", "20261227")


def test_ics_export_of_a_range_and_of_an_empty_calendar(ctx):
    assert parse_calendar(call(calendar_export_ics, ctx)["ics"]) == []
    add(ctx, "December", "2026-12-10T10:00")
    add(ctx, "January", "2027-01-10T10:00")
    ranged = call(calendar_export_ics, ctx, start="2027-01-01", end="2027-01-31")
    assert [unescape(e["SUMMARY"][1]) for e in parse_calendar(ranged["ics"])] == ["January"]


def test_folding_never_splits_a_character():
    line = "DESCRIPTION:" + "日本語" * 40
    folded = fold(line) + "\r\n"
    assert unfold(folded) == [line]


@pytest.mark.parametrize("arguments, message", [
    ({"title": "", "start": "2026-12-01T10:00"}, "event title is empty"),
    ({"title": "x", "start": "someday"}, "could not read 'someday'"),
    ({"title": "x", "start": "2026-12-01T10:00", "end": "2026-12-01T09:00"}, "must end after it starts"),
    ({"title": "x", "start": "2026-12-01T10:00", "duration_minutes": 0}, "duration_minutes must be positive"),
])
def test_add_refusals(ctx, arguments, message):
    with pytest.raises(ToolError, match=message):
        call(calendar_add_event, ctx, **arguments)


def test_range_and_slot_refusals(ctx):
    with pytest.raises(ToolError, match="end of the range must be after"):
        call(calendar_list_events, ctx, start="2026-12-05", end="2026-12-01")
    with pytest.raises(ToolError, match="longer than 366 days"):
        call(calendar_list_events, ctx, start="2026-01-01", end="2028-01-01")
    with pytest.raises(ToolError, match="day_end .* must be after day_start"):
        call(calendar_free_slots, ctx, day_start="17:00", day_end="09:00")
    with pytest.raises(ToolError, match="day_start must be a time"):
        call(calendar_free_slots, ctx, day_start="nine")
