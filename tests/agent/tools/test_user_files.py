"""The user's files: listed, read in parts, searched; always marked untrusted."""

import asyncio

import pytest

from botpsy_agent.tooling import ToolError, UserFile
from botpsy_agent.tools import add_user_file
from botpsy_agent.tools.user_files import files_list, files_read, files_search

from .conftest import call

CSV = "item,qty\nmilk,2\neggs,12\nEgg noodles,1\n"


def store_file(ctx, name, text, mime="text/plain"):
    return asyncio.run(add_user_file(ctx.store, name, text, mime))


def test_added_files_are_listed(ctx):
    assert store_file(ctx, "shopping.csv", CSV, "text/csv") == {"name": "shopping.csv", "mime": "text/csv",
                                                                  "size": len(CSV)}
    store_file(ctx, "café.md", "# Menu\nCrème brûlée\n", "text/markdown")
    listed = call(files_list, ctx)
    assert [(f["name"], f["lines"]) for f in listed] == [("café.md", 2), ("shopping.csv", 4)]
    assert listed[0]["size"] == len("# Menu\nCrème brûlée\n".encode("utf-8"))


def test_read_in_parts_with_next_offset(ctx):
    store_file(ctx, "long.txt", "abcdefghij" * 10)
    first = call(files_read, ctx, name="long.txt", length=30)
    assert (first["text"], first["next_offset"], first["total_chars"]) == ("abcdefghij" * 3, 30, 100)
    last = call(files_read, ctx, name="long.txt", offset=90, length=30)
    assert last["text"] == "abcdefghij" and "next_offset" not in last


def test_search_finds_lines_with_all_words_in_text_files(ctx):
    store_file(ctx, "shopping.csv", CSV, "text/csv")
    store_file(ctx, "notes.md", "Buy eggs on Friday\nnothing here\n", "text/markdown")
    store_file(ctx, "photo.png", "eggs eggs", "image/png")
    hits = call(files_search, ctx, query="EGG")
    assert [(h["name"], h["line"], h["text"]) for h in hits] == [
        ("notes.md", 1, "Buy eggs on Friday"), ("shopping.csv", 3, "eggs,12"), ("shopping.csv", 4, "Egg noodles,1")]
    assert [h["line"] for h in call(files_search, ctx, query="egg noodles")] == [4]
    assert len(call(files_search, ctx, query="e", limit=2)) == 2
    assert [h["name"] for h in call(files_search, ctx, query="eggs", name="notes.md")] == ["notes.md"]
    with pytest.raises(ToolError, match="not a txt, md, csv or json file"):
        call(files_search, ctx, query="eggs", name="photo.png")


def test_session_files_from_the_context_are_seen_too(ctx):
    ctx.files["dropped.json"] = UserFile(name="dropped.json", size=17, media_type="application/json",
                                         text='{"city": "Oslo"}\n')
    ctx.files["scan.pdf"] = UserFile(name="scan.pdf", size=1000, media_type="application/pdf", text=None)
    assert [f["name"] for f in call(files_list, ctx)] == ["dropped.json", "scan.pdf"]
    assert call(files_search, ctx, query="oslo")[0]["name"] == "dropped.json"
    with pytest.raises(ToolError, match="no text content"):
        call(files_read, ctx, name="scan.pdf")


def test_refusals_name_the_files_that_exist(ctx):
    with pytest.raises(ToolError, match="has not opened any files"):
        call(files_read, ctx, name="x.txt")
    store_file(ctx, "a.txt", "hello")
    with pytest.raises(ToolError, match="no file named 'b.txt'; files: a.txt"):
        call(files_read, ctx, name="b.txt")
    with pytest.raises(ToolError, match="length must be between 1 and 20000"):
        call(files_read, ctx, name="a.txt", length=50_000)
    with pytest.raises(ToolError, match="past the end"):
        call(files_read, ctx, name="a.txt", offset=6)
    with pytest.raises(ToolError, match="offset must be 0 or more"):
        call(files_read, ctx, name="a.txt", offset=-1)
    with pytest.raises(ValueError, match="text must be a string"):
        asyncio.run(add_user_file(ctx.store, "bin", b"\x00", "application/octet-stream"))


def test_file_tools_are_untrusted_and_read_only():
    for tool in (files_list, files_read, files_search):
        assert tool.untrusted_output and not tool.side_effects


def test_adding_a_file_again_replaces_it_and_size_is_limited(ctx):
    store_file(ctx, "a.txt", "old")
    store_file(ctx, "a.txt", "new text")
    assert call(files_read, ctx, name="a.txt")["text"] == "new text"
    assert len(call(files_list, ctx)) == 1
    with pytest.raises(ValueError, match="larger than"):
        store_file(ctx, "huge.txt", "x" * 5_000_001)
