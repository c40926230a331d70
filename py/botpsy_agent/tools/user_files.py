"""The user's own files (opened or dropped into the page): list, read, search text.

The page stores each file with `add_user_file` in the "user_files" collection as
{name, mime, size, text} (persisted), or hands it to the session in `ctx.files`
(UserFile objects, kept for the session only); the tools see both, and a session
file wins over a stored one of the same name. File content was written by someone
else: every tool here is untrusted_output, so the loop marks what they return as data.
"""

from __future__ import annotations

from botpsy_agent.storage import Store
from botpsy_agent.tooling import ToolContext, ToolError, tool

from .records import require_text

COLLECTION = "user_files"
MAX_FILE_CHARS = 5_000_000
MAX_READ_CHARS = 20_000
SEARCHABLE_TYPES = {"text/plain": "txt", "text/markdown": "md", "text/x-markdown": "md", "text/csv": "csv",
                    "application/json": "json", "application/ld+json": "json"}
SEARCHABLE_EXTENSIONS = ("txt", "md", "markdown", "csv", "json", "jsonl")


def _extension(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def is_searchable(name: str, mime: str) -> bool:
    return mime.split(";")[0].strip().lower() in SEARCHABLE_TYPES or _extension(name) in SEARCHABLE_EXTENSIONS


async def add_user_file(store: Store, name: str, text: str, mime: str = "text/plain") -> dict:
    """Store (or replace) a file the user gave the page; returns its listing entry."""
    file_name = require_text(name, "file name", 255)
    if not isinstance(text, str):
        raise ValueError(f"file {file_name!r}: text must be a string, got {type(text).__name__}")
    if len(text) > MAX_FILE_CHARS:
        raise ValueError(f"file {file_name!r} is larger than {MAX_FILE_CHARS} characters")
    entry = {"name": file_name, "mime": (mime or "text/plain").strip(), "size": len(text.encode("utf-8")),
             "text": text}
    await store.put(COLLECTION, file_name, entry)
    return {key: entry[key] for key in ("name", "mime", "size")}


async def _all_files(ctx: ToolContext) -> dict[str, dict]:
    """name -> {name, mime, size, text} from the store and the session's ctx.files."""
    files = {name: entry for name, entry in await ctx.store.items(COLLECTION)}
    for name, user_file in sorted(getattr(ctx, "files", {}).items()):
        text = user_file.text
        files[name] = {"name": name, "mime": user_file.media_type or "text/plain",
                       "size": user_file.size or len((text or "").encode("utf-8")), "text": text}
    return dict(sorted(files.items()))


async def file_names(ctx: ToolContext) -> list[str]:
    """The names of the user's files, stored and session ones, sorted."""
    return list(await _all_files(ctx))


async def _get_file(ctx: ToolContext, name: str) -> dict:
    cleaned = name.strip() if isinstance(name, str) else ""
    files = await _all_files(ctx)
    entry = files.get(cleaned)
    if entry is None:
        known = f"files: {', '.join(files)}" if files else "the user has not opened any files"
        raise ToolError(f"no file named {name!r}; {known}")
    if entry["text"] is None:
        raise ToolError(f"{entry['name']} ({entry['mime']}) has no text content the assistant can read")
    return entry


@tool(untrusted_output=True)
async def files_list(ctx: ToolContext) -> list[dict]:
    """List the files the user opened or dropped into the page."""
    return [{"name": entry["name"], "mime": entry["mime"], "size": entry["size"],
             "lines": len(entry["text"].splitlines()) if entry["text"] is not None else None}
            for entry in (await _all_files(ctx)).values()]


@tool(untrusted_output=True)
async def files_read(ctx: ToolContext, name: str, offset: int = 0, length: int = 4000) -> dict:
    """Read part of one of the user's files, as text.

    Args:
        name: The file name, as files_list shows it.
        offset: First character to read (0 for the start).
        length: How many characters to read (at most 20000).
    """
    entry = await _get_file(ctx, name)
    if offset < 0:
        raise ToolError(f"offset must be 0 or more, got {offset}")
    if not 1 <= length <= MAX_READ_CHARS:
        raise ToolError(f"length must be between 1 and {MAX_READ_CHARS}, got {length}")
    text = entry["text"]
    if offset > len(text):
        raise ToolError(f"offset {offset} is past the end of {entry['name']} ({len(text)} characters)")
    piece = text[offset:offset + length]
    answer = {"name": entry["name"], "offset": offset, "total_chars": len(text), "text": piece}
    if offset + len(piece) < len(text):
        answer["next_offset"] = offset + len(piece)
    return answer


@tool(untrusted_output=True)
async def files_search(ctx: ToolContext, query: str, name: str = "", limit: int = 20) -> list[dict]:
    """Find lines containing all the words of a query in the user's text files (txt, md, csv, json).

    Args:
        query: Words to look for (case does not matter).
        name: Only search this file; empty for all files.
        limit: Most matching lines to return.
    """
    words = require_text(query, "search query", 500).lower().split()
    entries = ([await _get_file(ctx, name)] if name.strip()
               else [entry for entry in (await _all_files(ctx)).values() if entry["text"] is not None])
    matches = []
    for entry in entries:
        if not is_searchable(entry["name"], entry["mime"]):
            if name.strip():
                raise ToolError(f"{entry['name']} ({entry['mime']}) is not a txt, md, csv or json file")
            continue
        for number, line in enumerate(entry["text"].splitlines(), start=1):
            lowered = line.lower()
            if all(word in lowered for word in words):
                matches.append({"name": entry["name"], "line": number, "text": line.strip()[:300]})
                if len(matches) >= max(limit, 0):
                    return matches
    return matches
