"""search_docs: offline search over the help documents bundled in data/docs (BM25).

Each document is split into passages at its "## " headings; results are passages,
best first. The documents are plain files that anyone may edit, so results are
marked untrusted_output like any other text the model did not write.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from botpsy_agent.tooling import ToolContext, ToolError, tool

from .bm25 import BM25, tokenize
from .records import require_text

MAX_PASSAGE_CHARS = 1200


@dataclass(frozen=True)
class Passage:
    document: str      # file name without .md
    title: str         # the document's "# " title
    section: str       # the "## " heading, empty for the introduction
    text: str


def split_passages(name: str, markdown: str) -> list[Passage]:
    """A document's passages: the text under its title, then one per "## " section."""
    lines = markdown.strip().splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ValueError(f"document {name!r} must start with a '# ' title line")
    title = lines[0][2:].strip()
    passages, section, body = [], "", []
    for line in lines[1:] + ["## "]:
        if line.startswith("## "):
            text = "\n".join(body).strip()
            if text:
                passages.append(Passage(name, title, section, text))
            section, body = line[3:].strip(), []
        else:
            body.append(line)
    return passages


@lru_cache(maxsize=1)
def bundled_passages() -> tuple[Passage, ...]:
    folder = resources.files("botpsy_agent.tools").joinpath("data/docs")
    passages: list[Passage] = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".md"):
            passages += split_passages(entry.name[:-3], entry.read_text(encoding="utf-8"))
    return tuple(passages)


@lru_cache(maxsize=1)
def _index() -> BM25:
    # Titles and headings say what a passage is about: they count twice.
    return BM25([tokenize(f"{p.title} {p.title} {p.section} {p.section} {p.text}") for p in bundled_passages()])


@tool(untrusted_output=True)
def search_docs(ctx: ToolContext, query: str, limit: int = 3) -> list[dict]:
    """Search botpsy-web's built-in help (privacy, tools, settings, files, troubleshooting).

    Args:
        query: Words to look for, e.g. "export calendar" or "is my data uploaded".
        limit: Most passages to return.
    """
    words = tokenize(require_text(query, "search query", 500))
    if not words:
        raise ToolError(f"the query {query!r} has no searchable words")
    passages = bundled_passages()
    return [{"document": passages[index].document, "title": passages[index].title,
             "section": passages[index].section, "score": round(score, 3),
             "text": passages[index].text[:MAX_PASSAGE_CHARS]}
            for index, score in _index().top(words, max(limit, 0))]
