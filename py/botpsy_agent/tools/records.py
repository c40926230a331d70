"""Small helpers for tools that keep records in the store: ids, timestamps, lookups."""

from __future__ import annotations

import datetime
from typing import Any

from botpsy_agent.storage import Store
from botpsy_agent.tooling import ToolContext, ToolError

COUNTERS = "counters"


async def next_id(store: Store, collection: str, prefix: str) -> str:
    """A short id such as "n7" that no record of `collection` holds: easy for a small model to copy
    exactly. The counter only says where to look first: when it and the records disagree (storage
    partly cleared, data restored from elsewhere) taken ids are skipped, so creating a record
    never replaces one."""
    number = await store.get(COUNTERS, collection) or 0
    number += 1
    while await store.has(collection, f"{prefix}{number}"):
        number += 1
    await store.put(COUNTERS, collection, number)
    return f"{prefix}{number}"


def timestamp(ctx: ToolContext) -> str:
    """Now, as ISO 8601 in UTC to the second."""
    return ctx.now().astimezone(datetime.timezone.utc).isoformat(timespec="seconds")


async def get_record(store: Store, collection: str, record_id: str, kind: str, list_tool: str) -> dict[str, Any]:
    """The record, or a ToolError that says how to find valid ids."""
    cleaned = record_id.strip() if isinstance(record_id, str) else ""
    record = await store.get(collection, cleaned) if cleaned else None
    if record is None:
        raise ToolError(f"no {kind} with id {record_id!r}; {list_tool} shows the ids")
    return record


def shorten(text: str, limit: int) -> str:
    """Text cut at a word boundary to about `limit` characters, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut + "…"


def require_text(value: str, what: str, limit: int) -> str:
    """Stripped non-empty text of at most `limit` characters, else ToolError naming `what`."""
    cleaned = value.strip() if isinstance(value, str) else ""
    if not cleaned:
        raise ToolError(f"the {what} is empty")
    if len(cleaned) > limit:
        raise ToolError(f"the {what} is longer than {limit} characters ({len(cleaned)})")
    return cleaned
