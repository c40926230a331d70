"""Writing EBNF for xgrammar: quoted literals, character classes, named rules, and
"any text that never contains these strings".

The grammar text is compiled by xgrammar: @mlc-ai/web-xgrammar in the model worker,
PyPI `xgrammar` in the tests. Only the EBNF both understand is written here (rules,
literals, character classes, `* + ? {m,n}`, grouping); the trigger on `<tool_call>`
is the structural tag's job (spec.py), not TagDispatch, whose syntax differs between
the two.
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[ -~]")  # printable ASCII other than the escapes below


def _escape_char(char: str, specials: str) -> str:
    if char in specials or char == "\\":
        return "\\" + char
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "\r":
        return "\\r"
    if _PLAIN.fullmatch(char):
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def literal(text: str) -> str:
    """`text` as an EBNF string literal ("" for the empty string)."""
    return '"' + "".join(_escape_char(char, '"') for char in text) + '"'


def char_class(chars: str, negated: bool = False) -> str:
    """A character class of `chars` ([...] or [^...]); runs of 3 or more become ranges."""
    codes = sorted({ord(char) for char in chars})
    parts, start = [], 0
    while start < len(codes):
        end = start
        while end + 1 < len(codes) and codes[end + 1] == codes[end] + 1:
            end += 1
        first, last = (_escape_char(chr(codes[i]), "]^-[") for i in (start, end))
        if end - start >= 2:
            parts.append(f"{first}-{last}")
        else:
            parts += [_escape_char(chr(code), "]^-[") for code in codes[start:end + 1]]
        start = end + 1
    return f"[{'^' if negated else ''}{''.join(parts)}]"


class Rules:
    """Named EBNF rules, added in order; names are made unique."""

    def __init__(self):
        self._rules: dict[str, str] = {}
        self._by_body: dict[str, str] = {}
        self._built: dict[object, str] = {}

    def add(self, name: str, body: str) -> str:
        """Adds `name ::= body` (name made unique) and returns the name; an identical body
        already added under the same base name is reused."""
        key = _base_name(name) + "\0" + body
        if key not in self._by_body:
            self._by_body[key] = self.reserve(name)
            self._rules[self._by_body[key]] = body
        return self._by_body[key]

    def once(self, key: object, build) -> str:
        """The rule build() makes, made only the first time `key` is asked for."""
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    def reserve(self, name: str) -> str:
        """A new unique name whose body is set later with define() (recursive rules)."""
        base = _base_name(name)
        unique, counter = base, 1
        while unique in self._rules or unique == "root":
            counter += 1
            unique = f"{base}_{counter}"
        self._rules[unique] = '""'
        return unique

    def define(self, name: str, body: str) -> None:
        self._rules[name] = body

    def text(self, root: str) -> str:
        """The grammar, `root ::= <root>` first."""
        lines = [f"root ::= {root}"]
        lines += [f"{name} ::= {body}" for name, body in self._rules.items()]
        return "\n".join(lines) + "\n"


def _base_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "rule"


def text_without(rules: Rules, name: str, excluded: list[str], banned_chars: str = "",
                 escapes: tuple[str, ...] = ()) -> str:
    """A rule for any text (possibly empty) in which none of `excluded` occurs.

    Written as the string-matching automaton of the excluded strings (Aho-Corasick): one
    rule per proper prefix still being matched, so the text may go on through anything
    that does not complete an excluded string. `banned_chars` never appear (JSON's quote
    and control characters); `escapes` are extra EBNF alternatives (JSON's `\\n`...) that
    start the match afresh. The matching itself is xgrammar's; this only writes the rules.
    """
    patterns = sorted({pattern for pattern in excluded if pattern})
    alphabet = sorted({char for pattern in patterns for char in pattern} - set(banned_chars))
    states = _prefix_states(patterns)
    names = [rules.reserve(f"{name}_{index}" if index else name) for index in range(len(states))]
    index_of = {state: index for index, state in enumerate(states)}
    for index, state in enumerate(states):
        to_state: dict[str, str] = {}   # char -> the next state, for chars that do not restart
        stuck = ""                      # chars that would complete an excluded string
        for char in alphabet:
            following = _advance(state, char, patterns)
            if following is None:
                stuck += char
            elif following:
                to_state[char] = following
        restart = char_class("".join(to_state) + stuck + banned_chars, negated=True) \
            if to_state or stuck or banned_chars else "[\\u0000-\\U0010ffff]"
        alternatives = ['""', f"{restart} {names[0]}"]
        alternatives += [f"{literal(char)} {names[index_of[following]]}" for char, following in to_state.items()]
        alternatives += [f"{escape} {names[0]}" for escape in escapes]
        rules.define(names[index], "(" + " | ".join(alternatives) + ")")
    return names[0]


def _prefix_states(patterns: list[str]) -> list[str]:
    """Every proper prefix of a pattern that contains no pattern: the automaton's states."""
    prefixes = {""}
    for pattern in patterns:
        for end in range(1, len(pattern)):
            prefixes.add(pattern[:end])
    clean = [prefix for prefix in prefixes if not any(p in prefix for p in patterns)]
    return sorted(clean, key=lambda prefix: (len(prefix), prefix))


def _advance(state: str, char: str, patterns: list[str]) -> str | None:
    """The state after reading `char` (the longest suffix that is a pattern prefix), or
    None when the text would then contain a pattern."""
    text = state + char
    if any(text.endswith(pattern) for pattern in patterns):
        return None
    for start in range(len(text) + 1):
        suffix = text[start:]
        if any(pattern.startswith(suffix) and pattern != suffix for pattern in patterns):
            return suffix
    return ""
