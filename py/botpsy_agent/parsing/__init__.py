"""Streaming parsers for model output: visible text, <think> content and tool calls."""

from .call_formats import ParsedCall, decode_hermes_json, decode_qwen_xml, make_decoder
from .stream import ModelOutputParser, ParserEvent

__all__ = ["ModelOutputParser", "ParserEvent", "ParsedCall", "decode_hermes_json",
           "decode_qwen_xml", "make_decoder"]
