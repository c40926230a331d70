"""The built-in tools: one module per tool family; `builtin_tools()` lists them all."""

from __future__ import annotations
