"""JSON schemas from Python type hints, and Python values from JSON arguments.

Supported hints: str, int, float, bool, Literal[...], Enum subclasses, list[X],
dict / dict[str, X], X | None (Optional). Anything else is refused when the
tool is defined, so a bad tool fails at import time, not when the model calls it.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, Literal, Union

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


class UnsupportedType(TypeError):
    """A type hint that has no JSON schema equivalent here."""


def is_optional(hint: Any) -> bool:
    """True for `X | None` and `Optional[X]`."""
    return _is_union(hint) and type(None) in typing.get_args(hint)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


def _json_type_of(value: Any) -> str:
    for python_type, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        if isinstance(value, python_type):
            return name
    raise UnsupportedType(f"enum value {value!r} is not a str, int, float or bool")


def schema_for_hint(hint: Any) -> dict:
    """The JSON schema of one type hint (without description)."""
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        kinds = {_json_type_of(value) for value in values}
        schema = {"enum": values}
        if len(kinds) == 1:
            schema["type"] = kinds.pop()
        return schema
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is Literal:
        values = list(arguments)
        kinds = {_json_type_of(value) for value in values}
        schema = {"enum": values}
        if len(kinds) == 1:
            schema["type"] = kinds.pop()
        return schema
    if _is_union(hint):
        members = [member for member in arguments if member is not type(None)]
        if len(members) == 1:
            return schema_for_hint(members[0])
        return {"anyOf": [schema_for_hint(member) for member in members]}
    if hint is list or origin is list:
        schema = {"type": "array"}
        if arguments:
            schema["items"] = schema_for_hint(arguments[0])
        return schema
    if hint is dict or origin is dict:
        schema = {"type": "object"}
        if len(arguments) == 2:
            if arguments[0] is not str:
                raise UnsupportedType(f"dict keys must be str in {hint!r}")
            schema["additionalProperties"] = schema_for_hint(arguments[1])
        return schema
    if hint is Any:
        return {}
    raise UnsupportedType(f"type hint {hint!r} has no JSON schema (use str, int, float, bool, "
                          "Literal, Enum, list[...], dict[str, ...] or X | None)")


def to_python_value(value: Any, hint: Any) -> Any:
    """Turn a validated JSON value into what the hint asks for (Enum members, nested lists)."""
    if value is None:
        return None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is int and isinstance(value, float) and value.is_integer():
        return int(value)
    origin = typing.get_origin(hint)
    if _is_union(hint):
        members = [member for member in typing.get_args(hint) if member is not type(None)]
        return to_python_value(value, members[0]) if len(members) == 1 else value
    if origin is list and typing.get_args(hint) and isinstance(value, list):
        item_hint = typing.get_args(hint)[0]
        return [to_python_value(item, item_hint) for item in value]
    return value
