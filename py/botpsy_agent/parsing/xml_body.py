"""Where the parts of a Qwen3-Coder XML call body begin and end.

    <function=NAME>
    <parameter=KEY>
    value
    </parameter>
    </function>

A value is raw text and may itself hold the format's markers (a note about XML, a file
being written), so a value does not end at the first `</parameter>`. It ends at the
first `</parameter>` after which the rest of the body reads as a well-formed call
(more parameters, then `</function>` and nothing else, or the end of the body when
`</function>` is missing). A value written the way the chat template writes it (and the
tool-call grammar constrains it), `<parameter=KEY>\nvalue\n</parameter>\n`, ends only
at such a `</parameter>` with a newline on each side. When no `</parameter>` gives a
well-formed rest, the value ends at the first `</parameter>` followed by the next
`<parameter=`, by `</function>`, or by the end of the body. Without any of those the
value is still open. A body with more than whitespace after its `</function>` is not a
whole call (yet): that `</function>` was value text, e.g. a value holding
`</parameter></function>` in a body cut at a `</tool_call>` that this or a later value holds.

A `</parameter>` the model left out is read the way vLLM's Qwen3-Coder parser reads it:
before a value's first `</parameter>` (or with none after it), a line that opens the next
`<parameter=` ends the value, and so does a line holding the body's final `</function>`
(only whitespace after it). So a value never holds, before its first `</parameter>`, a
parameter opening at the start of a line, nor the call's last `</function>` on a line of its
own: text the tool-call grammar never lets a value hold either.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
PARAMETER_OPEN = "<parameter="
PARAMETER_CLOSE = "</parameter>"

_FUNCTION = re.compile(r"<function=([^>\n]*)>")
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>")
_NEXT_PART = re.compile(r"<parameter=([^>\n]*)>|</function>")
_WHITESPACE = re.compile(r"\s*")
# Where a value whose </parameter> was left out ends (see the module's docstring).
_LINE_OPENING_A_PARAMETER = re.compile(r"\n<parameter=[^>\n]*>")
_LINE_ENDING_THE_FUNCTION = re.compile(r"\n</function>\s*\Z")


@dataclass
class XmlBody:
    name: str | None                     # None: no <function=NAME> in the body
    values: list[tuple[str, str]] = field(default_factory=list)  # (key, raw text between the tags)
    open_value: bool = False             # the last value has not ended yet
    function_end: int | None = None      # index just after the structural </function>
    text_after_end: bool = False         # more than whitespace after that </function>: it was value text

    @property
    def reads_complete(self) -> bool:
        """A whole call: its </function> reached, no value open, nothing but whitespace after."""
        return self.function_end is not None and not self.open_value and not self.text_after_end


def read_xml_body(body: str) -> XmlBody:
    """The function name and raw parameter values of one call body (never raises)."""
    function = _FUNCTION.search(body)
    if not function:
        return XmlBody(None)
    ends = _ValueEnds(body)
    result = XmlBody(function.group(1).strip())
    position = function.end()
    while True:
        part = _NEXT_PART.search(body, position)  # text between parts is skipped
        if not part:
            return result
        if part.group(0) == FUNCTION_CLOSE:
            result.function_end = part.end()
            result.text_after_end = bool(body[part.end():].strip())
            return result
        value_start = part.end()
        unclosed_end = ends.end_of_unclosed_value(value_start)
        if unclosed_end is not None:
            result.values.append((part.group(1).strip(), body[value_start:unclosed_end]))
            position = unclosed_end
            continue
        value_end = ends.end_of_value(value_start)
        if value_end is None:
            result.values.append((part.group(1).strip(), body[value_start:]))
            result.open_value = True
            return result
        result.values.append((part.group(1).strip(), body[value_start:value_end]))
        position = value_end + len(PARAMETER_CLOSE)


class _ValueEnds:
    """For each `</parameter>` in the body, whether the rest after it is a well-formed call
    tail; computed once from the last one backwards (linear in the number of closings)."""

    def __init__(self, body: str):
        self.body = body
        self.starts = [match.start() for match in re.finditer(re.escape(PARAMETER_CLOSE), body)]
        count = len(self.starts)
        self.first_good_from = [count] * (count + 1)  # smallest good index >= i (count: none)
        self.first_framed_good_from = [count] * (count + 1)  # the same among newline-framed ones
        for index in range(count - 1, -1, -1):
            good = self._tail_is_well_formed(self.starts[index] + len(PARAMETER_CLOSE))
            self.first_good_from[index] = index if good else self.first_good_from[index + 1]
            framed = good and self._is_framed(self.starts[index])
            self.first_framed_good_from[index] = index if framed else self.first_framed_good_from[index + 1]
        self.first_local_from = [count] * (count + 1)  # ... followed by a part or the end (the fallback)
        for index in range(count - 1, -1, -1):
            local = self._next_is_a_part(self.starts[index] + len(PARAMETER_CLOSE))
            self.first_local_from[index] = index if local else self.first_local_from[index + 1]

    def _next_is_a_part(self, position: int) -> bool:
        after = _WHITESPACE.match(self.body, position).end()
        return after == len(self.body) or self.body.startswith((PARAMETER_OPEN, FUNCTION_CLOSE), after)

    def _is_framed(self, start: int) -> bool:
        after = start + len(PARAMETER_CLOSE)
        return self.body[start - 1:start] == "\n" and (after == len(self.body) or self.body[after] == "\n")

    def _first_closing_from(self, position: int) -> int:
        return bisect.bisect_left(self.starts, position)

    def _tail_is_well_formed(self, position: int) -> bool:
        body = self.body
        position = _WHITESPACE.match(body, position).end()
        if position == len(body):
            return True
        if body.startswith(FUNCTION_CLOSE, position):
            return not body[position + len(FUNCTION_CLOSE):].strip()
        parameter = _PARAMETER.match(body, position)
        if not parameter:
            return False
        # Later closings were decided already: the loop runs from the last one backwards.
        index = self._first_closing_from(parameter.end())
        return self.first_good_from[index] < len(self.starts)

    def end_of_unclosed_value(self, value_start: int) -> int | None:
        """Where a value without its </parameter> ends (the newline before the next part
        stays in the value, as it would before a </parameter>), or None if it has one."""
        index = self._first_closing_from(value_start)
        limit = self.starts[index] if index < len(self.starts) else len(self.body)
        parameter = _LINE_OPENING_A_PARAMETER.search(self.body, value_start, limit)
        if parameter:
            return parameter.start() + 1
        if limit == len(self.body):
            function = _LINE_ENDING_THE_FUNCTION.search(self.body, value_start)
            if function:
                return function.start() + 1
        return None

    def end_of_value(self, value_start: int) -> int | None:
        index = self._first_closing_from(value_start)
        framed = self.first_framed_good_from[index]
        if self.body.startswith("\n", value_start) and framed < len(self.starts):
            return self.starts[framed]
        for best in (self.first_good_from[index], self.first_local_from[index]):
            if best < len(self.starts):
                return self.starts[best]
        return None
