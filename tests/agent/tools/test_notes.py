"""Notes: what the user saves can be found, listed, read and deleted; nothing else changes."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.notes import notes_create, notes_delete, notes_list, notes_read, notes_search

from .conftest import call


def add(ctx, text, **extra):
    return call(notes_create, ctx, text=text, **extra)


def test_create_assigns_short_ids_and_titles(ctx):
    first = add(ctx, "Buy milk and eggs\nfor the weekend")
    second = add(ctx, "Quarterly planning", title="Meeting", tags=["Work", " work ", "plans"])
    assert (first["id"], first["title"]) == ("n1", "Buy milk and eggs")
    assert (second["id"], second["title"]) == ("n2", "Meeting")
    assert call(notes_read, ctx, note_id="n2")["tags"] == ["plans", "work"]


def test_search_ranks_the_best_match_first(ctx):
    add(ctx, "Garden ideas: tomatoes, basil and other herbs along the fence")
    add(ctx, "Budget meeting with Anna: review the quarterly budget and travel costs", title="Budget")
    add(ctx, "Call the plumber about the leaking kitchen tap")
    results = call(notes_search, ctx, query="budget meetings")
    assert [result["id"] for result in results] == ["n2"]
    assert results[0]["score"] > 0
    assert call(notes_search, ctx, query="tomato")[0]["id"] == "n1"
    assert call(notes_search, ctx, query="astronomy") == []


def test_search_returns_snippets_of_long_notes(ctx):
    long_text = "filler words here. " * 60 + "The secret ingredient is cardamom. " + "more filler. " * 60
    add(ctx, long_text, title="Recipe")
    result = call(notes_search, ctx, query="cardamom")[0]
    assert "cardamom" in result["text"]
    assert len(result["text"]) < 400


def test_list_is_newest_first_and_filters_by_tag(ctx):
    for number in range(12):
        add(ctx, f"note number {number}", tags=["even"] if number % 2 == 0 else [])
    listed = call(notes_list, ctx, limit=3)
    assert [note["id"] for note in listed] == ["n12", "n11", "n10"]
    assert {note["id"] for note in call(notes_list, ctx, tag="EVEN")} == {f"n{i}" for i in range(1, 13, 2)}


def test_delete_removes_one_note_and_ids_are_not_reused(ctx):
    add(ctx, "keep me")
    add(ctx, "delete me")
    assert call(notes_delete, ctx, note_id="n2")["deleted"] is True
    assert [note["id"] for note in call(notes_list, ctx)] == ["n1"]
    assert add(ctx, "new one")["id"] == "n3"
    with pytest.raises(ToolError, match="no note with id 'n2'; notes_list shows the ids"):
        call(notes_delete, ctx, note_id="n2")


def test_bad_input_is_refused(ctx):
    with pytest.raises(ToolError, match="note text is empty"):
        add(ctx, "   ")
    with pytest.raises(ToolError, match="longer than"):
        add(ctx, "x" * 20_001)
    with pytest.raises(ToolError, match="no searchable words"):
        call(notes_search, ctx, query="the and of")
    with pytest.raises(ToolError, match="no note with id"):
        call(notes_read, ctx, note_id="")


def test_only_changing_tools_have_side_effects():
    assert notes_create.side_effects and notes_delete.side_effects
    assert not (notes_list.side_effects or notes_search.side_effects or notes_read.side_effects)
