"""The grammar of one Hermes JSON tool call (SmolLM2 and templates without tools),
between <tool_call> and </tool_call>, as chat_format.fallback_tool_instructions teaches it:

    \\n{"name": "NAME", "arguments": {...}}\\n

NAME is an offered tool and the arguments JSON valid for its parameters schema.
"""

from __future__ import annotations

import json

from .ebnf import Rules, literal
from .json_values import GrammarNotes, JsonValues

# The parser ends the call at </tool_call>: no string inside may contain it.
HERMES_CLOSERS = ("</tool_call>",)


def hermes_json_call(rules: Rules, tools: list, notes: GrammarNotes) -> str:
    """The rule for a call's text between <tool_call> and </tool_call>."""
    values = JsonValues(rules, notes, HERMES_CLOSERS)
    calls = []
    for tool in tools:
        arguments = values.value({"type": "object", "properties": {}, **tool.parameters}, tool.name)
        name = literal(json.dumps(tool.name))
        calls.append(rules.add(f"call_{tool.name}", f'{name} "," " "? "\\"arguments\\":" " "? {arguments}'))
    return rules.add("call", f'"\\n{{\\"name\\":" " "? ({" | ".join(calls)}) "}}\\n"')
