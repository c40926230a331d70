"""Streaming parsers for BotPsy's Qwen3-Coder XML calls and Hermes JSON calls."""

import json

from hypothesis import given, settings, strategies as st

from botpsy_agent.parsing import ModelOutputParser

SCHEMAS = {
    "calendar_add": {"type": "object", "properties": {
        "title": {"type": "string"}, "minutes": {"type": "integer"}, "hours": {"type": "number"},
        "all_day": {"type": "boolean"}, "guests": {"type": "array", "items": {"type": "string"}},
        "extra": {"type": "object"}}},
}


def parse(output, chunk_size=None, **options):
    parser = ModelOutputParser(schemas=SCHEMAS, **options)
    events = []
    chunks = [output] if chunk_size is None else [
        output[i:i + chunk_size] for i in range(0, len(output), chunk_size)]
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.finish()
    return parser, events


def summary(parser):
    return (parser.text, parser.thinking,
            [(call.name, call.arguments, call.error) for call in parser.calls])


XML_CALL = ("<tool_call>\n<function=calendar_add>\n<parameter=title>\nDentist\n</parameter>\n"
            "<parameter=minutes>\n30\n</parameter>\n<parameter=all_day>\nfalse\n</parameter>\n"
            "<parameter=hours>\n1.5\n</parameter>\n<parameter=guests>\n[\"Ann\", \"Bo\"]\n</parameter>\n"
            "</function>\n</tool_call>")


def test_xml_call_values_are_converted_to_schema_types():
    parser, _ = parse("Sure." + XML_CALL)
    [call] = parser.calls
    assert call.name == "calendar_add" and call.error is None
    assert call.arguments == {"title": "Dentist", "minutes": 30, "all_day": False, "hours": 1.5,
                              "guests": ["Ann", "Bo"]}
    assert parser.text == "Sure."


def test_xml_parameters_in_any_order_and_multiline_strings_kept():
    output = ("<tool_call><function=calendar_add><parameter=minutes>5</parameter>"
              "<parameter=title>\nline one\nline two\n</parameter></function></tool_call>")
    parser, _ = parse(output)
    assert parser.calls[0].arguments == {"minutes": 5, "title": "line one\nline two"}


def test_several_calls_in_one_turn():
    parser, events = parse(XML_CALL + "\n" + XML_CALL.replace("Dentist", "Gym"))
    assert [call.arguments["title"] for call in parser.calls] == ["Dentist", "Gym"]
    assert [event.index for event in events if event.kind == "tool_call"] == [0, 1]


def test_thinking_is_separated_and_call_inside_unclosed_think_is_found():
    parser, _ = parse("<think>\nplan it\n" + XML_CALL)
    assert parser.thinking.strip() == "plan it"
    assert parser.calls[0].name == "calendar_add" and parser.text == ""
    parser, _ = parse("already thinking</think>\n\nAnswer.", thinking=True)
    assert parser.thinking == "already thinking" and parser.text == "\n\nAnswer."


def test_forming_call_is_streamed_with_its_name():
    _, events = parse(XML_CALL, chunk_size=3)
    deltas = [event for event in events if event.kind == "tool_call_delta"]
    assert len(deltas) > 5
    assert deltas[-1].name == "calendar_add" and deltas[0].name is None
    assert "".join(delta.text for delta in deltas) == XML_CALL[len("<tool_call>"):-len("</tool_call>")]


def test_hermes_json_calls():
    call = {"name": "calendar_add", "arguments": {"title": "Tea", "minutes": 10}}
    parser, _ = parse(f"<tool_call>\n{json.dumps(call)}\n</tool_call>", tool_call_format="hermes_json")
    assert parser.calls[0].name == "calendar_add"
    assert parser.calls[0].arguments == {"title": "Tea", "minutes": 10}
    stringified = {"name": "x", "arguments": json.dumps({"a": 1})}
    parser, _ = parse(f"<tool_call>{json.dumps(stringified)}</tool_call>", tool_call_format="hermes_json")
    assert parser.calls[0].arguments == {"a": 1}


def test_malformed_calls_are_reported_not_raised():
    parser, _ = parse("<tool_call>{not json</tool_call>", tool_call_format="hermes_json")
    assert parser.calls[0].error and "JSON" in parser.calls[0].error
    parser, _ = parse("<tool_call>hello</tool_call>")
    assert "function" in parser.calls[0].error
    parser, _ = parse("<tool_call>\n<function=calendar_add>\n<parameter=title>\nDen")
    assert parser.calls[0].name == "calendar_add" and "cut off" in parser.calls[0].error


def test_value_that_does_not_fit_the_type_is_left_for_validation():
    parser, _ = parse("<tool_call><function=calendar_add><parameter=minutes>soon</parameter>"
                      "</function></tool_call>")
    assert parser.calls[0].arguments == {"minutes": "soon"}


TAG_PIECES = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<function=calendar_add>",
              "<function=", "</function>", "<parameter=minutes>", "<parameter=", "</parameter>",
              "\n", "{", "}", '"name"', ":", "<", ">", "/", "=", "30", "abc"]
garbage = st.lists(st.one_of(st.sampled_from(TAG_PIECES), st.text(max_size=8)), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(output=garbage, fmt=st.sampled_from(["qwen3_coder_xml", "hermes_json"]),
       thinking=st.booleans())
def test_garbage_never_raises(output, fmt, thinking):
    parse(output, tool_call_format=fmt, thinking=thinking)


@settings(max_examples=300, deadline=None)
@given(output=garbage, chunk_size=st.integers(1, 12), fmt=st.sampled_from(["qwen3_coder_xml", "hermes_json"]))
def test_chunking_does_not_change_the_result(output, chunk_size, fmt):
    whole, _ = parse(output, tool_call_format=fmt)
    chunked, _ = parse(output, chunk_size=chunk_size, tool_call_format=fmt)
    assert summary(whole) == summary(chunked)


@settings(max_examples=200, deadline=None)
@given(cut=st.integers(0, len(XML_CALL) + 20), prefix=st.text(max_size=10))
def test_truncated_output_never_raises_and_keeps_text(cut, prefix):
    output = (prefix.replace("<", "") + XML_CALL + " done")[:cut]
    parser, _ = parse(output)
    assert len(parser.calls) <= 1
    if parser.calls and parser.calls[0].error is None:
        assert parser.calls[0].arguments["title"] == "Dentist"


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=30).filter(lambda t: "<" not in t), chunk_size=st.integers(1, 5))
def test_plain_text_passes_through_unchanged(text, chunk_size):
    parser, _ = parse(text, chunk_size=chunk_size)
    assert parser.text == text and not parser.calls and parser.thinking == ""


def test_hermes_quoted_numbers_and_booleans_are_read_as_schema_types():
    call = {"name": "calendar_add", "arguments": {"title": "7", "minutes": "15", "all_day": "true"}}
    parser, _ = parse(f"<tool_call>{json.dumps(call)}</tool_call>", tool_call_format="hermes_json")
    assert parser.calls[0].arguments == {"title": "7", "minutes": 15, "all_day": True}
