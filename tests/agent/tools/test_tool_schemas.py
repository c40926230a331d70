"""Every built-in tool: a well-formed JSON schema, documented parameters, honest flags."""

import asyncio
import json
import re

import pytest

from botpsy_agent.storage import MemoryStore
from botpsy_agent.tools import builtin_tools
from botpsy_agent.validation import check_value

from .conftest import call, make_context

TOOLS = builtin_tools()
JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}


def test_names_are_unique_and_valid():
    names = [tool.name for tool in TOOLS]
    assert len(names) == len(set(names)) == 29
    assert all(re.fullmatch(r"[a-z][a-z0-9_]{1,63}", name) for name in names)


def check_property(tool_name: str, name: str, schema: dict) -> None:
    where = f"{tool_name}.{name}"
    assert isinstance(schema.get("description"), str) and len(schema["description"]) >= 8, where
    kind = schema.get("type")
    assert kind in JSON_TYPES or "enum" in schema or "anyOf" in schema, where
    if kind == "array":
        assert isinstance(schema.get("items"), dict) and schema["items"].get("type") in JSON_TYPES, where
    if "enum" in schema:
        assert schema["enum"] and len(schema["enum"]) == len(set(schema["enum"])), where
    if "default" in schema and schema["default"] is not None:
        assert check_value(schema["default"], schema, where) == [], where


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_schema_is_well_formed_json_schema(tool):
    spec = tool.spec()
    assert json.loads(json.dumps(spec)) == spec
    function = spec["function"]
    assert function["name"] == tool.name
    assert len(function["description"]) >= 20
    parameters = function["parameters"]
    assert parameters["type"] == "object"
    assert isinstance(parameters["properties"], dict)
    assert set(parameters["required"]) <= set(parameters["properties"])
    for name, schema in parameters["properties"].items():
        check_property(tool.name, name, schema)
    assert "ctx" not in parameters["properties"]


class RecordingStore(MemoryStore):
    """A memory store that remembers every write."""

    def __init__(self):
        super().__init__()
        self.writes = []

    async def put(self, collection, key, value):
        self.writes.append(("put", collection, key))
        await super().put(collection, key, value)

    async def delete(self, collection, key):
        self.writes.append(("delete", collection, key))
        return await super().delete(collection, key)


READ_ONLY_CALLS = {
    "calculator": {"expression": "1+1"}, "current_time": {}, "convert_time": {"time": "now", "to_timezone": "UTC"},
    "date_difference": {"start": "today", "end": "tomorrow"}, "date_add": {"date": "today", "days": 1},
    "convert_units": {"value": 1, "from_unit": "m", "to_unit": "cm"}, "notes_search": {"query": "milk"},
    "notes_list": {}, "notes_read": {"note_id": "n1"}, "calendar_list_events": {},
    "calendar_free_slots": {}, "calendar_export_ics": {}, "todo_list": {}, "files_list": {},
    "files_read": {"name": "a.txt"}, "files_search": {"query": "hello"}, "run_python": {"code": "1+1"},
    "search_docs": {"query": "privacy"}, "outbox_list": {},
}


def test_tools_without_side_effects_never_write_to_the_store():
    from botpsy_agent.tools import add_user_file
    from botpsy_agent.tools.notes import notes_create

    ctx = make_context()
    ctx.store = RecordingStore()
    call(notes_create, ctx, text="buy milk")
    asyncio.run(add_user_file(ctx.store, "a.txt", "hello"))
    ctx.store.writes.clear()
    read_only = [tool for tool in TOOLS if not tool.side_effects]
    assert {tool.name for tool in read_only} == set(READ_ONLY_CALLS)
    for tool in read_only:
        call(tool, ctx, **READ_ONLY_CALLS[tool.name])
    assert ctx.store.writes == []


def test_untrusted_output_is_declared_for_third_party_text():
    untrusted = {tool.name for tool in TOOLS if tool.untrusted_output}
    assert untrusted == {"files_list", "files_read", "files_search", "search_docs", "fetch_url"}
