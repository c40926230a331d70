"""Check tool-call arguments against a tool's JSON schema.

Covers the subset of JSON Schema that tools use (type, enum, items, properties,
required, additionalProperties, anyOf, minimum/maximum). Problems come back as
plain sentences for the model, never as exceptions.
"""

from __future__ import annotations

from typing import Any

_TYPE_CHECKS = {
    "string": lambda value: isinstance(value, str),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool)
    or isinstance(value, float) and value.is_integer(),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
    "null": lambda value: value is None,
}


def describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_value(value: Any, schema: dict, where: str) -> list[str]:
    """Problems with one value, each naming `where` it is."""
    if "anyOf" in schema:
        if any(not check_value(value, option, where) for option in schema["anyOf"]):
            return []
        return [f"{where}: {describe(value)} matches none of the allowed forms"]
    expected = schema.get("type")
    kinds = expected if isinstance(expected, list) else [expected] if expected else []
    if kinds and not any(_TYPE_CHECKS.get(kind, lambda _: True)(value) for kind in kinds):
        return [f"{where}: expected {' or '.join(kinds)}, got {describe(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {describe(value)} is not one of {schema['enum']}"]
    problems = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where}: {value} is above the maximum {schema['maximum']}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            problems += check_value(item, schema["items"], f"{where}[{index}]")
    if isinstance(value, dict) and {"properties", "required", "additionalProperties"} & set(schema):
        problems += check_object(value, schema, where)
    return problems


def check_object(arguments: dict, schema: dict, where: str = "arguments") -> list[str]:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    problems = [f"{where}: missing required argument '{name}'"
                for name in required if name not in arguments]
    for name, value in arguments.items():
        if name not in properties:
            # Listed properties, even none, are the arguments there are: what the grammar
            # lets a constrained call write and what a Python tool's function accepts.
            extra = schema.get("additionalProperties", True)
            if extra is False or "properties" in schema:
                allowed = ", ".join(properties) or "none"
                problems.append(f"{where}: unknown argument '{name}' (allowed: {allowed})")
            elif isinstance(extra, dict):
                problems += check_value(value, extra, f"{where}.{name}")
            continue
        if value is None and name not in required:
            continue  # null for an optional argument means "not given"
        problems += check_value(value, properties[name], f"{where}.{name}")
    return problems


def check_arguments(arguments: Any, parameters: dict) -> list[str]:
    """All problems with a tool call's arguments; an empty list means valid."""
    if not isinstance(arguments, dict):
        return [f"arguments must be an object, got {describe(arguments)}"]
    return check_object(arguments, parameters)
