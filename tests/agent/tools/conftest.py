"""Helpers for the built-in tool tests: a context with a memory store and a fixed clock."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from botpsy_agent.storage import MemoryStore
from botpsy_agent.tooling import Settings, ToolContext

# Monday 30 November 2026, 08:00 UTC: every test sees the same "now".
FIXED_NOW = datetime.datetime(2026, 11, 30, 8, 0, tzinfo=datetime.timezone.utc)


def make_context(timezone: str | None = None, allow_network: bool = False, fetch=None) -> ToolContext:
    settings = Settings(allow_network=allow_network)
    if timezone:
        settings.timezone = timezone
    context = ToolContext(store=MemoryStore(), settings=settings, now=lambda: FIXED_NOW)
    if fetch is not None:
        context.fetch = fetch
    return context


@pytest.fixture
def ctx() -> ToolContext:
    return make_context()


def call(tool, ctx: ToolContext, **arguments):
    """Run a tool the way the loop does (JSON arguments, awaited if async)."""
    return asyncio.run(tool.call(ctx, arguments))
