"""BFCL function docs as the tool schemas the agent gives a model.

BFCL writes its parameter types in Python's words; the agent and the chat templates take
JSON Schema (the OpenAI `tools=` shape). The conversion, applied at every depth
(`properties`, `items`, `additionalProperties`):

- `dict` -> `object`, `float` -> `number`, `tuple` -> `array` (a JSON call has no tuples;
  BFCL's checker compares tuples as lists);
- `any` -> no `type` at all: any JSON value is allowed (JSON Schema's way of saying "any");
- `string`, `integer`, `boolean`, `array` stay as they are;
- BFCL's non-standard per-parameter `optional` flag is dropped (`required` says the same);
  everything else (`description`, `enum`, `default`, `items`, `required`, ...) is kept.

Function names: the agent accepts letters, digits, `_` and `-` (what the OpenAI-style APIs
accept too), so every other character becomes `_` (`math.factorial` -> `math_factorial`),
as BFCL itself does for those APIs; the checker compares calls with the converted name.
"""

from __future__ import annotations

import re

TYPE_NAMES = {"dict": "object", "float": "number", "tuple": "array", "any": None,
              "string": "string", "integer": "integer", "boolean": "boolean", "array": "array"}
DROPPED_KEYS = ("optional",)
_NOT_IN_A_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


class SchemaError(ValueError):
    """A BFCL function doc this conversion cannot read."""


def tool_name(bfcl_name: str) -> str:
    return _NOT_IN_A_TOOL_NAME.sub("_", bfcl_name)


def to_json_schema(schema: dict, where: str = "parameters") -> dict:
    """One BFCL parameter schema (any depth) as JSON Schema."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: expected a schema object, got {type(schema).__name__}")
    converted = {}
    for key, value in schema.items():
        if key in DROPPED_KEYS:
            continue
        if key == "type":
            if value not in TYPE_NAMES:
                raise SchemaError(f"{where}: unknown BFCL type {value!r}; known: {', '.join(TYPE_NAMES)}")
            if TYPE_NAMES[value] is not None:
                converted["type"] = TYPE_NAMES[value]
        elif key == "properties":
            converted[key] = {name: to_json_schema(inner, f"{where}.{name}") for name, inner in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            converted[key] = to_json_schema(value, f"{where}.{key}")
        else:
            converted[key] = value
    return converted


def tool_spec(function: dict) -> dict:
    """A BFCL function doc as the OpenAI-style entry the agent renders (botpsy_agent Tool.spec)."""
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise SchemaError(f"a BFCL function doc without a name: {function!r:.80}")
    parameters = to_json_schema(function.get("parameters") or {"type": "dict", "properties": {}}, name)
    if parameters.get("type", "object") != "object":
        raise SchemaError(f"{name}: parameters must be a dict, got {parameters.get('type')!r}")
    return {"type": "function", "function": {
        "name": tool_name(name), "description": function.get("description", ""), "parameters": parameters}}


def tool_specs(functions: list[dict]) -> list[dict]:
    """All of a case's functions; two that would get the same tool name are an error."""
    specs = [tool_spec(function) for function in functions]
    names = [spec["function"]["name"] for spec in specs]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise SchemaError(f"functions whose tool names clash: {', '.join(clashes)}")
    return specs
