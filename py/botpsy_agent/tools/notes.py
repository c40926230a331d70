"""Notes: create, search (BM25-ranked), list, delete. Stored in the "notes" collection."""

from __future__ import annotations

from botpsy_agent.tooling import ToolContext, ToolError, tool

from .bm25 import BM25, snippet, tokenize
from .records import get_record, next_id, require_text, shorten, timestamp

COLLECTION = "notes"
MAX_NOTE_CHARS = 20_000
MAX_TITLE_CHARS = 200


def _title_from(text: str) -> str:
    return shorten(text.strip().splitlines()[0], 60)


@tool(side_effects=True)
async def notes_create(ctx: ToolContext, text: str, title: str = "", tags: list[str] | None = None) -> dict:
    """Save a new note: text the user wants kept. A task to do or a reminder goes in todo_add instead,
    something at a date and time in calendar_add_event.

    Args:
        text: The note's content.
        title: A short title; empty to use the start of the text.
        tags: Labels the user gave, e.g. ["recipes"]; empty when they gave none.
    """
    body = require_text(text, "note text", MAX_NOTE_CHARS)
    heading = title.strip() or _title_from(body)
    if len(heading) > MAX_TITLE_CHARS:
        raise ToolError(f"the title is longer than {MAX_TITLE_CHARS} characters")
    labels = sorted({tag.strip().lower() for tag in tags or [] if tag.strip()})
    note_id = await next_id(ctx.store, COLLECTION, "n")
    note = {"id": note_id, "title": heading, "text": body, "tags": labels, "created": timestamp(ctx)}
    await ctx.store.put(COLLECTION, note_id, note)
    return {"id": note_id, "title": heading, "saved": True}


def _order_key(key: str) -> tuple[int, str]:
    digits = key.lstrip("n")
    return (int(digits) if digits.isdigit() else 0, key)


@tool
async def notes_list(ctx: ToolContext, limit: int = 20, tag: str = "") -> list[dict]:
    """List the user's notes, newest first.

    Args:
        limit: Most notes to return.
        tag: Only notes with this tag; empty for all.
    """
    notes = [note for _, note in await ctx.store.items(COLLECTION)]
    if tag.strip():
        notes = [note for note in notes if tag.strip().lower() in note.get("tags", [])]
    notes.sort(key=lambda note: _order_key(note["id"]), reverse=True)
    return [{"id": note["id"], "title": note["title"], "created": note["created"], "tags": note.get("tags", []),
             "preview": shorten(note["text"], 120)} for note in notes[:max(limit, 0)]]


@tool
async def notes_search(ctx: ToolContext, query: str, limit: int = 5) -> list[dict]:
    """Search the user's notes by words; best matches first.

    Args:
        query: Words to look for.
        limit: Most results to return.
    """
    words = tokenize(require_text(query, "search query", 500))
    if not words:
        raise ToolError(f"the query {query!r} has no searchable words")
    notes = [note for _, note in await ctx.store.items(COLLECTION)]
    # The title and tags count twice: they say what the note is about.
    documents = [tokenize(f"{note['title']} {note['title']} {' '.join(note.get('tags', []))} "
                          f"{' '.join(note.get('tags', []))} {note['text']}") for note in notes]
    ranked = BM25(documents).top(words, max(limit, 0))
    return [{"id": notes[index]["id"], "title": notes[index]["title"], "score": round(score, 3),
             "text": notes[index]["text"] if len(notes[index]["text"]) <= 400
             else snippet(notes[index]["text"], words, 300)} for index, score in ranked]


@tool
async def notes_read(ctx: ToolContext, note_id: str) -> dict:
    """The full text of one note.

    Args:
        note_id: The note's id, as notes_list or notes_search show it (e.g. "n3").
    """
    return await get_record(ctx.store, COLLECTION, note_id, "note", "notes_list")


@tool(side_effects=True)
async def notes_delete(ctx: ToolContext, note_id: str) -> dict:
    """Delete one note for good.

    Args:
        note_id: The note's id, as notes_list or notes_search show it (e.g. "n3").
    """
    note = await get_record(ctx.store, COLLECTION, note_id, "note", "notes_list")
    await ctx.store.delete(COLLECTION, note["id"])
    return {"id": note["id"], "title": note["title"], "deleted": True}
