"""Provenance of stored data: what a tool stores remembers whether untrusted content was behind it.

A turn that has read untrusted content (a file, a web page, a note that itself came from one)
may be following instructions written there, so every record a tool stores during that turn is
marked with where the content came from. Reading a marked record back later makes the reading
turn untrusted, exactly like reading the file itself: the model gets it as data, and
side-effecting calls need the person's confirmation again, pre-approved or not. What the person
typed, stored in a turn that read nothing untrusted, stays unmarked.

The mark lives in the stored record (a JSON object) under PROVENANCE_KEY, so it survives reloads.
`ProvenanceStore` wraps the store one tool call gets: it stamps what is put and notices marked
records in what is read, so no tool can forget either. A mark is never removed by a later write.

Answers are marked the same way: the final event of a turn whose prompt held untrusted content
lists what was read (`UntrustedRead`), and the page shows that beside the answer, outside its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .storage import Store

PROVENANCE_KEY = "provenance"
STORED_PREFIX = "stored data that came from "


def mark_of(value: Any) -> dict | None:
    """The provenance mark of a stored value ({"untrusted": True, "source": ...}), or None."""
    if isinstance(value, dict) and isinstance(value.get(PROVENANCE_KEY), dict):
        return value[PROVENANCE_KEY] if value[PROVENANCE_KEY].get("untrusted") else None
    return None


def stored_data_source(read_from: list[str]) -> str:
    """What made a turn untrusted when it read marked records: their first sources, so a note
    copied from a note of a file says "stored data that came from the tool files_read" however
    many times it was copied (never "stored data that came from stored data that came from ...")."""
    origins: list[str] = []
    for source in read_from:
        for origin in source.removeprefix(STORED_PREFIX).split(", "):
            if origin not in origins:
                origins.append(origin)
    return STORED_PREFIX + ", ".join(origins)


@dataclass(frozen=True)
class UntrustedRead:
    """One tool result the model read as data, in the shape the final event carries it
    (`untrusted_reads`, docs/contracts.md section 3): an answer written after it may be steered by
    what it said. Built by `Conversation.untrusted_reads` from the tool results the loop itself
    marked untrusted, never from anything the model wrote."""

    name: str        # the tool that was called
    arguments: dict  # what it was called with
    source: str      # why its result is data: "the tool files_read", "stored data that came from ..."

    def as_event(self) -> dict:
        return {"name": self.name, "arguments": dict(self.arguments), "source": self.source}


class ProvenanceStore(Store):
    """The store as one tool call sees it.

    untrusted_source: what made the current turn untrusted ("the tool files_read"), or None for
    a trusted turn. After the call, `read_from` lists the sources of the marked records it read,
    `records_read` counts every record it read (the person's own data, marked or not) and
    `stamped` counts the records it stored marked."""

    def __init__(self, inner: Store, untrusted_source: str | None):
        self.inner = inner
        self.untrusted_source = untrusted_source
        self.read_from: list[str] = []
        self.records_read = 0
        self.stamped = 0

    def _notice(self, value: Any) -> Any:
        if value is not None:
            self.records_read += 1
        mark = mark_of(value)
        if mark is not None:
            source = str(mark.get("source") or "untrusted content")
            if source not in self.read_from:
                self.read_from.append(source)
        return value

    async def get(self, collection, key):
        return self._notice(await self.inner.get(collection, key))

    async def has(self, collection, key):
        # That a key is taken says nothing of what the record holds: nothing to notice.
        return await self.inner.has(collection, key)

    async def items(self, collection):
        pairs = await self.inner.items(collection)
        for _, value in pairs:
            self._notice(value)
        return pairs

    async def put(self, collection, key, value):
        if self.untrusted_source and isinstance(value, dict) and mark_of(value) is None:
            value = {**value, PROVENANCE_KEY: {"untrusted": True, "source": self.untrusted_source}}
            self.stamped += 1
        await self.inner.put(collection, key, value)

    async def delete(self, collection, key):
        return await self.inner.delete(collection, key)
