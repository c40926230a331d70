"""The grammar of one Qwen3-Coder XML tool call (BotPsy / Qwen3.5), between <tool_call>
and </tool_call>, exactly as the chat template writes one:

    \\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n ... </function>\\n

NAME is an offered tool; each KEY one of its properties, at most once, every required
one present; VALUE what parsing/call_formats.py reads back as the schema's type: strings
as raw text (several lines allowed), integers, numbers, true/false, an enum's values as
the template writes them, arrays and objects as JSON.
"""

from __future__ import annotations

import json

from .ebnf import Rules, literal, text_until
from .json_values import GrammarNotes, JsonValues, integer_rule, keyed_members, number_rule

# The parser ends a value at the first of these (and the call at </tool_call>), so no
# value may contain one: a raw value runs up to its </parameter>, never through the others.
XML_CLOSERS = ("</parameter>", "<parameter=", "</function>", "</tool_call>")
PARAMETER_END = "\n</parameter>\n"
_VALUE_KEYWORDS = {"description", "title", "default", "examples", "type", "enum", "format",
                   "minimum", "$comment", "deprecated", "readOnly", "writeOnly"}


def qwen_xml_call(rules: Rules, tools: list, notes: GrammarNotes) -> str:
    """The rule for a call's text between <tool_call> and </tool_call>."""
    values = JsonValues(rules, notes, XML_CLOSERS)
    calls = []
    for tool in tools:
        properties = tool.parameters.get("properties") or {}
        required = set(tool.parameters.get("required") or []) & set(properties)
        params = []
        for key, schema in properties.items():
            value = _value(rules, values, schema, notes, f"{tool.name}.{key}")
            params.append((key, rules.add(f"param_{tool.name}_{key}",
                                          f"{literal(f'<parameter={key}>' + chr(10))} {value}")))
        body = keyed_members(rules, f"params_{tool.name}", params, required, "", notes, tool.name)
        calls.append(rules.add(f"call_{tool.name}", f"{literal(tool.name + '>' + chr(10))} {body}"))
    return rules.add("call", f'"\\n<function=" ({" | ".join(calls)}) "</function>\\n"')


def _raw_text(rules: Rules) -> str:
    """Any text, several lines too, up to its </parameter> (the parser drops one newline at
    each end, so the template's "\\nVALUE\\n</parameter>" reads back as VALUE)."""
    closing = text_until(rules, XML_CLOSERS[0], XML_CLOSERS[1:])
    return rules.add("raw_value", f'{closing} "\\n"')


def _value(rules: Rules, values: JsonValues, schema: object, notes: GrammarNotes, where: str) -> str:
    """The value and the end of its parameter element."""
    typed = _typed_value(rules, values, schema, notes, where)
    return typed if typed == _raw_text(rules) else rules.add("value", f"{typed} {literal(PARAMETER_END)}")


def _typed_value(rules: Rules, values: JsonValues, schema: object, notes: GrammarNotes, where: str) -> str:
    if not isinstance(schema, dict) or not schema:
        return _raw_text(rules)  # any value: raw text or JSON both read back
    kind = schema.get("type")
    if isinstance(kind, list):  # the parser reads the first non-null type
        kind = next((each for each in kind if each != "null"), None)
    if "enum" in schema:
        return _enum(rules, schema["enum"], kind, notes, where)
    if kind in ("array", "object") or "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema.get("oneOf") or []
        if any(isinstance(option, dict) and option.get("type") == "string" for option in options):
            notes.add(where, "a string among anyOf options is not expressible in XML: any text")
            return _raw_text(rules)
        return values.value(schema, where)  # JSON, as the template writes it
    unknown = sorted(set(schema) - _VALUE_KEYWORDS)
    if unknown:
        notes.add(where, f"{', '.join(unknown)} not expressible in the grammar: any {kind or 'value'}")
    if kind == "integer":
        minimum = schema.get("minimum")
        return integer_rule(rules, isinstance(minimum, (int, float)) and minimum >= 0)
    if kind == "number":
        return number_rule(rules)
    if kind == "boolean":
        return rules.add("boolean", '("true" | "false")')
    if kind not in (None, "string"):
        notes.add(where, f"type {kind!r} is not expressible in XML: any text")
    return _raw_text(rules)


def _enum(rules: Rules, options: object, kind: object, notes: GrammarNotes, where: str) -> str:
    if not isinstance(options, list) or not options:
        notes.add(where, "enum is not a non-empty list: any text")
        return _raw_text(rules)
    texts = []
    for option in options:
        text = _enum_text(option, kind)
        if text is None:
            notes.add(where, f"enum value {option!r} would not read back as itself: left out")
        else:
            texts.append(text)
    if not texts:
        return _raw_text(rules)
    return rules.add("enum", "(" + " | ".join(literal(text) for text in dict.fromkeys(texts)) + ")")


def _enum_text(option: object, kind: object) -> str | None:
    """How the template writes an enum value (strings raw, the rest as JSON), or None when
    the parser would read that text back as something else."""
    if not isinstance(option, str):
        return json.dumps(option)
    if any(closer in option for closer in XML_CLOSERS):
        return None
    if kind == "string":
        return option
    if kind is None:  # read back with json.loads, or as "null"/"none" -> None
        try:
            json.loads(option.strip())
            return None
        except ValueError:
            return None if option.strip().lower() in ("null", "none") else option
    return None  # a string among the values of a non-string type
