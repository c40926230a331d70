"""A Hermes JSON reply whose call may open without tags (toolCalls "auto"; the parser's side
is parsing/json_reply.py): free text in which <tool_call> opens a call, as everywhere, and,
at the very start of the output, the openings the parser reads as a call:

    {"name": "              a bare call object (whitespace as the parser allows it)
    ```json\\n{"name": "     the same in a fence (or a plain ``` fence)

Once one is written and the name it opens is an offered tool's, the rest must be that tool's
call object, valid for its schema (and, in a fence, "\\n```"), and the reply ends there: what
the parser needs to read it as a call. A name no tool has leaves the text free (JSON data).

xgrammar's triggers fire anywhere in the text, and JSON mid-reply is prose, so the start is
written out as rules instead: one per state of json_reply.OPENING_STATES, each allowing the
next character of an opening, the end of the output, or any other character and then free
text. A "<" there leaves the openings without losing the <tool_call> it may begin: the rules
after it follow <tool_call> character by character (its "<" occurs only at its start).
"""

from __future__ import annotations

from ..parsing.json_reply import BARE_JSON, FENCED_JSON, OPENING_STATES, START
from .ebnf import Rules, char_class, literal, text_until, text_with_tags

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
FENCE_CLOSE = "\n```"


def reply_with_openings(rules: Rules, tagged_call: str | None, rests: dict[str, str]) -> str:
    """The root rule. tagged_call: a call's text between <tool_call> and </tool_call>; rests:
    per offered tool, the rest of its call object after its name's closing quote. tagged_call
    None (toolCalls "none"; rests then only names the tools): no call may open, tagged or not;
    an untagged object may still start the reply if its name is no offered tool's (prose)."""
    if tagged_call is None:
        dead = rules.once("dead", lambda: rules.add("never", 'never "x"'))
        text, after_open_tag = text_until(rules, None, (CALL_OPEN,)), dead
        bare = fenced = {name: dead for name in rests}
    else:
        text = text_with_tags(rules, ((CALL_OPEN, rules.add("tagged_call", f"{tagged_call} {literal(CALL_CLOSE)}")),))
        after_open_tag = rules.add("tagged_call_then_text", f"{tagged_call} {literal(CALL_CLOSE)} {text}")
        bare = rests
        fenced = {name: rules.add(f"fenced_{name}", f"{rest} {literal(FENCE_CLOSE)}") for name, rest in rests.items()}
    from_angle = _text_from_angle(rules, text, after_open_tag)
    # An opening counts once an offered tool's name is written and closed (as llama.cpp's trigger).
    ends = {}
    for opening, after_name in ((BARE_JSON, bare), (FENCED_JSON, fenced)):
        words = {name + '"': rule for name, rule in after_name.items()}
        ends[opening] = _anchored(rules, f"{opening}_name", _trie(words), words, text, from_angle)
    return _anchored(rules, "opening", OPENING_STATES, ends, text, from_angle, START)


def _anchored(rules: Rules, prefix: str, states: dict[str, dict[str, str]], ends: dict[str, str], text: str,
              from_angle: str, start: str = "") -> str:
    """Rules for text that begins by walking `states` (state -> {characters: next state}):
    reaching a key of `ends` goes on with its rule; any character that leaves the walk, or
    the end of the output, makes it free text."""
    names = {state: rules.reserve(f"{prefix}_{state}") for state in states}
    for state, transitions in states.items():
        alternatives, used = ['""'], ""
        for chars, target in transitions.items():
            if "<" in chars:
                raise ValueError(f"an opening may not hold '<' (state {state!r}): it would hide a <tool_call>")
            used += chars
            alternatives.append(f"{char_class(chars)} {ends.get(target) or names[target]}")
        alternatives += [f"{char_class(used + '<', negated=True)} {text}", from_angle]
        rules.define(names[state], " | ".join(alternatives))
    return names[start]


def _trie(words: dict[str, str]) -> dict[str, dict[str, str]]:
    """The states of spelling one of `words`, character by character (a state is the
    prefix written so far; a whole word is its own end state)."""
    states: dict[str, dict[str, str]] = {}
    for word in words:
        for size in range(len(word)):
            states.setdefault(word[:size], {})[word[size]] = word[:size + 1]
    return states


def _text_from_angle(rules: Rules, text: str, after_open_tag: str) -> str:
    """Free text that starts with "<", where that "<" may begin <tool_call>."""
    matched = [rules.reserve(f"angle_{size}") for size in range(1, len(CALL_OPEN))]  # <, <t, <to, ...
    for size, name in enumerate(matched, 1):
        char = CALL_OPEN[size]
        advance = matched[size] if size < len(matched) else after_open_tag
        rules.define(name, f'"" | {literal(char)} {advance} | "<" {matched[0]} | '
                           f"{char_class(char + '<', negated=True)} {text}")
    return rules.add("from_angle", f'"<" {matched[0]}')
