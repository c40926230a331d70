"""Calendar: add, list and delete events, find free time, export .ics. Stored in "calendar"."""

from __future__ import annotations

import datetime

from botpsy_agent.tooling import ToolContext, ToolError, tool

from .clock import user_zone
from .ics import calendar_text
from .records import get_record, next_id, require_text, timestamp
from .when import has_time_part, parse_datetime, parse_range

COLLECTION = "calendar"
MAX_RANGE_DAYS = 366
MAX_SLOTS = 50


def _event_times(event: dict) -> tuple[datetime.datetime, datetime.datetime]:
    return datetime.datetime.fromisoformat(event["start"]), datetime.datetime.fromisoformat(event["end"])


def _range(ctx: ToolContext, start: str, end: str, days: int) -> tuple[datetime.datetime, datetime.datetime]:
    """[first, last) from the arguments; a date-only end includes that whole day."""
    zone, now = user_zone(ctx), ctx.now()
    first = parse_datetime(start or "today", zone, now, "start")
    if end.strip():
        last = parse_datetime(end, zone, now, "end")
        if not has_time_part(end):
            last += datetime.timedelta(days=1)
    else:
        if days < 1:
            raise ToolError(f"days must be at least 1, got {days}")
        last = first + datetime.timedelta(days=days)
    if last <= first:
        raise ToolError("the end of the range must be after its start")
    if last - first > datetime.timedelta(days=MAX_RANGE_DAYS):
        raise ToolError(f"the range is longer than {MAX_RANGE_DAYS} days")
    return first, last


async def _events_between(ctx: ToolContext, first: datetime.datetime, last: datetime.datetime) -> list[dict]:
    events = [event for _, event in await ctx.store.items(COLLECTION)]
    overlapping = []
    for event in events:
        event_start, event_end = _event_times(event)
        if event_start < last and event_end > first:
            overlapping.append(event)
    return sorted(overlapping, key=lambda event: _event_times(event)[0])


def _shown(event: dict, zone: datetime.tzinfo) -> dict:
    start, end = _event_times(event)
    shown = {"id": event["id"], "title": event["title"]}
    if event.get("all_day"):
        shown.update(start=start.date().isoformat(), end=(end - datetime.timedelta(days=1)).date().isoformat(),
                     all_day=True)
    else:
        shown.update(start=start.astimezone(zone).isoformat(timespec="minutes"),
                     end=end.astimezone(zone).isoformat(timespec="minutes"))
    for key in ("location", "description"):
        if event.get(key):
            shown[key] = event[key]
    return shown


@tool(side_effects=True, said_when="start")
async def calendar_add_event(ctx: ToolContext, title: str, start: str, end: str = "",
                             duration_minutes: int = 60, location: str = "", description: str = "") -> dict:
    """Add an event to the user's calendar. A start without a time makes an all-day event.

    Args:
        title: What the event is.
        start: When it starts, as the person said it ("friday 1pm", "tomorrow morning", "in 2 hours") or ISO ("2026-12-03T15:00"); a day alone ("friday") makes an all-day event.
        end: When it ends; empty to use duration_minutes (or one day for all-day events).
        duration_minutes: Length when no end is given.
        location: Where it takes place, only if the person said so.
        description: Longer details.
    """
    name = require_text(title, "event title", 200)
    zone, now = user_zone(ctx), ctx.now()
    span = None if end.strip() else _span(start, zone, now)
    begins = span[0] if span else parse_datetime(start, zone, now, "start")
    all_day = not has_time_part(start)
    if span:                                        # "saturday 1pm to 2:30pm" written as the start
        ends = span[1] + (datetime.timedelta(days=1) if all_day else datetime.timedelta())
    elif end.strip():
        ends = parse_datetime(end, zone, now, "end")
        if all_day and not has_time_part(end):
            ends += datetime.timedelta(days=1)      # an all-day event's last day is included
    elif all_day:
        ends = begins + datetime.timedelta(days=1)
    else:
        if duration_minutes <= 0:
            raise ToolError(f"duration_minutes must be positive, got {duration_minutes}")
        ends = begins + datetime.timedelta(minutes=duration_minutes)
    if ends <= begins:
        raise ToolError(f"the event must end after it starts ({start!r} to {end!r})")
    event_id = await next_id(ctx.store, COLLECTION, "e")
    event = {"id": event_id, "title": name, "start": begins.isoformat(), "end": ends.isoformat(),
             "all_day": all_day, "location": location.strip(), "description": description.strip(),
             "created": timestamp(ctx)}
    await ctx.store.put(COLLECTION, event_id, event)
    clashes = [other["title"] for other in await _events_between(ctx, begins, ends) if other["id"] != event_id]
    result = {**_shown(event, zone), "saved": True}
    if clashes and not all_day:
        result["overlaps_with"] = clashes
    return result


def _span(start: str, zone: datetime.tzinfo, now: datetime.datetime):
    """Both ends when `start` holds a whole span and reads as nothing else, else None."""
    try:
        parse_datetime(start, zone, now, "start")
        return None
    except ToolError:
        return parse_range(start, zone, now, "start")


@tool
async def calendar_list_events(ctx: ToolContext, start: str = "today", end: str = "", days: int = 7) -> list[dict]:
    """List calendar events in a date range, in time order.

    Args:
        start: First day (or moment) of the range, e.g. "today" or "2026-12-01".
        end: Last day of the range (included); empty to use days.
        days: Length of the range in days when end is empty.
    """
    first, last = _range(ctx, start, end, days)
    zone = user_zone(ctx)
    return [_shown(event, zone) for event in await _events_between(ctx, first, last)]


@tool(side_effects=True)
async def calendar_delete_event(ctx: ToolContext, event_id: str) -> dict:
    """Delete one calendar event.

    Args:
        event_id: The event's id, as calendar_list_events shows it (e.g. "e2").
    """
    event = await get_record(ctx.store, COLLECTION, event_id, "event", "calendar_list_events")
    await ctx.store.delete(COLLECTION, event["id"])
    return {"id": event["id"], "title": event["title"], "deleted": True}


def _parse_clock(value: str, what: str) -> datetime.time:
    try:
        return datetime.time.fromisoformat(value.strip())
    except ValueError:
        raise ToolError(f"{what} must be a time like 09:00, got {value!r}") from None


@tool
async def calendar_free_slots(ctx: ToolContext, start: str = "today", end: str = "", days: int = 5,
                              duration_minutes: int = 30, day_start: str = "09:00", day_end: str = "17:00",
                              include_weekends: bool = False) -> list[dict]:
    """Find free periods in the calendar, within working hours, long enough for a meeting.

    Args:
        start: First day to look at, e.g. "today" or "2026-12-01".
        end: Last day to look at (included); empty to use days.
        days: How many days to look at when end is empty.
        duration_minutes: Shortest free period wanted.
        day_start: When the working day starts, e.g. "09:00".
        day_end: When the working day ends, e.g. "17:00".
        include_weekends: Also look at Saturdays and Sundays.
    """
    if duration_minutes <= 0:
        raise ToolError(f"duration_minutes must be positive, got {duration_minutes}")
    opens, closes = _parse_clock(day_start, "day_start"), _parse_clock(day_end, "day_end")
    if closes <= opens:
        raise ToolError(f"day_end ({day_end}) must be after day_start ({day_start})")
    zone = user_zone(ctx)
    first, last = _range(ctx, start, end, days)
    busy = [_event_times(event) for event in await _events_between(ctx, first, last)]
    needed = datetime.timedelta(minutes=duration_minutes)
    now = ctx.now()
    slots = []
    day = first.astimezone(zone).date()
    while datetime.datetime.combine(day, datetime.time(), zone) < last and len(slots) < MAX_SLOTS:
        if include_weekends or day.weekday() < 5:
            window_start = max(datetime.datetime.combine(day, opens, zone), first, now)
            window_end = min(datetime.datetime.combine(day, closes, zone), last)
            cursor = window_start
            for busy_start, busy_end in sorted(busy):
                if busy_end <= cursor or busy_start >= window_end:
                    continue
                if busy_start - cursor >= needed:
                    slots.append((cursor, busy_start))
                cursor = max(cursor, busy_end)
            if window_end - cursor >= needed:
                slots.append((cursor, window_end))
        day += datetime.timedelta(days=1)
    return [{"start": begin.astimezone(zone).isoformat(timespec="minutes"),
             "end": finish.astimezone(zone).isoformat(timespec="minutes"),
             "minutes": int((finish - begin).total_seconds() // 60)} for begin, finish in slots[:MAX_SLOTS]]


@tool
async def calendar_export_ics(ctx: ToolContext, start: str = "", end: str = "") -> dict:
    """Export calendar events as an iCalendar (.ics) file that other calendar apps import.

    Args:
        start: First day to export; empty to export every event.
        end: Last day to export (included); empty for a year from start.
    """
    if start.strip():
        first, last = _range(ctx, start, end, MAX_RANGE_DAYS)
        events = await _events_between(ctx, first, last)
    else:
        events = sorted((event for _, event in await ctx.store.items(COLLECTION)),
                        key=lambda event: _event_times(event)[0])
    return {"filename": "botpsy-calendar.ics", "media_type": "text/calendar", "events": len(events),
            "ics": calendar_text(events, ctx.now())}
