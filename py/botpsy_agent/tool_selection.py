"""Which tools the model sees: a default set for the page, and checks on `enabledTools`.

Every tool in the list costs prompt tokens, and on WASM every prompt token costs
prefill time before the first reply (all 29 built-in tools: bench/tool_prompt_size.py).
So the page starts with the tools a person tries first; the others stay registered
and are one `setSettings({enabledTools})` away. Host tools (a page's own) are
always on by default: the page registered them to be used.
"""

from __future__ import annotations

DEFAULT_ENABLED_TOOLS: tuple[str, ...] = (
    "calculator",
    "current_time",
    "convert_units",
    "notes_create", "notes_search", "notes_list",
    "calendar_add_event", "calendar_list_events",
    "todo_add", "todo_list",
    "files_list", "files_read", "files_search",
    "search_docs",
)


def check_enabled_tools(value, known: list[str]) -> list[str] | None:
    """`enabledTools` as given by the page: None (the default set) or a list of known tool names."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValueError(f"enabledTools must be a list of tool names or null, got {value!r}")
    unknown = [name for name in value if name not in known]
    if unknown:
        raise ValueError(f"enabledTools names unknown tools {unknown}; known: {known}")
    return list(dict.fromkeys(value))
