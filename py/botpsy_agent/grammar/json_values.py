"""EBNF for JSON values that match a JSON schema (the subset tools use).

Covered: type (one or a list), enum, const, string, integer, number, boolean, null,
array with items, object with properties / required / additionalProperties, anyOf /
oneOf. Any other keyword that would narrow a value (pattern, minLength, allOf, $ref...)
is not expressible here: that value falls back to "any JSON value of the type" and a
note says so, so the grammar is never stricter than the schema.

Layout follows json.dumps, compact or indented: a space after `,` and `:` optional, or after
`,`, `{` and `[` and before `}` and `]` a line break and at most MAX_INDENT spaces (Qwen2.5-Coder
writes its calls indented; refused the line break, it wandered off into a name no tool has).
Nothing else: a grammar that allows endless whitespace lets a weak model write it forever. Object keys may come in any order, each at most once, every required one
present. Strings never hold a raw "<" followed by the second character of one of the
`excluded` strings (the ends of the tool call that holds them: "</tool_call>"...), since the
parser would cut the call there; JSON can still say it, as "<\\/" or "\\u003c".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .ebnf import Rules, char_class, literal

# Keywords that say nothing about which values are valid.
_ANNOTATIONS = {"description", "title", "default", "examples", "$comment", "deprecated",
                "readOnly", "writeOnly", "$schema", "$id", "format"}
_HANDLED = {"type", "enum", "const", "items", "properties", "required", "additionalProperties",
            "anyOf", "oneOf", "minimum", "exclusiveMinimum"}
# Beyond this many properties an object's keys must come in schema order: every order
# would need one rule per subset of keys written so far.
MAX_ANY_ORDER_KEYS = 8
# Digits allowed in an integer or a fraction (past 2**53 JavaScript loses them anyway),
# so a weak model cannot write digits until it runs out of tokens.
MAX_DIGITS = 16
CONTROL_CHARS = "".join(chr(code) for code in range(0x20))
MAX_INDENT = 32


def layout(rules: Rules) -> tuple[str, str]:
    """(comma, line_break): the rule of a `,` with what may follow it, and the rule of one line
    break with its indentation (optional after `{`/`[` and before `}`/`]`)."""
    def build() -> tuple[str, str]:
        line_break = rules.add("line_break", f'"\\n" " "{{0,{MAX_INDENT}}}')
        return rules.add("comma", f'"," (" " | {line_break})?'), line_break
    return rules.once("layout", build)


@dataclass
class GrammarNotes:
    """What a grammar leaves unconstrained and why (shown in the console)."""

    notes: list[str] = field(default_factory=list)

    def add(self, where: str, message: str) -> None:
        self.notes.append(f"{where}: {message}")


def integer_rule(rules: Rules, non_negative: bool = False) -> str:
    digits = f'("0" | [1-9] [0-9]{{0,{MAX_DIGITS - 1}}})'
    return rules.add("integer_nonneg" if non_negative else "integer",
                     digits if non_negative else f'"-"? {digits}')


def number_rule(rules: Rules) -> str:
    integer = integer_rule(rules)
    return rules.add("number", f'{integer} ("." [0-9]{{1,{MAX_DIGITS}}})? ([eE] [+-]? [0-9]{{1,3}})?')


def json_string_rule(rules: Rules, excluded: tuple[str, ...]) -> str:
    """A JSON string literal that never holds one of `excluded` (strings starting with "<")
    as raw text: a raw "<" may not be followed by their second characters."""
    if any(not text.startswith("<") or len(text) < 2 for text in excluded):
        raise ValueError(f"excluded strings must start with '<' and have 2+ characters, got {excluded}")

    def build() -> str:
        escape = rules.add("escape", '"\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})')
        plain = char_class('"\\<' + CONTROL_CHARS, negated=True)
        after_angle = char_class('"\\<' + CONTROL_CHARS + "".join(text[1] for text in excluded), negated=True)
        body = rules.add("string_chars", f'({plain} | {escape} | "<"+ ({after_angle} | {escape}))* "<"*')
        return rules.add("string", f'"\\"" {body} "\\""')
    return rules.once(("json_string", excluded), build)


def any_json_rule(rules: Rules, excluded: tuple[str, ...]) -> str:
    """Any JSON value (the fallback for a schema this module cannot express)."""
    return rules.once(("any_json", excluded), lambda: _any_json(rules, excluded))


def _any_json(rules: Rules, excluded: tuple[str, ...]) -> str:
    value = rules.reserve("any_json")
    string = json_string_rule(rules, excluded)
    comma, line = layout(rules)
    array = rules.add("any_array", f'"[" {line}? ({value} ({comma} {value})*)? {line}? "]"')
    member = rules.add("any_member", f'{string} ":" " "? {value}')
    obj = rules.add("any_object", f'"{{" {line}? ({member} ({comma} {member})*)? {line}? "}}"')
    number = number_rule(rules)
    rules.define(value, f'({string} | {number} | "true" | "false" | "null" | {array} | {obj})')
    return value


def keyed_members(rules: Rules, name: str, members: list[tuple[str, str]], required: set[str],
                  separator: str, notes: GrammarNotes, where: str) -> str:
    """Members (key, rule) each at most once, every required one present, `separator` (an
    EBNF fragment, "" for none) between two; in any order up to MAX_ANY_ORDER_KEYS keys,
    else in schema order."""
    if not members:
        return rules.add(f"{name}_none", '""')
    if len(members) > MAX_ANY_ORDER_KEYS:
        notes.add(where, f"more than {MAX_ANY_ORDER_KEYS} keys: they must come in schema order")
        return _ordered_members(rules, name, members, required, separator)
    keys = [key for key, _ in members]
    names: dict[int, str] = {}

    def state(used: int) -> str:
        if used not in names:
            names[used] = rules.reserve(f"{name}_{used}")
            done = all(used & (1 << index) for index, key in enumerate(keys) if key in required)
            alternatives = ['""'] if done else []
            for index, (_, member) in enumerate(members):
                if not used & (1 << index):
                    joint = f"{separator} " if used and separator else ""
                    alternatives.append(f"{joint}{member} {state(used | (1 << index))}")
            rules.define(names[used], "(" + " | ".join(alternatives or ['""']) + ")")
        return names[used]

    return state(0)


def _ordered_members(rules: Rules, name: str, members: list[tuple[str, str]], required: set[str],
                     separator: str) -> str:
    names: dict[tuple[int, bool], str] = {}

    def state(index: int, written: bool) -> str:
        key = (index, written)
        if key not in names:
            names[key] = rules.reserve(f"{name}_at{index}{'w' if written else ''}")
            rest = [member_key for member_key, _ in members[index:]]
            alternatives = [] if required & set(rest) else ['""']
            for position in range(index, len(members)):
                member_key, member = members[position]
                joint = f"{separator} " if written and separator else ""
                alternatives.append(f"{joint}{member} {state(position + 1, True)}")
                if member_key in required:
                    break  # a required key cannot be skipped
            rules.define(names[key], "(" + " | ".join(alternatives or ['""']) + ")")
        return names[key]

    return state(0, False)


class JsonValues:
    """Writes the rule of a JSON value for each schema, into one Rules."""

    def __init__(self, rules: Rules, notes: GrammarNotes, excluded: tuple[str, ...]):
        self.rules, self.notes, self.excluded = rules, notes, excluded

    def value(self, schema: object, where: str) -> str:
        rules = self.rules
        if schema is True or schema == {} or schema is None:
            return any_json_rule(rules, self.excluded)
        if not isinstance(schema, dict):
            self.notes.add(where, f"schema {schema!r} is not an object: any JSON value")
            return any_json_rule(rules, self.excluded)
        unknown = sorted(set(schema) - _ANNOTATIONS - _HANDLED - _NARROWING)
        if unknown:
            self.notes.add(where, f"{', '.join(unknown)} not expressible in the grammar: any JSON value")
            return any_json_rule(rules, self.excluded)
        if "const" in schema:
            return rules.add("const", literal(json.dumps(schema["const"], ensure_ascii=False)))
        if "enum" in schema:
            return self._enum(schema["enum"], where)
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            if not isinstance(options, list):
                self.notes.add(where, "anyOf is not a list: any JSON value")
                return any_json_rule(rules, self.excluded)
            choices = [self.value(option, f"{where} (option {index + 1})") for index, option in enumerate(options)]
            return rules.add("any_of", "(" + " | ".join(choices) + ")")
        kinds = schema.get("type")
        if kinds is None:
            return any_json_rule(rules, self.excluded)
        kinds = kinds if isinstance(kinds, list) else [kinds]
        choices = [self._typed(kind, schema, where) for kind in kinds]
        return choices[0] if len(choices) == 1 else rules.add("types", "(" + " | ".join(choices) + ")")

    def _enum(self, values: object, where: str) -> str:
        if not isinstance(values, list) or not values:
            self.notes.add(where, "enum is not a non-empty list: any JSON value")
            return any_json_rule(self.rules, self.excluded)
        texts = [json.dumps(value, ensure_ascii=False) for value in values]
        return self.rules.add("enum", "(" + " | ".join(literal(text) for text in texts) + ")")

    def _typed(self, kind: object, schema: dict, where: str) -> str:
        rules = self.rules
        narrowing = sorted(set(schema) & _TYPE_KEYWORDS.get(kind, set()))
        if narrowing:
            self.notes.add(where, f"{', '.join(narrowing)} not expressible in the grammar: any {kind}")
        if kind == "string":
            return json_string_rule(rules, self.excluded)
        if kind == "integer":
            return integer_rule(rules, _non_negative(schema))
        if kind == "number":
            return number_rule(rules)
        if kind == "boolean":
            return rules.add("boolean", '("true" | "false")')
        if kind == "null":
            return rules.add("null", '"null"')
        if kind == "array":
            return self._array(schema, where)
        if kind == "object":
            return self._object(schema, where)
        self.notes.add(where, f"unknown type {kind!r}: any JSON value")
        return any_json_rule(rules, self.excluded)

    def _array(self, schema: dict, where: str) -> str:
        item = self.value(schema.get("items", True), f"{where}[]")
        comma, line = layout(self.rules)
        return self.rules.add("array", f'"[" {line}? ({item} ({comma} {item})*)? {line}? "]"')

    def _object(self, schema: dict, where: str) -> str:
        rules = self.rules
        if not isinstance(schema.get("properties", {}), dict):
            self.notes.add(where, "properties is not an object: any object")
            return self._free_object(True, where)
        if "properties" not in schema:
            return self._free_object(schema.get("additionalProperties", True), where)
        # Listed properties (even none) are the keys there are: what the chat template
        # shows the model and what a Python tool's function accepts.
        properties = schema["properties"]
        required = set(schema.get("required") or [])
        missing = sorted(required - set(properties))
        if missing:
            self.notes.add(where, f"required {missing} not among the properties: any object")
            return self._free_object(True, where)
        members = [(key, rules.add("member", f"{literal(json.dumps(key, ensure_ascii=False))} "
                                             f'":" " "? {self.value(value, f"{where}.{key}")}'))
                   for key, value in properties.items()]
        comma, line = layout(rules)
        body = keyed_members(rules, "object", members, required, comma, self.notes, where)
        return rules.add("object", f'"{{" {line}? {body} {line}? "}}"')

    def _free_object(self, values: object, where: str) -> str:
        rules = self.rules
        value = self.value(values if isinstance(values, dict) else True, f"{where}.*")
        member = rules.add("free_member", f'{json_string_rule(rules, self.excluded)} ":" " "? {value}')
        comma, line = layout(rules)
        return rules.add("free_object", f'"{{" {line}? ({member} ({comma} {member})*)? {line}? "}}"')


# Per type, the keywords that narrow its values but that this grammar cannot express
# (the value is then any value of the type: looser than the schema, never stricter).
_TYPE_KEYWORDS = {
    "string": {"pattern", "minLength", "maxLength", "contentEncoding", "contentMediaType"},
    "integer": {"maximum", "exclusiveMaximum", "multipleOf"},
    "number": {"maximum", "exclusiveMaximum", "multipleOf"},
    "array": {"minItems", "maxItems", "uniqueItems", "contains", "prefixItems"},
    "object": {"minProperties", "maxProperties", "patternProperties", "propertyNames"},
}
_NARROWING = set().union(*_TYPE_KEYWORDS.values())


def _non_negative(schema: dict) -> bool:
    minimum = schema.get("minimum", schema.get("exclusiveMinimum"))
    return isinstance(minimum, (int, float)) and not isinstance(minimum, bool) and minimum >= 0
