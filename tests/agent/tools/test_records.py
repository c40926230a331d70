"""Record ids: creating a note, event, todo or draft never replaces a record that is already stored,
even when the id counter and the records disagree (storage partly cleared, data restored)."""

import asyncio

import pytest

from botpsy_agent.provenance import ProvenanceStore
from botpsy_agent.tools.calendar_events import calendar_add_event
from botpsy_agent.tools.notes import notes_create, notes_read
from botpsy_agent.tools.records import COUNTERS, next_id
from botpsy_agent.tools.todos import todo_add

from .conftest import call


def store_run(coroutine):
    return asyncio.run(coroutine)


@pytest.mark.parametrize("counter", [None, 0, 1])  # lost, reset, or behind the restored records
def test_creating_a_note_skips_ids_that_are_taken_whatever_the_counter_says(ctx, counter):
    restored = {"id": "n1", "title": "Passport number", "text": "restored from a backup", "tags": [], "created": "x"}
    store_run(ctx.store.put("notes", "n1", restored))
    store_run(ctx.store.put("notes", "n2", {**restored, "id": "n2"}))
    if counter is None:
        store_run(ctx.store.delete(COUNTERS, "notes"))
    else:
        store_run(ctx.store.put(COUNTERS, "notes", counter))

    created = call(notes_create, ctx, text="a new note")

    assert created["id"] == "n3"
    assert call(notes_read, ctx, note_id="n1")["text"] == "restored from a backup"
    assert call(notes_create, ctx, text="and another")["id"] == "n4"


def test_events_and_todos_never_replace_a_stored_one_either(ctx):
    first_event = call(calendar_add_event, ctx, title="Dentist", start="2026-12-01 10:00")
    first_todo = call(todo_add, ctx, text="call the dentist")
    store_run(ctx.store.delete(COUNTERS, "calendar"))  # the counters lost, the records kept
    store_run(ctx.store.delete(COUNTERS, "todos"))
    event = call(calendar_add_event, ctx, title="Haircut", start="2026-12-02 10:00")
    todo = call(todo_add, ctx, text="book a haircut")
    assert event["id"] != first_event["id"] and todo["id"] != first_todo["id"]
    assert store_run(ctx.store.get("calendar", first_event["id"]))["title"] == "Dentist"
    assert store_run(ctx.store.get("todos", first_todo["id"]))["text"] == "call the dentist"


def test_looking_for_a_free_id_reads_no_marked_record(ctx):
    """Skipping a taken id must not make the turn untrusted: only whether the id is taken is asked."""
    store_run(ctx.store.put("notes", "n1", {"id": "n1", "provenance": {"untrusted": True, "source": "the tool files_read"}}))
    store = ProvenanceStore(ctx.store, untrusted_source=None)
    assert store_run(next_id(store, "notes", "n")) == "n2"
    assert store.read_from == []
