"""Persistent key/value state for tools: collections of JSON values.

Tools never see where the data lives. In the browser the store is IndexedDB,
reached through `botpsy_agent.bridge`; under CPython (tests) it is `MemoryStore`.
Values must be JSON-serialisable; every store hands back copies, so mutating a
returned value never changes what is stored.
"""

from __future__ import annotations

import json
from typing import Any


class Store:
    """The interface every store implements. All methods are async."""

    async def get(self, collection: str, key: str) -> Any | None:
        """The value stored under `key`, or None when there is none."""
        raise NotImplementedError

    async def put(self, collection: str, key: str, value: Any) -> None:
        """Store `value` (JSON) under `key`, replacing any previous value."""
        raise NotImplementedError

    async def delete(self, collection: str, key: str) -> bool:
        """Remove `key`; True when something was removed."""
        raise NotImplementedError

    async def items(self, collection: str) -> list[tuple[str, Any]]:
        """All (key, value) pairs of a collection, ordered by key."""
        raise NotImplementedError

    async def has(self, collection: str, key: str) -> bool:
        """True when something is stored under `key` (a store may answer without reading it)."""
        return await self.get(collection, key) is not None


def check_names(collection: str, key: str | None = None) -> None:
    """Reject names that cannot be stored, with an error that says which one."""
    if not isinstance(collection, str) or not collection:
        raise ValueError(f"store collection must be a non-empty string, got {collection!r}")
    if key is not None and (not isinstance(key, str) or not key):
        raise ValueError(f"store key must be a non-empty string, got {key!r}")


def to_json_copy(value: Any) -> Any:
    """A deep copy through JSON: proves the value is storable and detaches it."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as error:
        raise ValueError(f"store values must be JSON-serialisable: {error}") from None


class MemoryStore(Store):
    """A store in a dict: for CPython tests and pages without IndexedDB."""

    def __init__(self) -> None:
        self._collections: dict[str, dict[str, Any]] = {}

    async def get(self, collection, key):
        check_names(collection, key)
        value = self._collections.get(collection, {}).get(key)
        return None if value is None else to_json_copy(value)

    async def put(self, collection, key, value):
        check_names(collection, key)
        self._collections.setdefault(collection, {})[key] = to_json_copy(value)

    async def delete(self, collection, key):
        check_names(collection, key)
        return self._collections.get(collection, {}).pop(key, None) is not None

    async def items(self, collection):
        check_names(collection)
        stored = self._collections.get(collection, {})
        return [(key, to_json_copy(stored[key])) for key in sorted(stored)]
