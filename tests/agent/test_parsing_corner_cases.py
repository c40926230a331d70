"""The tool-call shapes that models (and engines' own test suites) show beyond the common ones:
marker text inside values, a missing <tool_call> opener, JSON null, Hermes strings holding the
tags. Each is read the same way whatever the chunking, and a cut-off call is never complete."""

import json

import pytest

from botpsy_agent.parsing import ModelOutputParser

SCHEMAS = {
    "notes_add": {"type": "object", "properties": {
        "title": {"type": "string"}, "text": {"type": "string"}, "minutes": {"type": "integer"},
        "due": {"type": ["string", "null"]}, "count": {"type": ["integer", "null"]},
        "size": {"anyOf": [{"type": "number"}, {"type": "null"}]}, "label": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}}}},
}
CHUNKINGS = [None, 1, 2, 5, 13]


def parse(output, chunk_size=None, schemas=SCHEMAS, **options):
    parser = ModelOutputParser(schemas=schemas, **options)
    chunks = [output] if chunk_size is None else [output[i:i + chunk_size]
                                                 for i in range(0, len(output), chunk_size)]
    for chunk in chunks:
        parser.feed(chunk)
    parser.finish()
    return parser


def xml_call(arguments, name="notes_add", opener=True):
    lines = [f"<function={name}>"]
    for key, value in arguments.items():
        lines += [f"<parameter={key}>", value if isinstance(value, str) else json.dumps(value), "</parameter>"]
    body = "\n".join(lines + ["</function>"])
    return f"<tool_call>\n{body}\n</tool_call>" if opener else body + "\n</tool_call>"


MARKER_TEXT = ("Close a value with </parameter>, a call with </function> then </tool_call>;\n"
               "start one with <tool_call> and <function=notes_add>, arguments with <parameter=x>.\n"
               "<think>not thinking</think> </parameter>x </function>!")


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_value_holding_the_formats_markers_is_read_whole(chunk_size):
    output = "Saved:\n" + xml_call({"title": "XML notes", "text": MARKER_TEXT, "minutes": 3}) + "\nDone."
    parser = parse(output, chunk_size)
    [call] = parser.calls
    assert call.error is None
    assert call.arguments == {"title": "XML notes", "text": MARKER_TEXT, "minutes": 3}
    assert parser.text == "Saved:\n\nDone."


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_value_ends_at_a_closing_tag_followed_by_the_next_parameter_or_the_end(chunk_size):
    # The first </parameter> is followed by text, so it is part of the value.
    output = ("<tool_call>\n<function=notes_add>\n<parameter=text>\na</parameter>b\n</parameter>\n"
              "<parameter=label>\nc\n</parameter>\n</function>\n</tool_call>")
    [call] = parse(output, chunk_size).calls
    assert call.arguments == {"text": "a</parameter>b", "label": "c"}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_value_written_as_the_template_writes_it_ends_only_at_a_framed_closing_tag(chunk_size):
    # "\n</parameter>\n" ends it (what the tool-call grammar allows); a bare "</parameter>" inside does not.
    output = ("<tool_call>\n<function=notes_add>\n<parameter=text>\na</parameter>\n<parameter=x>\nb\n"
              "</parameter>\n</function>\n</tool_call>")
    [call] = parse(output, chunk_size).calls
    assert call.arguments == {"text": "a</parameter>\n<parameter=x>\nb"}
    [call] = parse(output.replace("<parameter=text>\n", "<parameter=text>"), chunk_size).calls
    assert call.arguments == {"text": "a", "x": "b"}  # not written that way: the first well-formed end


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_the_last_value_may_lack_its_function_close(chunk_size):
    output = "<tool_call>\n<function=notes_add>\n<parameter=title>\nGym\n</parameter>\n</tool_call>"
    [call] = parse(output, chunk_size).calls
    assert call.error is None and call.arguments == {"title": "Gym"}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_call_without_its_tool_call_opener_is_read(chunk_size):
    output = xml_call({"title": "Gym", "minutes": 45}, opener=False)
    parser = parse(output, chunk_size)
    [call] = parser.calls
    assert (call.name, call.arguments, call.error) == ("notes_add", {"title": "Gym", "minutes": 45}, None)
    assert parser.text == ""


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_bare_calls_after_thinking_and_one_after_another(chunk_size):
    first = xml_call({"title": "a"}, opener=False).removesuffix("\n</tool_call>")
    second = xml_call({"title": "b", "text": "uses </function> in text"}, opener=False)
    parser = parse("plan</think>\n\n" + first + "\n" + second + "\nThat is all.", chunk_size, thinking=True)
    assert [(c.arguments, c.error) for c in parser.calls] == [
        ({"title": "a"}, None), ({"title": "b", "text": "uses </function> in text"}, None)]
    assert parser.thinking == "plan" and parser.text == "\n\n\n\nThat is all."


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_the_function_tag_inside_a_sentence_is_prose(chunk_size):
    output = "Models write <function=NAME> blocks; see <parameter=KEY> too.\nOK"
    parser = parse(output, chunk_size)
    assert parser.text == output and not parser.calls


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_cut_off_bare_call_is_not_complete(chunk_size):
    parser = parse("<function=notes_add>\n<parameter=title>\nGy", chunk_size)
    [call] = parser.calls
    assert call.name == "notes_add" and "cut off" in call.error


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_call_cut_inside_a_value_after_marker_text_is_not_complete(chunk_size):
    output = "<tool_call>\n<function=notes_add>\n<parameter=text>\nend it with </tool_call> and</function>"
    parser = parse(output, chunk_size)
    [call] = parser.calls
    assert "cut off" in call.error and parser.text == ""


def test_null_is_none_where_the_schema_allows_null_and_text_elsewhere():
    [call] = parse(xml_call({"due": "null", "count": "null", "size": "null", "label": "null",
                             "minutes": "null"})).calls
    assert call.arguments == {"due": None, "count": None, "size": None, "label": "null", "minutes": "null"}
    [call] = parse(xml_call({"due": "Friday", "count": "4", "size": "2.5"})).calls
    assert call.arguments == {"due": "Friday", "count": 4, "size": 2.5}
    [call] = parse(xml_call({"due": "None", "count": "None"})).calls  # Qwen's template writes None so
    assert call.arguments == {"due": "None", "count": None}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_hermes_strings_holding_the_call_tags_stay_in_the_string(chunk_size):
    arguments = {"text": 'wrap it: <tool_call>{"name": "x"}</tool_call> "quoted" \\ done', "title": "t"}
    call_json = json.dumps({"name": "notes_add", "arguments": arguments})
    output = f"<tool_call>\n{call_json}\n</tool_call>\nAfter."
    parser = parse(output, chunk_size, tool_call_format="hermes_json")
    [call] = parser.calls
    assert call.error is None and call.arguments == arguments
    assert parser.text == "\nAfter."


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_hermes_malformed_json_still_ends_at_its_closing_tag(chunk_size):
    parser = parse("<tool_call>{name: notes_add}</tool_call> text", chunk_size, tool_call_format="hermes_json")
    [call] = parser.calls
    assert "JSON" in call.error and parser.text == " text"


# Peers' fixtures: a </parameter> the model left out, read as vLLM's Qwen3-Coder parser reads it
# (its test_extract_tool_calls_missing_closing_parameter_tag and vllm-project/vllm issue 57699).
WEATHER = {"get_current_weather": {"type": "object", "properties": {
    "city": {"type": "string"}, "state": {"type": "string"}, "unit": {"type": "string"}}}}
THINQ = {"ThinQ_Connect": {"type": "object", "properties": {"body": {"type": "object"}}}}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_missing_closing_parameter_tag_before_the_next_parameter(chunk_size):
    output = ("Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n"
              "<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n"
              "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>")
    parser = parse(output, chunk_size, schemas=WEATHER)
    [call] = parser.calls
    assert (call.name, call.arguments, call.error) == (
        "get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}, None)
    assert parser.text.strip() == "Let me check the weather for you:"


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_a_missing_closing_parameter_tag_before_the_function_close(chunk_size):
    output = ('<tool_call>\n<function=ThinQ_Connect>\n<parameter=body>\n{"airConJobMode": "AIR_CLEAN", '
              '"windStrength": "HIGH", "monitoringEnabled": true}\n</function>\n</tool_call>')
    [call] = parse(output, chunk_size, schemas=THINQ).calls
    assert (call.name, call.error) == ("ThinQ_Connect", None)
    assert call.arguments == {"body": {"airConJobMode": "AIR_CLEAN", "windStrength": "HIGH", "monitoringEnabled": True}}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_every_closing_parameter_tag_missing_in_a_bare_call(chunk_size):
    output = ("<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n"
              "<parameter=unit>\ncelsius\n</function>\nIt is mild.")
    parser = parse(output, chunk_size, schemas=WEATHER)
    [call] = parser.calls
    assert (call.arguments, call.error) == ({"city": "Dallas", "state": "TX", "unit": "celsius"}, None)
    assert parser.text == "\nIt is mild."


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_markers_inside_a_line_of_a_value_are_still_text(chunk_size):
    """Only a line that opens a parameter (or holds the last </function>) ends an unclosed value."""
    output = ("<tool_call>\n<function=notes_add>\n<parameter=text>\nwrite <parameter=x> and </function> "
              "inline\n</parameter>\n</function>\n</tool_call>")
    [call] = parse(output, chunk_size).calls
    assert (call.arguments, call.error) == ({"text": "write <parameter=x> and </function> inline"}, None)
