"""The tool API: schemas derived from hints and docstrings, definition-time errors, calls."""

import asyncio
import enum
from typing import Literal, Optional

import pytest

from botpsy_agent.storage import MemoryStore
from botpsy_agent.tooling import Tool, ToolContext, ToolError, tool


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@tool(side_effects=False, untrusted_output=True)
async def search_notes(ctx: ToolContext, query: str, limit: int = 5) -> list[dict]:
    """Search the user's notes.

    Args:
        query: Words to look for.
        limit: Most results to return.
    """
    return [{"query": query, "limit": limit}]


@tool
def convert(value: float, unit: Unit, precision: Optional[int] = None,
            mode: Literal["exact", "rounded"] = "exact", tags: list[str] | None = None,
            verbose: bool = False) -> dict:
    """Convert a temperature.

    Longer explanation that is still part of the description.

    Args:
        value: The temperature,
            possibly negative.
        unit (Unit): The unit to convert to.
        precision: Decimal places.
        mode: How to convert.
        tags: Labels.
        verbose: Say more.

    Returns:
        The converted value.
    """
    return {"value": value, "unit": unit, "precision": precision, "mode": mode, "tags": tags}


def test_schema_is_derived_from_hints_and_docstring():
    assert search_notes.name == "search_notes"
    assert search_notes.description == "Search the user's notes."
    assert search_notes.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for."},
            "limit": {"type": "integer", "description": "Most results to return.", "default": 5},
        },
        "required": ["query"],
    }
    assert search_notes.untrusted_output and not search_notes.side_effects


def test_every_supported_type_maps_to_json_schema():
    properties = convert.parameters["properties"]
    assert convert.description.startswith("Convert a temperature.")
    assert "Longer explanation" in convert.description
    assert properties["value"] == {"type": "number", "description": "The temperature, possibly negative."}
    assert properties["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert properties["precision"]["type"] == "integer"
    assert properties["mode"]["enum"] == ["exact", "rounded"]
    assert properties["mode"]["default"] == "exact"
    assert properties["tags"]["type"] == "array" and properties["tags"]["items"] == {"type": "string"}
    assert properties["verbose"]["type"] == "boolean"
    assert convert.parameters["required"] == ["value", "unit"]


def test_call_converts_enums_and_injects_context():
    result = asyncio.run(convert.call(ToolContext(), {"value": 3, "unit": "celsius"}))
    assert result["unit"] is Unit.CELSIUS and result["value"] == 3.0 and isinstance(result["value"], float)
    assert asyncio.run(search_notes.call(ToolContext(), {"query": "milk"})) == [{"query": "milk", "limit": 5}]


def test_missing_hint_fails_at_definition():
    with pytest.raises(TypeError, match=r"'untyped'.*'limit'.*no type hint"):
        @tool
        def untyped(query: str, limit=3):
            """Do it.

            Args:
                query: q.
                limit: l.
            """


def test_undocumented_argument_fails_at_definition():
    with pytest.raises(TypeError, match=r"'undocumented'.*'limit'.*not documented"):
        @tool
        def undocumented(query: str, limit: int = 3):
            """Do it.

            Args:
                query: q.
            """


def test_unsupported_type_and_missing_docstring_fail_at_definition():
    with pytest.raises(TypeError, match="'weird'.*'blob'"):
        @tool
        def weird(blob: bytes):
            """Do it.

            Args:
                blob: b.
            """
    with pytest.raises(TypeError, match="docstring"):
        @tool
        def silent(x: int):
            return x


def test_host_tool_from_json_schema():
    seen = []

    async def handler(arguments):
        seen.append(arguments)
        return "sent"

    host = Tool.from_json_schema("send_sms", "Send a text.", {"type": "object", "properties": {
        "to": {"type": "string"}}, "required": ["to"]}, handler, side_effects=True)
    assert asyncio.run(host.call(ToolContext(), {"to": "bob"})) == "sent"
    assert seen == [{"to": "bob"}] and host.side_effects
    with pytest.raises(ValueError, match="tool name"):
        Tool.from_json_schema("bad name!", "", {"type": "object"}, handler)


@pytest.mark.parametrize("name", ["to>\n<parameter=admin", "a b", "", "9lives", "x" * 129, "</parameter>", 'say"hi'])
def test_a_host_tool_parameter_name_that_could_break_the_call_format_is_refused_by_name(name):
    with pytest.raises(ValueError, match=r"parameter name .* must be letters"):
        Tool.from_json_schema("send_sms", "", {"type": "object", "properties": {name: {"type": "string"}}}, print)


def test_host_tool_parameter_schemas_and_required_names_are_checked():
    for name in ("to", "año_vehiculo", "user.id", "max-results", "$ref_id", "_private"):  # BFCL's shapes too
        Tool.from_json_schema("send_sms", "", {"type": "object", "properties": {name: {"type": "string"}}}, print)
    with pytest.raises(ValueError, match="'properties' must be an object"):
        Tool.from_json_schema("send_sms", "", {"type": "object", "properties": ["to"]}, print)
    with pytest.raises(ValueError, match="schema of parameter 'to' must be an object"):
        Tool.from_json_schema("send_sms", "", {"type": "object", "properties": {"to": "string"}}, print)
    with pytest.raises(ValueError, match=r"'required' must list parameter names .* \['from'\]"):
        Tool.from_json_schema("send_sms", "", {"type": "object", "properties": {"to": {"type": "string"}},
                                                "required": ["from"]}, print)


def test_default_context_refuses_network():
    with pytest.raises(ToolError, match="network access is off"):
        asyncio.run(ToolContext().fetch("http://example.com"))


def test_memory_store_round_trip():
    async def scenario():
        store = MemoryStore()
        await store.put("notes", "b", {"text": "two"})
        await store.put("notes", "a", {"text": "one"})
        value = await store.get("notes", "a")
        value["text"] = "changed"
        assert await store.get("notes", "a") == {"text": "one"}
        assert [key for key, _ in await store.items("notes")] == ["a", "b"]
        assert await store.delete("notes", "a") is True
        assert await store.delete("notes", "a") is False
        assert await store.get("notes", "a") is None
        with pytest.raises(ValueError, match="JSON"):
            await store.put("notes", "c", {"when": object()})
        with pytest.raises(ValueError, match="collection"):
            await store.items("")
    asyncio.run(scenario())


def test_null_for_an_argument_with_a_default_uses_the_default():
    assert asyncio.run(search_notes.call(ToolContext(), {"query": "tea", "limit": None})) == [
        {"query": "tea", "limit": 5}]
    result = asyncio.run(convert.call(ToolContext(), {"value": 1, "unit": "celsius", "precision": None}))
    assert result["precision"] is None
