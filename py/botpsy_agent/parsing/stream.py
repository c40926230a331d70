"""A streaming splitter for model output: text, <think> content and tool calls.

Feed it chunks as they come from the model; it returns events at once, holding
back only a few characters that might be the start of a tag. The same output
cut into different chunks gives the same text, thinking and calls. It never
raises on malformed output: an unreadable call becomes a call with `error` set,
which the loop reports to the model.

A call's closing tag counts only where the call can end: `</tool_call>` written
inside an XML parameter value or inside a Hermes JSON string is part of the value.
Qwen3-Coder models sometimes leave out the `<tool_call>` opener and start a line
with `<function=NAME>`: that is read as a call too, ending at its `</function>`
(a `</tool_call>` right after it is dropped). In the Hermes JSON format, a reply that is
exactly one JSON call object, bare or in a ```json fence, is a call (json_reply.py): the
start of a reply is held back until it is clear whether it is one. Each call records which
of these openings it used (ParsedCall.opening).
"""

from __future__ import annotations

from dataclasses import dataclass

from .call_formats import JsonStringScan, ParsedCall, Schemas, make_decoder, partial_name
from .json_reply import JsonReply
from .xml_body import FUNCTION_CLOSE, FUNCTION_OPEN, read_xml_body

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"

_TAGS_BY_MODE = {
    "text": (THINK_OPEN, THINK_CLOSE, CALL_OPEN, FUNCTION_OPEN),
    "think": (THINK_CLOSE, CALL_OPEN),
    "call": (CALL_CLOSE,),
    "bare_call": (CALL_CLOSE, FUNCTION_CLOSE),
}


@dataclass
class ParserEvent:
    kind: str                    # "text" | "thinking" | "tool_call_delta" | "tool_call"
    text: str = ""               # text, thinking, or the new raw piece of a forming call
    index: int | None = None     # which call in this output (0, 1, ...)
    name: str | None = None      # the call's function name once it is readable
    call: ParsedCall | None = None


def _held_back_length(buffer: str, tags: tuple[str, ...]) -> int:
    """Length of the longest end of `buffer` that could still grow into a tag."""
    longest = 0
    for tag in tags:
        for size in range(min(len(tag) - 1, len(buffer)), longest, -1):
            if buffer.endswith(tag[:size]):
                longest = size
                break
    return longest


class ModelOutputParser:
    """Parse one model generation. `thinking=True` when the prompt left a <think> open."""

    def __init__(self, tool_call_format: str = "qwen3_coder_xml", schemas: Schemas | None = None,
                 thinking: bool = False):
        self.tool_call_format = tool_call_format
        self._decode = make_decoder(tool_call_format)
        self.schemas = schemas or {}
        self.mode = "think" if thinking else "text"
        self._mode_after_call = self.mode
        self._buffer = ""
        self._call_body = ""
        self._json_scan = JsonStringScan()  # where _call_body's JSON stands (Hermes calls)
        self._call_index = -1
        self._at_line_start = True  # only whitespace in the text since the last newline
        self._after_bare_call = False  # a `</tool_call>` may follow a bare call's </function>
        # Hermes JSON: the reply's start may be a call without tags, held back while undecided.
        self._json_reply_possible = tool_call_format == "hermes_json" and bool(self.schemas)
        self._json_reply: JsonReply | None = None
        self.calls: list[ParsedCall] = []
        self.text = ""
        self.thinking = ""

    def feed(self, chunk: str) -> list[ParserEvent]:
        self._buffer += chunk
        events: list[ParserEvent] = []
        while self._buffer:
            if self._after_bare_call and not self._drop_close_after_bare_call():
                break
            if self._json_reply is None and self._at_reply_start():
                self._json_reply = JsonReply(self.schemas)
            if self._json_reply is not None:
                still_possible = self._json_reply.feed(self._buffer)
                self._buffer = ""
                if still_possible:
                    break
                self._release_json_reply()
                continue
            tags = self._tags()
            found = self._next_tag(tags)
            if found:
                position, tag = found
                self._emit(self._buffer[:position], events)
                self._buffer = self._buffer[position + len(tag):]
                self._switch(tag, events)
                continue
            keep = _held_back_length(self._buffer, tags)
            self._emit(self._buffer[:len(self._buffer) - keep], events)
            self._buffer = self._buffer[len(self._buffer) - keep:]
            break
        return events

    def finish(self) -> list[ParserEvent]:
        """End of generation: flush what was held back and close an unfinished call."""
        events: list[ParserEvent] = []
        if self._json_reply is not None:
            call = self._json_reply.finish(self.schemas)
            if call is None:  # prose after all: read as text (and any tagged call in it)
                self._release_json_reply()
                events += self.feed("")
            else:
                self._json_reply = None
                self._call_index += 1
                events.append(ParserEvent("tool_call_delta", "", self._call_index, None))
                events.append(ParserEvent("tool_call_delta", call.raw, self._call_index, call.name))
                self._close_call(call, events)
        self._after_bare_call = False
        if self.mode in ("call", "bare_call"):
            self._buffer = ""  # held back as the start of a closing tag that was cut off: not a value's text
        self._emit(self._buffer, events)
        self._buffer = ""
        if self.mode in ("call", "bare_call"):
            call = self._decode(self._call_body, self.schemas)
            if call.error is None and not self._looks_complete(self._call_body):
                call.error = "the tool call was cut off before it was complete"
            self._close_call(self._tagged(call), events)
        return events

    def _at_reply_start(self) -> bool:
        """Nothing but whitespace shown yet and no call: a Hermes JSON reply may be one call."""
        return (self._json_reply_possible and self.mode == "text" and self._call_index < 0
                and not self.text.strip())

    def _release_json_reply(self) -> None:
        """The held-back start is prose: it goes through the tags like any text."""
        self._buffer = self._json_reply.held + self._buffer
        self._json_reply = None
        self._json_reply_possible = False

    def _tags(self) -> tuple[str, ...]:
        tags = _TAGS_BY_MODE[self.mode]
        if self.tool_call_format != "qwen3_coder_xml":  # bare <function=...> calls are XML only
            tags = tuple(tag for tag in tags if tag != FUNCTION_OPEN)
        return tags

    def _next_tag(self, tags: tuple[str, ...]) -> tuple[int, str] | None:
        """The first tag in the buffer that acts as one here (see _acts_as_tag)."""
        best = None
        for tag in tags:
            position = self._buffer.find(tag)
            while position >= 0 and (best is None or position < best[0]):
                if self._acts_as_tag(tag, position):
                    best = (position, tag)
                    break
                position = self._buffer.find(tag, position + 1)
        return best

    def _acts_as_tag(self, tag: str, position: int) -> bool:
        before = self._buffer[:position]
        if tag == FUNCTION_OPEN:  # a bare call starts a line; elsewhere it is prose about the format
            line = before.rsplit("\n", 1)
            return not line[-1].strip() and (len(line) == 2 or self._at_line_start)
        if tag == CALL_CLOSE and self.tool_call_format == "hermes_json":
            return not self._json_scan.inside_string_after(before)
        if tag == CALL_CLOSE:  # inside a value it is text: the call so far must read as a whole one
            parts = read_xml_body(self._call_body + before)
            return not parts.open_value and not parts.text_after_end
        if tag == FUNCTION_CLOSE:  # a bare call ends where its function structurally does
            body = self._call_body + before + FUNCTION_CLOSE
            return read_xml_body(body).function_end == len(body)
        return True

    def _drop_close_after_bare_call(self) -> bool:
        """After a bare call: drop `</tool_call>` if it comes next. False while undecided."""
        rest = self._buffer.lstrip()
        if rest.startswith(CALL_CLOSE):
            self._buffer = rest[len(CALL_CLOSE):]
        elif CALL_CLOSE.startswith(rest):
            return False
        self._after_bare_call = False
        return True

    def _looks_complete(self, body: str) -> bool:
        if self.tool_call_format != "qwen3_coder_xml":
            return True
        return read_xml_body(body).reads_complete

    def _emit(self, text: str, events: list[ParserEvent]) -> None:
        if not text:
            return
        if self.mode == "text":
            self.text += text
            line = text.rsplit("\n", 1)
            self._at_line_start = not line[-1].strip() and (len(line) == 2 or self._at_line_start)
            events.append(ParserEvent("text", text))
        elif self.mode == "think":
            self.thinking += text
            events.append(ParserEvent("thinking", text))
        else:
            self._call_body += text
            self._json_scan.feed(text)
            events.append(ParserEvent("tool_call_delta", text, self._call_index,
                                      partial_name(self._call_body, self.tool_call_format)))

    def _switch(self, tag: str, events: list[ParserEvent]) -> None:
        if tag == THINK_OPEN:
            self.mode = "think"
        elif tag == THINK_CLOSE:
            self.mode = "text"  # a stray </think> in text mode is dropped
            self._at_line_start = True
            # The reply starts after the thoughts: a JSON call may open there.
            self._json_reply_possible = self.tool_call_format == "hermes_json" and bool(self.schemas)
        elif tag in (CALL_OPEN, FUNCTION_OPEN):
            self._mode_after_call = self.mode
            self.mode = "call" if tag == CALL_OPEN else "bare_call"
            self._call_body = ""
            self._json_scan = JsonStringScan()
            self._call_index += 1
            events.append(ParserEvent("tool_call_delta", "", self._call_index, None))
            if tag == FUNCTION_OPEN:
                self._emit(FUNCTION_OPEN, events)
        elif tag == CALL_CLOSE or tag == FUNCTION_CLOSE:
            if tag == FUNCTION_CLOSE:
                self._emit(FUNCTION_CLOSE, events)
                self._after_bare_call = True
            self._close_call(self._tagged(self._decode(self._call_body, self.schemas)), events)
            self.mode = self._mode_after_call
            self._at_line_start = True

    def _tagged(self, call: ParsedCall) -> ParsedCall:
        call.opening = "tool_call_tag" if self.mode == "call" else "function_tag"
        return call

    def _close_call(self, call: ParsedCall, events: list[ParserEvent]) -> None:
        self.calls.append(call)
        events.append(ParserEvent("tool_call", index=self._call_index, name=call.name, call=call))
