"""Hermes JSON calls written without <tool_call> tags, as Qwen2.5-Coder writes them: a reply
that is exactly one JSON object,

    {"name": "calculator", "arguments": {"expression": "0.17 * 2340"}}

or exactly one fenced block holding one:

    ```json
    {"name": "calculator", "arguments": {"expression": "0.17 * 2340"}}
    ```

or the object in doubled braces, as the chat template of the Qwen2.5-Coder-1.5B GGUF spells
the format in its system prompt (`{{"name": <function-name>, "arguments": ...}}`, a Python
format string's escapes left in) and the 1.5B then writes it:

    {{"name": "calculator", "arguments": {"expression": "0.17 * 2340"}}}

What counts (llama.cpp's Hermes parser accepts these openings too, and its grammar triggers
on them only at the start of the output):
- the reply's visible text (what follows a <think> block, if any) starts, after whitespace,
  with the object, or with a fence line "```" or "```json" (spaces allowed before its
  newline) and then the object;
- the object's first key is "name", and its value names an offered tool, or names a tool
  nobody offered (letters, digits, "_", "-", "." and spaces) while the object also has
  "arguments" (or "parameters"): a model inventing `calculate_units` wrote a call, and the
  agent answers it (an error naming the closest offered tools, or the same question asked again
  with calls forbidden); shown to the person as a code block, it would end the turn with no
  answer. Spaces count: asked who wrote Pride and Prejudice, Qwen2.5-Coder-0.5B replied
  `{"name": "Pride and Prejudice", "arguments": {...}}`;
- after the object comes only whitespace, or, in a fence, whitespace, the closing "```"
  (which the end of the output may cut short) and whitespace, or, in doubled braces, closing
  braces and whitespace (the 1.5B closed with one or two more than it opened).
Anything else is prose: JSON in the middle of a sentence, a fenced block with prose before or
after it, an object with an unknown name and no arguments (JSON data: `{"name": "Alice Smith",
"age": 31}`), a second object. A reply that reads as a call of an offered tool but does not
decode (`arguments` not an object, broken JSON) is a call with `error` set, reported to the
model like any malformed call; one cut off by the end of the output is a call cut off (an
invented one that does not decode, or is cut off, stays prose).

Until it is decided, the reply is held back: shown neither as text nor as a forming call, so
nothing is shown and then taken back. Prose gives itself away within a few characters (a "{"
not followed by "name", a name with a "!", a ```python fence); a call is known only at the
end of the output.

OPENING_STATES spells the opening, up to the name's first quote, as a small automaton: read
here to parse, and by grammar/reply_openings.py to constrain the same openings.
"""

from __future__ import annotations

import json
import string

from .call_formats import JsonStringScan, ParsedCall, Schemas, decode_hermes_json

# the openings, as ParsedCall.opening names them
BARE_JSON, FENCED_JSON, DOUBLE_BRACED_JSON = "bare_json", "fenced_json", "double_braced_json"
OPENED = (BARE_JSON, FENCED_JSON, DOUBLE_BRACED_JSON)  # the automaton's states where an opening is complete
WHITESPACE = " \t\n\r"
START = "start"
CUT_OFF = "the tool call was cut off before it was complete"
FENCE = "```"
NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_-. ")
MAX_NAME_CHARS = 64


def _object_states(prefix: str, accept: str) -> dict[str, dict[str, str]]:
    """From just after the object's "{" to the quote that opens the name: {"name": "."""
    states = {f"{prefix}_brace": {WHITESPACE: f"{prefix}_brace", '"': f"{prefix}_key0"}}
    key = 'name"'
    for index, char in enumerate(key):
        following = f"{prefix}_key{index + 1}" if index + 1 < len(key) else f"{prefix}_colon"
        states[f"{prefix}_key{index}"] = {char: following}
    states[f"{prefix}_colon"] = {WHITESPACE: f"{prefix}_colon", ":": f"{prefix}_value"}
    states[f"{prefix}_value"] = {WHITESPACE: f"{prefix}_value", '"': accept}
    return states


# state -> {characters: next state}; OPENED are where an opening is complete.
OPENING_STATES: dict[str, dict[str, str]] = {
    START: {WHITESPACE: START, "`": "fence1", "{": "bare_brace"},
    "fence1": {"`": "fence2"},
    "fence2": {"`": "fence3"},
    "fence3": {"j": "fence_j", " \t": "fence_spaces", "\n": "fenced_line"},
    "fence_j": {"s": "fence_js"},
    "fence_js": {"o": "fence_jso"},
    "fence_jso": {"n": "fence_spaces"},
    "fence_spaces": {" \t": "fence_spaces", "\n": "fenced_line"},
    "fenced_line": {WHITESPACE: "fenced_line", "{": "fenced_brace"},
    **_object_states("bare", BARE_JSON),
    **_object_states("fenced", FENCED_JSON),
    **_object_states("double", DOUBLE_BRACED_JSON),
}
OPENING_STATES["bare_brace"]["{"] = "double_brace"  # a second "{" opens the doubled-brace form
# Where the call object starts: at the last "{" read in one of these states.
_OBJECT_OPENERS = (START, "fenced_line", "bare_brace")


def next_state(state: str, char: str) -> str | None:
    return next((target for chars, target in OPENING_STATES[state].items() if char in chars), None)


class JsonReply:
    """The start of a reply held back while it may be a bare or fenced JSON call."""

    def __init__(self, tool_names):
        self.tool_names = tuple(tool_names)
        self.held = ""
        self.prose = False
        self.opening: str | None = None  # BARE_JSON | FENCED_JSON | DOUBLE_BRACED_JSON once complete
        self.name: str | None = None     # the tool's name once its string is closed
        self._state = START
        self._read = 0                   # characters of `held` looked at so far
        self._object_start: int | None = None
        self._object_end: int | None = None
        self._scan = JsonStringScan()
        self._name_start = 0

    def feed(self, text: str) -> bool:
        """Adds output; False once the held text is known to be prose."""
        self.held += text
        if not self.prose:
            self.prose = not self._advance()
        return not self.prose

    def finish(self, schemas: Schemas) -> ParsedCall | None:
        """At the end of the output: the call, or None when the held text is prose."""
        if self.prose or self.name is None:
            return None
        if self.name not in self.tool_names:
            return self._invented_call(schemas)
        if self._object_end is None:
            call = ParsedCall(self.name, raw=self.held[self._object_start:], error=CUT_OFF)
        else:
            call = decode_hermes_json(self.held[self._object_start:self._object_end], schemas)
        call.opening = self.opening
        return call

    def _invented_call(self, schemas: Schemas) -> ParsedCall | None:
        """A call of a tool nobody offered, when the object decodes and carries arguments."""
        if self._object_end is None:
            return None
        body = self.held[self._object_start:self._object_end]
        try:
            data = json.loads(body)
        except ValueError:
            return None
        if not isinstance(data, dict) or not ({"arguments", "parameters"} & data.keys()):
            return None
        call = decode_hermes_json(body, schemas)
        if call.error:
            return None
        call.opening = self.opening
        return call

    def _advance(self) -> bool:
        """Reads what came since the last feed; False when it cannot be a call."""
        while self.opening is None:
            if self._read == len(self.held):
                return True
            char = self.held[self._read]
            target = next_state(self._state, char)
            if target is None:
                return False
            if char == "{" and self._state in _OBJECT_OPENERS:
                self._object_start = self._read
            self._state = target
            self._read += 1
            if target in OPENED:
                self.opening, self._name_start = target, self._read
        if self.name is None:
            if not self._read_name():
                return False
            if self.name is None:
                return True
        if self._object_end is None:
            self._scan.feed(self.held[self._read:])
            self._read = len(self.held)
            if not self._scan.closed:
                return True
            self._object_end = self._object_start + self._scan.end
        return self._only_the_end_follows(self.held[self._object_end:])

    def _read_name(self) -> bool:
        """Reads the name's characters; False once it cannot be a tool's name."""
        close = self.held.find('"', self._name_start)
        written = self.held[self._name_start:close if close >= 0 else len(self.held)]
        if not set(written) <= NAME_CHARACTERS or len(written) > MAX_NAME_CHARS:
            return False
        if close < 0:
            return True
        if not written:
            return False
        self.name = written
        # The object is scanned from its "{" (its strings and nesting decide where it ends).
        self._scan.feed(self.held[self._object_start:close + 1])
        self._read = close + 1
        return True

    def _only_the_end_follows(self, after: str) -> bool:
        rest = after.lstrip()
        if self.opening == DOUBLE_BRACED_JSON:
            return not rest.replace("}", "").strip()
        if self.opening == BARE_JSON or not rest:
            return not rest
        if rest.startswith(FENCE):
            return not rest[len(FENCE):].strip()
        return FENCE.startswith(rest)  # the closing fence, still being written
