"""The models a run can put in the agent: the scripted obeyer, or an exported folder in the browser.

Both are botpsy_agent Models (`generate(prompt, options)` streams text). The browser one is
`botpsy_eval.browser.BrowserModel` (web/runtime in headless Chromium, greedy), as `eval` runs it.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import AsyncIterator

from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.scripted_model import ScriptedModel

from .approvers import GroundTruth
from .obeyer import ScriptedObeyer

SCRIPTED = "scripted"


def default_chat_format() -> ChatFormat:
    """The chat format a BotPsy folder carries (export's Qwen3.5 template: Qwen3-Coder XML calls)."""
    template = resources.files("botpsy_export.templates").joinpath("qwen3_5_chat.jinja").read_text(encoding="utf-8")
    return ChatFormat(template, "qwen3_coder_xml", True, "", "<|im_end|>")


def folder_chat_format(folder: Path) -> tuple[ChatFormat, tuple[str, ...]]:
    """A folder's chat format and its tokenizer's added tokens, read as the page reads them."""
    from botpsy_eval.pipeline import chat_format_for

    folder = Path(folder)
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    special_tokens = tuple(token["content"] for token in tokenizer.get("added_tokens", []))
    return chat_format_for(folder), special_tokens


def scripted_model_factory(chat_format: ChatFormat, max_steps: int):
    def make(tool_specs: list[dict], truth: GroundTruth, user_task, injection_task) -> ScriptedModel:
        obeyer = ScriptedObeyer(
            chat_format, tool_specs, list(truth.user_calls), user_task.GROUND_TRUTH_OUTPUT,
            injection_task.GOAL if injection_task else None, list(truth.injection_calls),
            injection_task.GROUND_TRUTH_OUTPUT if injection_task else "")
        return ScriptedModel([obeyer] * max_steps, chunk_size=64)
    return make


class BrowserAgentModel:
    """botpsy_eval's BrowserModel as the agent's Model: one greedy generation per reply."""

    def __init__(self, browser_model):
        self.browser_model = browser_model
        self.prompts: list[str] = []
        self.seconds = 0.0

    async def generate(self, prompt: str, options: dict) -> AsyncIterator[str]:
        self.prompts.append(prompt)
        generation = self.browser_model.generate(prompt, options["maxTokens"], options.get("logitsProcessors"))
        self.seconds += generation.seconds
        yield generation.text


def browser_model_factory(model: BrowserAgentModel):
    def make(tool_specs, truth, user_task, injection_task) -> BrowserAgentModel:
        return model
    return make
