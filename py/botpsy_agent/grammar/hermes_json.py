"""The grammar of one Hermes JSON tool call (SmolLM2 and templates without tools),
between <tool_call> and </tool_call>, as chat_format.fallback_tool_instructions teaches it:

    \\n{"name": "NAME", "arguments": {...}}\\n      (or indented, as json.dumps(indent=2) writes it)

NAME is an offered tool and the arguments JSON valid for its parameters schema. The same
object opened without tags (reply_openings.py) continues after NAME's closing quote:

    , "arguments": {...}}
"""

from __future__ import annotations

import json

from .ebnf import Rules, literal
from .json_values import GrammarNotes, JsonValues, layout

# The parser ends the call at </tool_call>: no string inside may contain it.
HERMES_CLOSERS = ("</tool_call>",)


def hermes_json_call(rules: Rules, tools: list, notes: GrammarNotes) -> str:
    """The rule for a call's text between <tool_call> and </tool_call>."""
    return hermes_json_rules(rules, tools, notes)[0]


def hermes_json_rules(rules: Rules, tools: list, notes: GrammarNotes,
                      opened: bool = False) -> tuple[str, dict[str, str] | None]:
    """The rule for a tagged call's text and, with opened=True, per tool the rule for the rest
    of an untagged call object after its name's closing quote: `, "arguments": {...}}`."""
    values = JsonValues(rules, notes, HERMES_CLOSERS)
    comma, line = layout(rules)  # compact or indented, as json_values lays out the arguments
    calls, rests = [], {}
    for tool in tools:
        arguments = values.value({"type": "object", "properties": {}, **tool.parameters}, tool.name)
        rest = f'{comma} "\\"arguments\\":" " "? {arguments}'
        calls.append(rules.add(f"call_{tool.name}", f"{literal(json.dumps(tool.name))} {rest}"))
        if opened:
            rests[tool.name] = rules.add(f"rest_{tool.name}", f'{rest} {line}? "}}"')
    tagged = rules.add("call", f'"\\n{{" {line}? "\\"name\\":" " "? ({" | ".join(calls)}) {line}? "}}\\n"')
    return tagged, rests if opened else None
