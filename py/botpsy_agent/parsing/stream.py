"""A streaming splitter for model output: text, <think> content and tool calls.

Feed it chunks as they come from the model; it returns events at once, holding
back only a few characters that might be the start of a tag. The same output
cut into different chunks gives the same text, thinking and calls. It never
raises on malformed output: an unreadable call becomes a call with `error` set,
which the loop reports to the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from .call_formats import ParsedCall, Schemas, make_decoder, partial_name

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"

_TAGS_BY_MODE = {
    "text": (THINK_OPEN, THINK_CLOSE, CALL_OPEN),
    "think": (THINK_CLOSE, CALL_OPEN),
    "call": (CALL_CLOSE,),
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
        self._call_index = -1
        self.calls: list[ParsedCall] = []
        self.text = ""
        self.thinking = ""

    def feed(self, chunk: str) -> list[ParserEvent]:
        self._buffer += chunk
        events: list[ParserEvent] = []
        while self._buffer:
            tags = _TAGS_BY_MODE[self.mode]
            found = [(self._buffer.find(tag), tag) for tag in tags if tag in self._buffer]
            if found:
                position, tag = min(found)
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
        self._emit(self._buffer, events)
        self._buffer = ""
        if self.mode == "call":
            call = self._decode(self._call_body, self.schemas)
            if call.error is None and not self._looks_complete(self._call_body):
                call.error = "the tool call was cut off before it was complete"
            self._close_call(call, events)
        return events

    def _looks_complete(self, body: str) -> bool:
        return "</function>" in body if self.tool_call_format == "qwen3_coder_xml" else True

    def _emit(self, text: str, events: list[ParserEvent]) -> None:
        if not text:
            return
        if self.mode == "text":
            self.text += text
            events.append(ParserEvent("text", text))
        elif self.mode == "think":
            self.thinking += text
            events.append(ParserEvent("thinking", text))
        else:
            self._call_body += text
            events.append(ParserEvent("tool_call_delta", text, self._call_index,
                                      partial_name(self._call_body, self.tool_call_format)))

    def _switch(self, tag: str, events: list[ParserEvent]) -> None:
        if tag == THINK_OPEN:
            self.mode = "think"
        elif tag == THINK_CLOSE:
            self.mode = "text"  # a stray </think> in text mode is dropped
        elif tag == CALL_OPEN:
            self._mode_after_call = self.mode
            self.mode = "call"
            self._call_body = ""
            self._call_index += 1
            events.append(ParserEvent("tool_call_delta", "", self._call_index, None))
        elif tag == CALL_CLOSE:
            self._close_call(self._decode(self._call_body, self.schemas), events)
            self.mode = self._mode_after_call

    def _close_call(self, call: ParsedCall, events: list[ParserEvent]) -> None:
        self.calls.append(call)
        events.append(ParserEvent("tool_call", index=self._call_index, name=call.name, call=call))
