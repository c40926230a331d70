"""Date and time tools: the time now in a zone, zone conversion, date arithmetic."""

from __future__ import annotations

import calendar
import datetime

from botpsy_agent.tooling import ToolContext, ToolError, tool

from .timezones import get_zone, zone_mentions
from .when import describe, has_time_part, parse_datetime

MAX_SPAN_DAYS = 366 * 10_000


def user_zone_name(ctx: ToolContext) -> str:
    """The user's time zone (settings.timezone when the page sets it), else UTC."""
    return getattr(ctx.settings, "timezone", None) or "UTC"


def user_zone(ctx: ToolContext) -> datetime.tzinfo:
    return get_zone(user_zone_name(ctx))


@tool
def current_time(ctx: ToolContext, timezone: str = "") -> dict:
    """The current date and time where the user is, or in the city or time zone asked about.

    Args:
        timezone: The city or place asked about ("New York", "Tokyo"), or an IANA zone ("Europe/Paris") or offset ("+05:30"); empty for where the user is.
    """
    zone = get_zone(timezone) if timezone.strip() else user_zone(ctx)
    return describe(ctx.now().astimezone(zone))


def read_time_and_place(text: str, zone: datetime.tzinfo, now: datetime.datetime) -> datetime.datetime:
    """`text` read in `zone`; when that fails and it names a place ("3pm Tokyo time",
    "18:40 New York time on December 19th"), the rest read in that place's zone."""
    try:
        return parse_datetime(text, zone, now)
    except ToolError as unreadable:
        error = unreadable
    for rest, place_zone in zone_mentions(text):
        try:
            return parse_datetime(rest, place_zone, now)
        except ToolError:
            continue
    raise error


@tool
def convert_time(ctx: ToolContext, time: str, to_timezone: str, from_timezone: str = "") -> dict:
    """Convert a date and time from one time zone to another.

    Args:
        time: The time to convert: "2026-11-30T14:00", "14:00" (today) or "now".
        to_timezone: Zone to convert to: IANA name ("America/New_York"), city, "UTC" or offset.
        from_timezone: Zone the time is written in; empty for the user's zone.
    """
    target = get_zone(to_timezone)
    if from_timezone.strip():
        moment = parse_datetime(time, get_zone(from_timezone), ctx.now())
    else:
        moment = read_time_and_place(time, user_zone(ctx), ctx.now())
    converted = moment.astimezone(target)
    shift = converted.utcoffset() - moment.utcoffset()
    return {"from": describe(moment), "to": describe(converted),
            "difference_hours": shift.total_seconds() / 3600}


@tool
def date_difference(ctx: ToolContext, start: str, end: str) -> dict:
    """How long from one date (or date and time) to another; negative when end is earlier. The
    answer names both days' weekdays too.

    Args:
        start: First date, e.g. "2026-01-01", "2026-01-01T09:30" or "today".
        end: Second date, same forms as start.
    """
    zone, now = user_zone(ctx), ctx.now()
    first, second = parse_datetime(start, zone, now, "start"), parse_datetime(end, zone, now, "end")
    span = second - first
    days = span.days if span >= datetime.timedelta(0) else -((-span).days)
    low, high = sorted((first.date(), second.date()))
    full_weeks, extra = divmod((high - low).days, 7)
    weekdays = full_weeks * 5 + sum(1 for offset in range(extra)
                                    if (low + datetime.timedelta(days=offset)).weekday() < 5)
    answer = {"days": days, "weeks": round(span.total_seconds() / 604800, 2),
              "weekdays": weekdays if span >= datetime.timedelta(0) else -weekdays,
              "start": first.date().isoformat(), "start_weekday": first.strftime("%A"),
              "end": second.date().isoformat(), "end_weekday": second.strftime("%A")}
    if has_time_part(start) or has_time_part(end):
        answer["hours"] = round(span.total_seconds() / 3600, 2)
        answer["minutes"] = round(span.total_seconds() / 60)
    return answer


def add_months(day: datetime.date, months: int) -> datetime.date:
    """Calendar month arithmetic; the day is clamped to the month's length (Jan 31 + 1 month = Feb 28/29)."""
    month_index = day.year * 12 + day.month - 1 + months
    year, month = divmod(month_index, 12)
    if not 1 <= year <= 9999:
        raise ToolError("the resulting date is outside years 1-9999")
    return day.replace(year=year, month=month + 1, day=min(day.day, calendar.monthrange(year, month + 1)[1]))


@tool
def date_add(ctx: ToolContext, date: str, years: int = 0, months: int = 0, weeks: int = 0,
             days: int = 0, hours: int = 0, minutes: int = 0) -> dict:
    """Add (or, with negative numbers, subtract) a duration to a date or date and time.

    Args:
        date: Starting point, e.g. "2026-01-31", "2026-01-31T09:00", "today" or "now".
        years: Years to add.
        months: Months to add (the day is clamped: Jan 31 + 1 month is the last day of February).
        weeks: Weeks to add.
        days: Days to add.
        hours: Hours to add.
        minutes: Minutes to add.
    """
    zone = user_zone(ctx)
    start = parse_datetime(date, zone, ctx.now(), "date")
    rough_days = 366 * abs(years) + 31 * abs(months) + 7 * abs(weeks) + abs(days) + (abs(hours) + abs(minutes) / 60) / 24
    if rough_days > MAX_SPAN_DAYS:
        raise ToolError("the duration is too long (more than 10,000 years)")
    try:
        moved_day = add_months(start.date(), 12 * years + months)
        moved = datetime.datetime.combine(moved_day, start.timetz())
        # Wall-clock arithmetic for days, as a person counts them across DST changes.
        moved = moved + datetime.timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes)
    except OverflowError:
        raise ToolError("the resulting date is outside years 1-9999") from None
    result = describe(moved)
    if not has_time_part(date) and not (hours or minutes):
        result = {"date": result["date"], "weekday": result["weekday"]}
    return result
