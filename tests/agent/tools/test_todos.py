"""Todos and reminders. The clock is Monday 2026-11-30 08:00 UTC."""

import asyncio
import datetime

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools import due_reminders
from botpsy_agent.tools.todos import todo_add, todo_complete, todo_delete, todo_list

from .conftest import FIXED_NOW, call, make_context


def test_add_with_and_without_due_time(ctx):
    plain = call(todo_add, ctx, text="Water the plants")
    assert plain == {"id": "t1", "text": "Water the plants", "done": False, "saved": True}
    timed = call(todo_add, ctx, text="Call mum", due="2026-12-01T18:30")
    assert timed["due"] == "2026-12-01T18:30+00:00"
    morning = call(todo_add, ctx, text="Pay rent", due="friday")
    assert morning["due"] == "2026-12-04T09:00+00:00"


def test_list_shows_due_first_soonest_first_then_the_rest(ctx):
    call(todo_add, ctx, text="No date")
    call(todo_add, ctx, text="Later", due="2026-12-10T10:00")
    call(todo_add, ctx, text="Sooner", due="2026-12-02T10:00")
    assert [todo["text"] for todo in call(todo_list, ctx)] == ["Sooner", "Later", "No date"]


def test_complete_moves_a_todo_to_done(ctx):
    call(todo_add, ctx, text="A")
    call(todo_add, ctx, text="B")
    assert call(todo_complete, ctx, todo_id="t1")["done"] is True
    assert [todo["id"] for todo in call(todo_list, ctx)] == ["t2"]
    assert [todo["id"] for todo in call(todo_list, ctx, status="done")] == ["t1"]
    assert len(call(todo_list, ctx, status="all")) == 2
    with pytest.raises(ToolError, match="already done"):
        call(todo_complete, ctx, todo_id="t1")


def test_delete(ctx):
    call(todo_add, ctx, text="Temporary")
    assert call(todo_delete, ctx, todo_id=" t1 ")["deleted"] is True
    assert call(todo_list, ctx, status="all") == []
    with pytest.raises(ToolError, match="no todo with id 't1'; todo_list shows the ids"):
        call(todo_delete, ctx, todo_id="t1")


def test_due_reminders_lists_open_todos_whose_time_has_come():
    ctx = make_context(timezone="Europe/Paris")
    call(todo_add, ctx, text="Past", due="2026-11-30T08:30")       # 07:30 UTC: due
    call(todo_add, ctx, text="Future", due="2026-11-30T10:00")     # 09:00 UTC: not yet
    call(todo_add, ctx, text="Done already", due="2026-11-29T10:00")
    call(todo_complete, ctx, todo_id="t3")
    call(todo_add, ctx, text="No due time")
    due = asyncio.run(due_reminders(ctx.store, FIXED_NOW))
    assert [reminder["text"] for reminder in due] == ["Past"]
    later = asyncio.run(due_reminders(ctx.store, FIXED_NOW + datetime.timedelta(hours=2)))
    assert [reminder["text"] for reminder in later] == ["Past", "Future"]


def test_refusals(ctx):
    with pytest.raises(ToolError, match="todo text is empty"):
        call(todo_add, ctx, text="")
    with pytest.raises(ToolError, match="could not read 'the day after'"):
        call(todo_add, ctx, text="x", due="the day after")
