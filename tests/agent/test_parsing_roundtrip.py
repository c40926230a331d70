"""Render, then parse: arguments written into an assistant turn by the chat template come back
from the streaming parser as they were, however the output is chunked, including values that
hold the format's own markers. The renderers are the ones the agent uses: the template the
export ships for Qwen3.5 models (Qwen3-Coder XML) and the Hermes JSON fallback for templates
without tools (SmolLM2's).

A few spellings are the same text as a different call, so no parser can give them back; the
generator leaves those out (see `_ambiguous`)."""

import json
import re
from importlib import resources

from hypothesis import example, given, settings, strategies as st

from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.parsing import ModelOutputParser

SCHEMA = {"type": "object", "properties": {
    "title": {"type": "string"}, "text": {"type": "string"}, "minutes": {"type": "integer"},
    "hours": {"type": "number"}, "all_day": {"type": "boolean"},
    "guests": {"type": "array", "items": {"type": "string"}}, "extra": {"type": "object"},
    "count": {"type": ["integer", "null"]}, "due": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
TOOLS = [{"name": "calendar_add", "description": "Add an event.", "parameters": SCHEMA},
         {"name": "notes_add", "description": "Add a note.", "parameters": SCHEMA}]
SCHEMAS = {tool["name"]: tool["parameters"] for tool in TOOLS}

MARKERS = ["</parameter>", "<parameter=x>", "<parameter=title>", "</function>", "<function=notes_add>",
           "<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_response>", "<|im_start|>",
           "<", ">", "/", "=", "\n", " ", '"', "\\", "{", "}", "null"]
marker_text = st.lists(st.one_of(st.sampled_from(MARKERS), st.text(max_size=6)), max_size=12).map("".join)
json_scalar = st.one_of(st.integers(-10**6, 10**6), st.booleans(), marker_text)

ARGUMENTS = st.fixed_dictionaries({}, optional={
    "title": marker_text, "text": marker_text, "minutes": st.integers(-10**9, 10**9),
    "hours": st.floats(allow_nan=False, allow_infinity=False), "all_day": st.booleans(),
    "guests": st.lists(marker_text, max_size=3),
    "extra": st.dictionaries(st.text(max_size=5), json_scalar, max_size=3),
    "count": st.one_of(st.none(), st.integers(-100, 100)),
    # A nullable string whose text is "null" reads as None: that spelling is left out.
    "due": st.one_of(st.none(), marker_text.filter(lambda text: text.strip() != "null")),
})
CALLS = st.lists(st.tuples(st.sampled_from([tool["name"] for tool in TOOLS]), ARGUMENTS), min_size=1, max_size=3)


def _written(value):
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _ambiguous(arguments) -> bool:
    """Value text that is also the end of the value or of the call: a newline-framed
    </parameter> then the next parameter, a </parameter> (and </function>) then </tool_call>,
    or, before the value's first </parameter>, a line starting with <parameter= or </function>
    (what a call whose </parameter> was left out looks like: xml_body.py)."""
    return any(re.search(r"\n</parameter>\n\s*<parameter=|</parameter>\s*(</function>\s*)?</tool_call>",
                         "\n" + _written(value) + "\n")
               or re.search(r"\n(<parameter=|</function>)", ("\n" + _written(value)).split("</parameter>")[0])
               for value in arguments.values())


def _qwen_format():
    template = resources.files("botpsy_export.templates").joinpath("qwen3_5_chat.jinja").read_text()
    return ChatFormat(template, "qwen3_coder_xml", True)


CHATML = ("{%- for message in messages -%}{{- '<|im_start|>' + message.role + '\\n' + message.content"
          " + '<|im_end|>\\n' -}}{%- endfor -%}{%- if add_generation_prompt -%}"
          "{{- '<|im_start|>assistant\\n' -}}{%- endif -%}")
FORMATS = {"qwen3_coder_xml": _qwen_format(), "hermes_json": ChatFormat(CHATML, "hermes_json", False)}


def rendered_assistant_output(chat_format, calls, content):
    """What the model would have written for this assistant turn, as the template renders it."""
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": content,
                 "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}
                                for name, arguments in calls]}]
    prompt = chat_format.render(messages, TOOLS, thinking=False, add_generation_prompt=False)
    start = prompt.rindex("<|im_start|>assistant\n") + len("<|im_start|>assistant\n")
    return prompt[start:prompt.rindex("<|im_end|>")]


def parsed(output, tool_call_format, cuts):
    parser = ModelOutputParser(tool_call_format, SCHEMAS)
    position = 0
    for cut in sorted(cuts):
        parser.feed(output[position:cut])
        position = max(position, cut)
    parser.feed(output[position:])
    parser.finish()
    return parser


cut_points = st.lists(st.integers(0, 4000), max_size=8)
plain_content = st.text(max_size=20).filter(lambda text: "<" not in text)


@settings(max_examples=400, deadline=None)
@given(calls=CALLS, content=plain_content, cuts=cut_points,
       tool_call_format=st.sampled_from(sorted(FORMATS)))
@example(calls=[("calendar_add", {"title": "</parameter></function>", "due": None, "guests": ["</tool_call>"],
                                  "text": "", "extra": {}})],
         content="", cuts=[], tool_call_format="qwen3_coder_xml")
@example(calls=[("calendar_add", {"title": "</parameter></function></function></tool_call>"})],
         content="", cuts=[], tool_call_format="qwen3_coder_xml")
@example(calls=[("calendar_add", {"title": "</parameter></function><tool_call></tool_call>"})],
         content="", cuts=[], tool_call_format="qwen3_coder_xml")  # all found by hypothesis: a value's
#   </parameter></function> ended the function early when a </tool_call> in it or a later value cut the call
def test_rendered_calls_parse_back_to_their_arguments(calls, content, cuts, tool_call_format):
    if tool_call_format == "qwen3_coder_xml" and any(_ambiguous(arguments) for _, arguments in calls):
        return
    output = rendered_assistant_output(FORMATS[tool_call_format], calls, content)
    parser = parsed(output, tool_call_format, cuts)
    assert [(call.name, call.arguments, call.error) for call in parser.calls] == \
        [(name, arguments, None) for name, arguments in calls]
    assert parser.text.strip() == content.strip()


@settings(max_examples=300, deadline=None)
@given(calls=CALLS, cut=st.integers(0, 4000), cuts=cut_points)
def test_a_rendered_call_cut_short_is_never_complete(calls, cut, cuts):
    """Cut anywhere, the calls read as complete are the ones fully written. (A value holding
    </function> can be cut right after it, and that prefix is a complete call: left out.)"""
    if any(_ambiguous(arguments) or "</function>" in _written(value)
           for _, arguments in calls for value in arguments.values()):
        return
    output = rendered_assistant_output(FORMATS["qwen3_coder_xml"], calls, "")
    cut = min(cut, len(output))
    parser = parsed(output[:cut], "qwen3_coder_xml", [c for c in cuts if c < cut])
    complete = [call for call in parser.calls if call.error is None]
    assert [(call.name, call.arguments) for call in complete] == \
        [(name, arguments) for name, arguments in calls[:len(complete)]]
    if cut < output.rindex("</function>") + len("</function>"):  # the last call is still open
        assert len(complete) < len(calls)
