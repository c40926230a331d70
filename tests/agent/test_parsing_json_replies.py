"""Hermes JSON calls without <tool_call> tags, as Qwen2.5-Coder writes them: a reply that is
exactly one call object, bare or in one ```json fence, is a call; JSON anywhere else stays
prose. The start of a reply is held back until that is clear, so no part of a call is ever
shown as text, and each call says which opening it used."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from botpsy_agent.parsing import ModelOutputParser

SCHEMAS = {
    "calculator": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
    "notes_search": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}},
}
CHUNKINGS = [None, 1, 2, 3, 7]
CALL = {"name": "calculator", "arguments": {"expression": "0.17 * 2340"}}
CALL_JSON = json.dumps(CALL)


def parse(output, chunk_size=None, schemas=SCHEMAS, **options):
    parser = ModelOutputParser("hermes_json", schemas, **options)
    chunks = [output] if chunk_size is None else [output[i:i + chunk_size] for i in range(0, len(output), chunk_size)]
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.finish()
    return parser, events


def read(parser):
    return [(call.name, call.arguments, call.error, call.opening) for call in parser.calls]


CALL_REPLIES = {
    "bare": (CALL_JSON, "bare_json"),
    "bare with whitespace around": (f"\n  {CALL_JSON}\n\n", "bare_json"),
    "bare, compact JSON": ('{"name":"calculator","arguments":{"expression":"0.17 * 2340"}}', "bare_json"),
    "json fence": (f"```json\n{CALL_JSON}\n```", "fenced_json"),
    "plain fence, whitespace around": (f"\n```\n  {CALL_JSON}\n```\n", "fenced_json"),
    "fence with spaces before its newline": (f"```json  \n{json.dumps(CALL, indent=2)}\n```", "fenced_json"),
    "fence cut off by the end of the output": (f"```json\n{CALL_JSON}\n``", "fenced_json"),
    # The Qwen2.5-Coder-1.5B GGUF's template shows the format in doubled braces; the 1.5B copies it.
    "doubled braces": ("{" + CALL_JSON + "}", "double_braced_json"),
    "doubled braces, more closed than opened": ("{" + CALL_JSON + "}}}\n", "double_braced_json"),
    "doubled braces, none closed after the object": ("{" + CALL_JSON, "double_braced_json"),
}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("case", sorted(CALL_REPLIES))
def test_a_reply_that_is_one_call_object_is_a_call(case, chunk_size):
    output, opening = CALL_REPLIES[case]
    parser, events = parse(output, chunk_size)
    assert read(parser) == [("calculator", CALL["arguments"], None, opening)]
    assert parser.text.strip() == ""
    assert not any(event.kind == "text" and event.text.strip() for event in events)


PROSE_REPLIES = {
    "JSON after prose": f"Sure: {CALL_JSON}",
    "JSON before prose": f"{CALL_JSON}\nThat computes it.",
    "a fence with prose before it": f"I will call it:\n```json\n{CALL_JSON}\n```",
    "a fence with prose after it": f"```json\n{CALL_JSON}\n```\nThis calls the calculator.",
    "two call objects": f"{CALL_JSON}\n{CALL_JSON}",
    "two fences": f"```json\n{CALL_JSON}\n```\n```json\n{CALL_JSON}\n```",
    "a tool nobody offered, without arguments": '{"name": "cat_joke"}',
    "a tool nobody offered, cut off": '{"name": "calculate_units", "arguments": {"value": 1',
    "a name with a space and no arguments": '{"name": "Alice Smith", "age": 31}',
    "a name with other punctuation": '{"name": "Pride & Prejudice", "arguments": {"x": 1}}',
    "name is not the first key": '{"arguments": {"expression": "1"}, "name": "calculator"}',
    "an escape in the name": '{"name": "calcul\\u0061tor", "arguments": {}}',
    "JSON data": '{"name": "Alice", "age": 31}',
    "a python fence": "```python\nprint(17 / 100 * 2340)\n```",
    "a JSON fence holding a list": '```json\n[{"name": "calculator"}]\n```',
    "plain text": "397.8",
    "doubled braces with prose after them": "{" + CALL_JSON + "} and that is the call",
    "a template placeholder": "{{ name }} is a placeholder",
}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("case", sorted(PROSE_REPLIES))
def test_json_anywhere_else_stays_prose_exactly_as_written(case, chunk_size):
    output = PROSE_REPLIES[case]
    parser, events = parse(output, chunk_size)
    assert parser.calls == []
    assert parser.text == output
    assert "".join(event.text for event in events if event.kind == "text") == output


INVENTED_CALLS = {
    "bare": ('{"name": "calculate_units", "arguments": {"value": 17, "from": "km"}}', "bare_json"),
    "fenced": ('```json\n{"name": "calc", "parameters": {"x": "17% of 2,340"}}\n```', "fenced_json"),
    # asked who wrote Pride and Prejudice, the 0.5B "called" the title
    "a name with spaces": ('{"name": "Pride and Prejudice", "arguments": {"expression": "10:00"}}', "bare_json"),
}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("case", sorted(INVENTED_CALLS))
def test_a_call_of_a_tool_nobody_offered_is_a_call_the_agent_can_refuse(case, chunk_size):
    """Qwen2.5-Coder-0.5B invents tools (`calculate_units`); shown as a code block, that ended the
    turn with no answer. Read as a call, it gets an UnknownTool error naming the closest tools."""
    output, opening = INVENTED_CALLS[case]
    parser, events = parse(output, chunk_size)
    [(name, arguments, error, read_opening)] = read(parser)
    assert name == json.loads(output.strip("`json\n"))["name"] and error is None and read_opening == opening
    assert arguments and parser.text.strip() == ""
    assert not any(event.kind == "text" and event.text.strip() for event in events)


def test_prose_is_released_as_soon_as_it_cannot_be_a_call():
    parser = ModelOutputParser("hermes_json", SCHEMAS)
    assert parser.feed("{") == [] and parser.feed('"name": "cal') == []  # could still be a call
    shown = parser.feed("!")  # no name, offered or invented, has a "!"
    assert "".join(event.text for event in shown) == '{"name": "cal!'
    parser = ModelOutputParser("hermes_json", SCHEMAS)
    assert "".join(event.text for event in parser.feed("```py")) == "```py"


def test_a_forming_call_is_announced_only_once_it_is_known_to_be_one():
    parser = ModelOutputParser("hermes_json", SCHEMAS)
    assert parser.feed(CALL_JSON[:-5]) == [] and parser.feed(CALL_JSON[-5:]) == []
    events = parser.finish()
    assert [event.kind for event in events] == ["tool_call_delta", "tool_call_delta", "tool_call"]
    assert events[1].name == "calculator" and events[1].text == CALL_JSON and events[2].call.opening == "bare_json"


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_call_object_that_does_not_decode_is_a_call_with_an_error(chunk_size):
    parser, _ = parse('{"name": "calculator", "arguments": "0.17 * 2340"}', chunk_size)
    assert read(parser) == [("calculator", {}, '"arguments" must be a JSON object', "bare_json")]
    parser, _ = parse('```json\n{"name": "calculator", "arguments": {"expression": 1,}}\n```', chunk_size)
    [call] = parser.calls
    assert "not valid JSON" in call.error and call.opening == "fenced_json"


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_call_object_cut_off_by_the_end_of_the_output(chunk_size):
    parser, _ = parse('{"name": "notes_search", "arguments": {"query": "mi', chunk_size)
    assert read(parser) == [("notes_search", {}, "the tool call was cut off before it was complete", "bare_json")]
    parser, _ = parse('{"name": "notes_se', chunk_size)  # the name itself unfinished: not yet a call
    assert parser.calls == [] and parser.text == '{"name": "notes_se'


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_strings_holding_braces_quotes_and_tags_stay_in_the_object(chunk_size):
    arguments = {"query": 'a } b " { </tool_call> ```', "limit": 2}
    output = "```json\n" + json.dumps({"name": "notes_search", "arguments": arguments}) + "\n```"
    parser, _ = parse(output, chunk_size)
    assert read(parser) == [("notes_search", arguments, None, "fenced_json")]


def test_after_thinking_the_reply_starts_where_the_thoughts_end():
    parser, _ = parse(f"I need the calculator.</think>\n\n{CALL_JSON}", thinking=True)
    assert read(parser) == [("calculator", CALL["arguments"], None, "bare_json")]
    assert parser.thinking == "I need the calculator."


def test_without_offered_tools_a_call_object_is_prose():
    parser, _ = parse(CALL_JSON, schemas={})
    assert parser.calls == [] and parser.text == CALL_JSON


def test_tagged_calls_say_so():
    parser, _ = parse(f"Let me compute.\n<tool_call>\n{CALL_JSON}\n</tool_call>")
    assert read(parser) == [("calculator", CALL["arguments"], None, "tool_call_tag")]
    parser, _ = parse(f"<tool_call>\n{CALL_JSON}\n</tool_call>\n<tool_call>\n{CALL_JSON}\n</tool_call>")
    assert [call.opening for call in parser.calls] == ["tool_call_tag", "tool_call_tag"]
    xml = ModelOutputParser("qwen3_coder_xml", SCHEMAS)
    xml.feed("<function=calculator>\n<parameter=expression>\n1+1\n</parameter>\n</function>")
    xml.finish()
    assert [(call.name, call.opening) for call in xml.calls] == [("calculator", "function_tag")]


PIECES = [CALL_JSON, CALL_JSON[:20], CALL_JSON[20:], "```json\n", "```", "\n", " ", "{", "}", '"', '"name": "',
          "calculator", "<tool_call>", "</tool_call>", "</think>", "text"]


@settings(max_examples=300, deadline=None)
@given(output=st.lists(st.sampled_from(PIECES), max_size=8).map("".join), chunk_size=st.integers(1, 9),
       thinking=st.booleans())
def test_chunking_never_changes_what_a_reply_is(output, chunk_size, thinking):
    whole, _ = parse(output, thinking=thinking)
    chunked, events = parse(output, chunk_size, thinking=thinking)
    assert (whole.text, whole.thinking, read(whole)) == (chunked.text, chunked.thinking, read(chunked))
    assert "".join(event.text for event in events if event.kind == "text") == chunked.text
