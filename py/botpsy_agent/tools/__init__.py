"""The built-in tools: one module per tool family; `builtin_tools()` lists them all.

Everything here is pure Python with no threads or blocking I/O, so the same code
runs under CPython (tests) and in Pyodide (the page). State goes through ctx.store.
"""

from __future__ import annotations

from botpsy_agent.tooling import Tool

from . import (calculator, calendar_events, clock, doc_search, notes, outbox, python_sandbox, todos, units,
               user_files, web_fetch)
from .todos import due_reminders
from .user_files import add_user_file

__all__ = ["add_user_file", "builtin_tools", "due_reminders"]


def builtin_tools() -> list[Tool]:
    """Every built-in tool, in the order they are offered to the model."""
    return [
        calculator.calculator,
        clock.current_time, clock.convert_time, clock.date_difference, clock.date_add,
        units.convert_units,
        notes.notes_create, notes.notes_search, notes.notes_list, notes.notes_read, notes.notes_delete,
        calendar_events.calendar_add_event, calendar_events.calendar_list_events,
        calendar_events.calendar_delete_event, calendar_events.calendar_free_slots,
        calendar_events.calendar_export_ics,
        todos.todo_add, todos.todo_list, todos.todo_complete, todos.todo_delete,
        user_files.files_list, user_files.files_read, user_files.files_search,
        python_sandbox.run_python,
        doc_search.search_docs,
        outbox.outbox_draft, outbox.outbox_send, outbox.outbox_list,
        web_fetch.fetch_url,
    ]
