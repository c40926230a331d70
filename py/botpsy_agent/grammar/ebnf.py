"""Writing EBNF for xgrammar: quoted literals, character classes, named rules, and free
text that stops at one string and never contains some others.

The grammar text is compiled by xgrammar: @mlc-ai/web-xgrammar 0.1.27 in the model worker,
PyPI `xgrammar` 0.2.x in the tests. Free text is xgrammar's TagDispatch (its own fast
string matching: an automaton written out as rules made compiling take seconds at a
250k-token vocabulary), whose arguments differ between the two builds, so the rules are
written for a DIALECTS entry: "web" (what the runtime gets) or "pypi" (CPython tests;
tests/agent/test_grammar_engines.py checks both read the same).
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


DIALECTS = ("web", "pypi")


class Rules:
    """Named EBNF rules, added in order; names are made unique."""

    def __init__(self, dialect: str = "web"):
        if dialect not in DIALECTS:
            raise ValueError(f"unknown xgrammar dialect {dialect!r}; expected one of {DIALECTS}")
        self.dialect = dialect
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


def text_until(rules: Rules, stop: str | None, forbidden: tuple[str, ...] = ()) -> str:
    """A rule for any text in which none of `forbidden` occurs, up to and including the first
    `stop` (stop None: to the end of the output, where the stop token may come)."""
    def build() -> str:
        # Completing a forbidden string leads to a rule that matches nothing: never allowed.
        dead = rules.once("dead", lambda: rules.add("never", "never \"x\""))
        tags = [f"({literal(text)}, {dead})" for text in forbidden]
        if rules.dialect == "web":
            ending = [f"stop_eos={'true' if stop is None else 'false'}",
                      f"stop_str=({literal(stop) if stop else ''})", f"loop_after_dispatch={'true' if stop is None else 'false'}"]
            return rules.add("text", f"TagDispatch({', '.join(tags + ending)})")
        ending = [f"loop_after_dispatch={'true' if stop is None else 'false'}", f"excludes=({literal(stop) if stop else ''})"]
        text = rules.add("text_body", f"TagDispatch({', '.join(tags + ending)})")
        return rules.add("text", f"{text} {literal(stop)}") if stop else text
    return rules.once(("text_until", stop, forbidden), build)

