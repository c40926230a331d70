"""Todos and reminders: add, list, complete, delete. Stored in "todos".

A todo with a `due` time is a reminder: `due_reminders` tells the page which ones
are due, so it can notify the user (the agent does not run in the background).
"""

from __future__ import annotations

import datetime
from typing import Literal

from botpsy_agent.storage import Store
from botpsy_agent.tooling import ToolContext, ToolError, tool

from .clock import user_zone
from .records import get_record, next_id, require_text, timestamp
from .when import has_time_part, parse_datetime

COLLECTION = "todos"


def _shown(todo: dict, zone: datetime.tzinfo) -> dict:
    shown = {"id": todo["id"], "text": todo["text"], "done": todo["done"]}
    if todo.get("due"):
        due = datetime.datetime.fromisoformat(todo["due"])
        shown["due"] = due.astimezone(zone).isoformat(timespec="minutes")
    return shown


def _due_order(todo: dict) -> tuple:
    due = todo.get("due")
    number = todo["id"].lstrip("t")
    # Todos with a due time first (soonest first), then the rest in the order they were added.
    return (due is None, datetime.datetime.fromisoformat(due) if due else None, int(number) if number.isdigit() else 0)


@tool(side_effects=True, said_when="due")
async def todo_add(ctx: ToolContext, text: str, due: str = "") -> dict:
    """Add a to-do: a task, or a reminder ("remind me to ..."); with a due time it is also a reminder.

    Args:
        text: What needs doing.
        due: When it is due, as the person said it ("tomorrow 9am", "friday", "in 2 hours") or ISO ("2026-12-01T09:00"); empty for no due time.
    """
    task = require_text(text, "todo text", 1000)
    due_at = None
    if due.strip():
        moment = parse_datetime(due, user_zone(ctx), ctx.now(), "due time")
        if not has_time_part(due):
            moment = moment.replace(hour=9)    # a day alone: remind in the morning
        due_at = moment.isoformat()
    todo_id = await next_id(ctx.store, COLLECTION, "t")
    todo = {"id": todo_id, "text": task, "due": due_at, "done": False, "created": timestamp(ctx),
            "completed": None}
    await ctx.store.put(COLLECTION, todo_id, todo)
    return {**_shown(todo, user_zone(ctx)), "saved": True}


@tool
async def todo_list(ctx: ToolContext, status: Literal["open", "done", "all"] = "open") -> list[dict]:
    """List todos and reminders; those with a due time first, soonest first.

    Args:
        status: "open" for not yet done, "done" for completed, "all" for both.
    """
    todos = [todo for _, todo in await ctx.store.items(COLLECTION)]
    if status != "all":
        todos = [todo for todo in todos if todo["done"] == (status == "done")]
    zone = user_zone(ctx)
    return [_shown(todo, zone) for todo in sorted(todos, key=_due_order)]


@tool(side_effects=True)
async def todo_complete(ctx: ToolContext, todo_id: str) -> dict:
    """Mark a todo as done.

    Args:
        todo_id: The todo's id, as todo_list shows it (e.g. "t4").
    """
    todo = await get_record(ctx.store, COLLECTION, todo_id, "todo", "todo_list")
    if todo["done"]:
        raise ToolError(f"todo {todo['id']} ({todo['text']!r}) is already done")
    todo.update(done=True, completed=timestamp(ctx))
    await ctx.store.put(COLLECTION, todo["id"], todo)
    return _shown(todo, user_zone(ctx))


@tool(side_effects=True)
async def todo_delete(ctx: ToolContext, todo_id: str) -> dict:
    """Delete a todo for good.

    Args:
        todo_id: The todo's id, as todo_list shows it (e.g. "t4").
    """
    todo = await get_record(ctx.store, COLLECTION, todo_id, "todo", "todo_list")
    await ctx.store.delete(COLLECTION, todo["id"])
    return {"id": todo["id"], "text": todo["text"], "deleted": True}


async def due_reminders(store: Store, now: datetime.datetime) -> list[dict]:
    """Open todos whose due time has come, soonest first: for the page to notify about."""
    todos = [todo for _, todo in await store.items(COLLECTION)]
    due = [todo for todo in todos
           if not todo["done"] and todo.get("due") and datetime.datetime.fromisoformat(todo["due"]) <= now]
    return [{"id": todo["id"], "text": todo["text"], "due": todo["due"]} for todo in sorted(due, key=_due_order)]
