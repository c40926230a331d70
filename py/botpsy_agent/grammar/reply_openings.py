"""A Hermes JSON call opened without tags at the very start of the reply (toolCalls "auto";
the parser's side is parsing/json_reply.py), as Qwen2.5-Coder writes them:

    {"name": "NAME", "arguments": {...}}
    ```json\\n{"name": "NAME", "arguments": {...}}\\n```
    {{"name": "NAME", "arguments": {...}}}

The start of a reply is free text, so this cannot be one more trigger of the structural tag:
xgrammar's triggers fire anywhere in the text, and JSON later in a reply is prose. Spelling
"free text that does not start with an opening" out as rules works but costs xgrammar a
token-mask table per character of every opening and tool name (seconds per tool set). So the
processor (web/runtime/grammar/untagged-call.js) watches the reply's start instead, the way
llama.cpp's lazy grammars do: it walks json_reply.OPENING_STATES over the text so far, and
once an opening and an offered tool's name with its closing quote are written, it hands the
reply to a matcher of untagged_call_grammar, fed the reply's tokens from the start. From
there the rest must be that tool's valid call object (then "\\n```" in a fence), and the
reply ends. A name no tool has leaves the text free (JSON data), as the parser reads it.
Taking over at the name's first quote instead (as after <tool_call>) was measured and
rejected: Qwen2.5-Coder answers a question no offered tool fits with a call of a tool it
invents, and forcing an offered name there turned those answers into wrong calls (BFCL
irrelevance 3 of 5 right free, 1 of 5 forced; bench/RESULTS.md, issue 26).
"""

from __future__ import annotations

from ..parsing.json_reply import BARE_JSON, DOUBLE_BRACED_JSON, FENCED_JSON, OPENED, OPENING_STATES, START, WHITESPACE
from .ebnf import Rules, char_class, literal

FENCE_CLOSE = "\n```"
# Under toolCalls "none" a reply may not start (after whitespace) with these: an object, an array
# or a code fence, the shapes Qwen2.5-Coder-0.5B gave a call it was told not to write, and a tag:
# told to answer from its results, it copied them as "<tool_response>\n[]\n</tool_response>".
REFUSED_STARTS = "{[`<"


def untagged_call_grammar(rules: Rules, rests: dict[str, str]) -> str:
    """The root rule of a reply that is one untagged call. rests: per offered tool, the rest
    of its call object after its name's closing quote (hermes_json.hermes_json_rules)."""
    def names(end: str) -> str:
        return "(" + " | ".join(f"{literal(name + chr(34))} {rest}{end}" for name, rest in rests.items()) + ")"

    ends = {BARE_JSON: rules.add("bare_call", names("")),
            FENCED_JSON: rules.add("fenced_call", names(f" {literal(FENCE_CLOSE)}")),
            DOUBLE_BRACED_JSON: rules.add("double_braced_call", names(f" {literal('}')}"))}
    states = {state: rules.reserve(f"opening_{state}") for state in OPENING_STATES}
    for state, transitions in OPENING_STATES.items():
        rules.define(states[state], " | ".join(f"{char_class(chars)} {ends.get(target) or states[target]}"
                                               for chars, target in transitions.items()))
    return states[START]


def untagged_call_watch(names: list[str], call_grammar: str | None) -> dict:
    """The processor's args for it: the openings' automaton, the offered names, and the call's
    grammar. call_grammar None is toolCalls "none": the reply is words, so its first character
    (after whitespace) may not open an object, an array, a code fence or a tag at all, whatever would
    follow. Refusing only offered names was not enough: Qwen2.5-Coder-0.5B, told to answer in
    words after calling a tool nobody offered, wrote that call again (bench/RESULTS.md, issue 41);
    refused at the name's quote it wrote `{"name": null, ...}`, refused at "{" it wrote
    "```json\n[{...}]" or `name: calculate_units` in a fence. Code and JSON later in a reply
    ("Here it is: ```python ...") stay free."""
    if call_grammar is None:
        return {"forbid": True, "refusedStarts": REFUSED_STARTS, "whitespace": WHITESPACE}
    return {"openings": OPENING_STATES, "start": START, "accepts": list(OPENED), "tools": names,
            "grammar": call_grammar}
