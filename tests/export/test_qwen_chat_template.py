"""Our Qwen3.5 chat template speaks the Qwen3-Coder XML tool format, the same way in
jinja2 (Pyodide agent, Python) and with or without trim_blocks/lstrip_blocks (transformers)."""

from importlib import resources

import jinja2
import pytest

TEMPLATE = resources.files("botpsy_export.templates").joinpath("qwen3_5_chat.jinja").read_text()
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CONVERSATION = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}}]},
    {"role": "tool", "content": "12 C"},
    {"role": "tool", "content": "18 C"},
]


def render(trim=False, **variables):
    env = jinja2.Environment(trim_blocks=trim, lstrip_blocks=trim)
    return env.from_string(TEMPLATE).render(**variables)


@pytest.mark.parametrize("trim", [False, True])
def test_tools_are_listed_in_the_system_turn(trim):
    text = render(trim, messages=CONVERSATION, tools=TOOLS, add_generation_prompt=True)
    system = text.split("<|im_end|>")[0]
    assert system.startswith("<|im_start|>system\nYou are helpful.\n\n# Tools\n")
    assert "<tools>\n{" in system and '"name": "get_weather"' in system and "}\n</tools>" in system
    assert "<tool_call>\n<function=NAME>\n<parameter=KEY>\nvalue\n</parameter>\n</function>\n</tool_call>" in system


def test_assistant_tool_calls_render_as_xml_and_results_as_one_user_turn():
    text = render(messages=CONVERSATION, tools=TOOLS, add_generation_prompt=True)
    assert ("<|im_start|>assistant\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
            "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n"
            "<parameter=city>\nRome\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n"
            "</tool_call><|im_end|>\n") in text
    assert ("<|im_start|>user\n<tool_response>\n12 C\n</tool_response>\n<tool_response>\n18 C\n"
            "</tool_response><|im_end|>\n") in text


def test_generation_prompt_opens_a_think_block_unless_thinking_is_off():
    messages = [{"role": "user", "content": "hi"}]
    assert render(messages=messages, add_generation_prompt=True) == \
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert render(messages=messages, add_generation_prompt=True, enable_thinking=False).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert render(messages=messages, add_generation_prompt=False).endswith("hi<|im_end|>\n")


def test_whitespace_options_do_not_change_the_output():
    variables = dict(messages=CONVERSATION, tools=TOOLS, add_generation_prompt=True)
    assert render(False, **variables) == render(True, **variables)
