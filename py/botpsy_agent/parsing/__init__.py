"""Streaming parsers for model output: visible text, <think> content and tool calls."""

from .call_formats import OPENINGS, ParsedCall, decode_hermes_json, decode_qwen_xml, make_decoder
from .stream import ModelOutputParser, ParserEvent

__all__ = ["ModelOutputParser", "OPENINGS", "ParserEvent", "ParsedCall", "decode_hermes_json",
           "decode_qwen_xml", "make_decoder"]
