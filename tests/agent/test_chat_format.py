"""Prompts come from the model's own chat template, extend each other, and fall back
to describing tools in the system prompt when the template has no tool support."""

import asyncio
import json

import pytest

from botpsy_agent.agent import AFTER_RESULTS, Agent, AgentOptions
from botpsy_agent.chat_format import ChatFormat, TemplateError, prompt_leaves_thinking_open
from botpsy_agent.scripted_model import ScriptedModel
from botpsy_agent.tooling import ToolContext, tool

from .conftest import xml_call


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: First number.
        b: Second number.
    """
    return a + b


def run(agent, text):
    async def collect():
        return [event async for event in agent.run_turn(text)]
    return asyncio.run(collect())


@pytest.mark.parametrize("eos_token", ["", "<|im_end|>"])
@pytest.mark.parametrize("thinking", [True, False])
def test_each_prompt_extends_the_previous_prompt_and_output(qwen_format, thinking, eos_token):
    """With the end-of-message token known, later steps extend the previous prompt
    directly; without it, rendering the whole conversation gives the same prompts (as long as no
    user message follows the results: Qwen3.5's template drops the thinking before the person's
    last message, so the agent's note after results would rewrite earlier text there)."""
    qwen_format.eos_token = eos_token
    reasoning = "I need the sum.\n</think>\n\n" if thinking else ""
    outputs = [reasoning + xml_call("add", a=2, b=3),
               (("Now double.\n</think>\n\n") if thinking else "") + xml_call("add", a=5, b=5),
               ("Done.\n</think>\n\n" if thinking else "") + "The answer is 10."]
    model = ScriptedModel(outputs)
    agent = Agent(model=model, chat_format=qwen_format,
                  options=AgentOptions(after_results=AFTER_RESULTS if eos_token else None))
    agent.context.settings.thinking = thinking
    agent.add_tool(add)
    events = run(agent, "What is (2+3)*2?")
    assert events[-1] == {"type": "final", "text": "The answer is 10.", "steps": 3}
    for previous, output, following in zip(model.prompts, model.generated, model.prompts[1:]):
        assert following.startswith(previous + output)
    assert prompt_leaves_thinking_open(model.prompts[0]) is thinking
    assert '"name": "add"' in model.prompts[0]  # the tool list reached the template


def test_next_user_turn_keeps_the_prefix_up_to_the_last_user_message(qwen_format):
    model = ScriptedModel(["First.", "Second."])
    agent = Agent(model=model, chat_format=qwen_format)
    run(agent, "one")
    run(agent, "two")
    first_turn_end = model.prompts[0].rsplit("<|im_start|>assistant", 1)[0]
    assert model.prompts[1].startswith(first_turn_end + "<|im_start|>assistant\n")
    assert "First." in model.prompts[1]


def test_smollm2_fallback_describes_tools_and_uses_hermes_json(smollm2_template):
    chat_format = ChatFormat.from_model_files({"chat_template": smollm2_template, "eos_token": "<|im_end|>"},
                                              {"tool_call_format": None, "chat_template_supports_tools": False})
    assert chat_format.tool_call_format == "hermes_json" and not chat_format.supports_tools
    call = json.dumps({"name": "add", "arguments": {"a": 1, "b": 2}})
    model = ScriptedModel([f"<tool_call>\n{call}\n</tool_call>", "It is 3."])
    agent = Agent(model=model, chat_format=chat_format)
    agent.add_tool(add)
    events = run(agent, "1+2?")
    assert events[-1]["text"] == "It is 3."
    first, second = model.prompts
    assert first.startswith("<|im_start|>system\nYou are BotPsy")
    assert "<tools>" in first and '"name": "add"' in first and "<tool_call>" in first
    assert "<|im_start|>user\n<tool_response>\n3\n</tool_response><|im_end|>" in second
    assert f"<|im_start|>assistant\n<tool_call>\n{call}\n</tool_call><|im_end|>" in second
    assert second.startswith(first + model.generated[0] + "<|im_end|>\n")


def test_template_support_is_detected_without_a_manifest(qwen_format, smollm2_template):
    detected = ChatFormat.from_model_files({"chat_template": qwen_format.template_source,
                                            "eos_token": {"content": "<|im_end|>"}})
    assert detected.supports_tools and detected.tool_call_format == "qwen3_coder_xml"
    assert detected.eos_token == "<|im_end|>"
    assert not ChatFormat.from_model_files({"chat_template": smollm2_template}).supports_tools


def test_missing_or_broken_template_is_a_clear_error():
    with pytest.raises(TemplateError, match="no chat_template"):
        ChatFormat.from_model_files({})
    with pytest.raises(TemplateError, match="does not compile"):
        ChatFormat("{% if %}")
    broken = ChatFormat("{{ raise_exception('only user and assistant roles') }}")
    with pytest.raises(TemplateError, match="only user and assistant roles"):
        broken.render([{"role": "user", "content": "hi"}], [], thinking=False)


def test_template_failure_becomes_an_error_event():
    agent = Agent(model=ScriptedModel(["x"]), chat_format=ChatFormat("{{ messages[5].content }}"),
                  context=ToolContext())
    events = run(agent, "hi")
    assert events[-1]["type"] == "error" and "TemplateError" in events[-1]["message"]


@pytest.mark.parametrize("thinking", [True, False])
def test_exported_qwen35_template_prompts_extend_within_a_turn(thinking):
    """The template the export writes into Qwen3.5 folders (it drops thinking from
    history): within a turn each prompt still extends the previous prompt + output,
    and the next user turn keeps everything before the first assistant reply."""
    from botpsy_web import REPO_ROOT

    source = (REPO_ROOT / "export" / "botpsy_export" / "templates" / "qwen3_5_chat.jinja").read_text()
    chat_format = ChatFormat.from_model_files({"chat_template": source, "eos_token": "<|im_end|>"},
                                              {"tool_call_format": "qwen3_coder_xml",
                                               "chat_template_supports_tools": True})
    think = "Let me add.\n</think>\n\n" if thinking else ""
    model = ScriptedModel([think + xml_call("add", a=2, b=3), think + xml_call("add", a=5, b=5),
                           think + "Ten.", "Bye."])
    agent = Agent(model=model, chat_format=chat_format)
    agent.context.settings.thinking = thinking
    agent.add_tool(add)
    assert run(agent, "(2+3)*2?")[-1]["text"] == "Ten."
    assert '"name": "add"' in model.prompts[0]
    for previous, output, following in zip(model.prompts[:3], model.generated, model.prompts[1:3]):
        assert following.startswith(previous + output + "<|im_end|>\n<|im_start|>user\n<tool_response>")
    run(agent, "thanks")
    first_reply = model.prompts[0].rsplit("<|im_start|>assistant\n", 1)[0]
    assert model.prompts[3].startswith(first_reply + "<|im_start|>assistant\n")


def test_a_template_that_rewrites_earlier_text_gets_a_full_render():
    counting = ChatFormat("<|im_start|>system\n{{ messages|length }} messages<|im_end|>\n"
                          "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
                          "qwen3_coder_xml", True, eos_token="<|im_end|>")
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"},
                {"role": "tool", "content": "5"}]
    assert counting.continue_prompt("whatever", "x", messages, [], False) is None
    model = ScriptedModel([xml_call("add", a=1, b=1), "Two."])
    agent = Agent(model=model, chat_format=counting)
    agent.add_tool(add)
    assert run(agent, "1+1")[-1]["text"] == "Two."
    # the agent's now line, user, call, result, the agent's note after it, system
    assert model.prompts[1].startswith("<|im_start|>system\n6 messages")
