"""Decode the body of one <tool_call>...</tool_call> block into a name and arguments.

Two formats: Qwen3-Coder XML (what BotPsy/Qwen3.5 emits)

    <function=notes_search>
    <parameter=query>
    milk
    </parameter>
    </function>

and Hermes JSON (`{"name": ..., "arguments": {...}}`, SmolLM2 and many others).
Decoders never raise: a body they cannot read comes back with `error` set.
XML values are raw text; they are converted to the types the tool's schema asks for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

_FUNCTION = re.compile(r"<function=([^>\n]*)>")
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>")
_PARAMETER_END = re.compile(r"</parameter>|<parameter=|</function>")


@dataclass
class ParsedCall:
    name: str | None
    arguments: dict = field(default_factory=dict)
    raw: str = ""
    error: str | None = None


Schemas = dict[str, dict]  # tool name -> its parameters schema


def _strip_one_newline(text: str) -> str:
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    return text


def convert_raw_value(raw: str, schema: dict | None) -> Any:
    """A raw XML parameter value as the schema's type; unchanged when it does not fit
    (validation then tells the model what was wrong)."""
    schema = schema or {}
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    text = raw.strip()
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
    if kind in ("array", "object") or kind is None:
        try:
            return json.loads(text)
        except ValueError:
            if kind is None and text.lower() in ("null", "none"):
                return None
            return raw
    return raw


def decode_qwen_xml(body: str, schemas: Schemas | None = None) -> ParsedCall:
    function = _FUNCTION.search(body)
    if not function:
        return ParsedCall(None, raw=body, error="no <function=NAME> in the tool call")
    name = function.group(1).strip()
    properties = ((schemas or {}).get(name) or {}).get("properties", {})
    arguments: dict[str, Any] = {}
    position = function.end()
    while True:
        parameter = _PARAMETER.search(body, position)
        if not parameter:
            break
        key = parameter.group(1).strip()
        end = _PARAMETER_END.search(body, parameter.end())
        value_end = end.start() if end else len(body)
        raw_value = _strip_one_newline(body[parameter.end():value_end])
        arguments[key] = convert_raw_value(raw_value, properties.get(key))
        position = end.end() if end and end.group(0) == "</parameter>" else value_end
    if not name:
        return ParsedCall(None, arguments, body, "the tool call has an empty function name")
    return ParsedCall(name, arguments, body)


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
