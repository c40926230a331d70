"""Decode the body of one <tool_call>...</tool_call> block into a name and arguments.

Two formats: Qwen3-Coder XML (what BotPsy/Qwen3.5 emits)

    <function=notes_search>
    <parameter=query>
    milk
    </parameter>
    </function>

and Hermes JSON (`{"name": ..., "arguments": {...}}`, SmolLM2 and many others).
Decoders never raise: a body they cannot read comes back with `error` set.
XML values are raw text (where one ends: xml_body.py); they are converted to the types
the tool's schema asks for, and `null` is None wherever the schema allows null.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .xml_body import read_xml_body

_FUNCTION = re.compile(r"<function=([^>\n]*)>")


# How a call was opened: <tool_call>...</tool_call>, a bare Qwen XML <function=...> block,
# or (hermes_json) a reply that is one JSON object, bare, in a ```json fence or in doubled
# braces (json_reply.py).
OPENINGS = ("tool_call_tag", "function_tag", "bare_json", "fenced_json", "double_braced_json")


@dataclass
class ParsedCall:
    name: str | None
    arguments: dict = field(default_factory=dict)
    raw: str = ""
    error: str | None = None
    opening: str = "tool_call_tag"  # one of OPENINGS


Schemas = dict[str, dict]  # tool name -> its parameters schema


def _strip_one_newline(text: str) -> str:
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    return text


def json_types(schema: dict) -> set[str]:
    """The JSON types a schema names (`type`, a type list, anyOf/oneOf members, nullable);
    empty when it names none (any value)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        kinds = {kind}
    elif isinstance(kind, list):
        kinds = {k for k in kind if isinstance(k, str)}
    else:
        kinds = set()
    for key in ("anyOf", "oneOf"):
        for member in schema.get(key) or ():
            if isinstance(member, dict):
                kinds |= json_types(member) or {"any"}
    if schema.get("nullable") is True or None in (schema.get("enum") or ()):
        kinds.add("null")
    return kinds


def allows_null(schema: dict) -> bool:
    kinds = json_types(schema)
    return not kinds or bool(kinds & {"null", "any"})


_JSON_TYPE_OF = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                 (list, "array"), (dict, "object"))


def _json_type_of(value: Any) -> str:
    return next((name for python_type, name in _JSON_TYPE_OF if isinstance(value, python_type)), "null")


def convert_raw_value(raw: str, schema: dict | None) -> Any:
    """A raw XML parameter value as the schema's type; unchanged when it does not fit
    (validation then tells the model what was wrong)."""
    schema = schema if isinstance(schema, dict) else {}
    text = raw.strip()
    kinds = json_types(schema) - {"null"}
    # Qwen's own template writes a Python None as "None"; where a string fits, that is text.
    if (text == "null" or (text == "None" and "string" not in kinds)) and allows_null(schema):
        return None
    if len(kinds) == 1:
        return _as_type(raw, text, next(iter(kinds)))
    try:
        value = json.loads(text)
    except ValueError:
        return raw
    fits = kinds | ({"integer"} if "number" in kinds else set())
    if kinds and "any" not in kinds and _json_type_of(value) not in fits:
        return raw  # e.g. "5" where the schema wants a string or a list: it stays the text it is
    return value


def _as_type(raw: str, text: str, kind: str) -> Any:
    if kind == "string":
        return raw
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
                return int(number) if number.is_integer() else raw
            except ValueError:
                return raw
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return raw
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    if kind == "boolean":
        lowered = text.lower()
        return True if lowered == "true" else False if lowered == "false" else raw
    try:
        return json.loads(text)
    except ValueError:
        return raw


def decode_qwen_xml(body: str, schemas: Schemas | None = None) -> ParsedCall:
    parts = read_xml_body(body)
    if parts.name is None:
        return ParsedCall(None, raw=body, error="no <function=NAME> in the tool call")
    properties = ((schemas or {}).get(parts.name) or {}).get("properties", {})
    arguments: dict[str, Any] = {}
    for key, raw_value in parts.values:
        arguments[key] = convert_raw_value(_strip_one_newline(raw_value), properties.get(key))
    if not parts.name:
        return ParsedCall(None, arguments, body, "the tool call has an empty function name")
    return ParsedCall(parts.name, arguments, body)


def decode_hermes_json(body: str, schemas: Schemas | None = None) -> ParsedCall:
    text = body.strip()
    try:
        data = json.loads(text)
    except ValueError as error:
        return ParsedCall(_guess_json_name(text), raw=body,
                          error=f"the tool call is not valid JSON ({error})")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return ParsedCall(None, raw=body, error='the tool call JSON needs a string "name"')
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):  # some models emit the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ParsedCall(data["name"], raw=body, error='"arguments" must be a JSON object')
    # Small models often quote numbers and booleans: read such strings as the schema's type.
    properties = ((schemas or {}).get(data["name"]) or {}).get("properties", {})
    for key, value in arguments.items():
        wanted = (properties.get(key) or {}).get("type")
        if isinstance(value, str) and wanted not in (None, "string"):
            arguments[key] = convert_raw_value(value, properties[key])
    return ParsedCall(data["name"], arguments, body)


def inside_json_string(body: str) -> bool:
    """True while the JSON object that `body` opens is in the middle of a string literal:
    a `</tool_call>` there is text of the value, not the end of the call."""
    scan = JsonStringScan()
    scan.feed(body)
    return scan.inside_string


class JsonStringScan:
    """inside_json_string, fed a call body piece by piece (the streaming parser checks each
    `</tool_call>` against the body so far: rescanning it each time was quadratic)."""

    def __init__(self):
        self.started = False   # the body's first "{" seen
        self.closed = False    # ... and its object closed: what follows is not inside it
        self.end: int | None = None  # once closed: characters fed up to and including its "}"
        self.fed = 0
        self.depth = 0
        self.in_string = False
        self.escaped = False

    @property
    def inside_string(self) -> bool:
        return self.in_string and not self.closed

    def feed(self, text: str) -> None:
        if self.closed:
            return
        offset, start = self.fed, 0
        self.fed += len(text)
        if not self.started:
            start = text.find("{")
            if start < 0:
                return
            self.started = True
        for index, char in enumerate(text[start:] if start else text, start):
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            elif char in "}]":
                self.depth -= 1
                if self.depth == 0:
                    self.closed, self.end = True, offset + index + 1
                    return

    def inside_string_after(self, text: str) -> bool:
        """Whether the body so far plus `text` ends inside a string (this scan is left as it was)."""
        ahead = copy.copy(self)
        ahead.feed(text)
        return ahead.inside_string


def _guess_json_name(text: str) -> str | None:
    match = re.search(r'"name"\s*:\s*"([^"]*)"', text)
    return match.group(1) if match else None


def partial_name(body: str, tool_call_format: str) -> str | None:
    """The function name, as soon as it is fully written, for the UI's forming call."""
    if tool_call_format == "hermes_json":
        return _guess_json_name(body)
    match = _FUNCTION.search(body)
    return match.group(1).strip() if match else None


def make_decoder(tool_call_format: str) -> Callable[[str, Schemas | None], ParsedCall]:
    decoders = {"qwen3_coder_xml": decode_qwen_xml, "hermes_json": decode_hermes_json}
    if tool_call_format not in decoders:
        raise ValueError(f"unknown tool_call_format {tool_call_format!r}; "
                         f"expected one of {sorted(decoders)}")
    return decoders[tool_call_format]
