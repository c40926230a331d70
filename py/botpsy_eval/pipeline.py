"""A case through the agent's own code: the prompt it renders and the calls it reads back.

Both ends are exactly what the app runs (the same modules run in Pyodide): the prompt is
`botpsy_agent.Agent.render_prompt()` for an agent whose tools are the case's functions
(converted by schema.tool_specs) and whose conversation is the case's messages, with the
agent's default system prompt and settings (thinking off); constrained tool calls are the
logits processors the agent asks for (`Agent.logits_processors`, toolCalls "auto"); the model's
output is read by `botpsy_agent.parsing.ModelOutputParser`, as Agent.run_turn reads it. No tool
is run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from botpsy_agent.agent import Agent
from botpsy_agent.chat_format import ChatFormat, prompt_leaves_thinking_open
from botpsy_agent.conversation import Conversation
from botpsy_agent.parsing import ModelOutputParser
from botpsy_agent.tooling import Tool

from .checker import Call
from .data import Case
from .schema import tool_specs


@dataclass(frozen=True)
class RenderedCase:
    case: Case
    prompt: str
    tool_specs: list[dict]
    constrained_processors: list[dict]  # what the agent asks the runtime for with toolCalls "auto"


@dataclass(frozen=True)
class ReadCalls:
    calls: list[Call]        # the calls that parsed
    unparsed: list[dict]     # {"raw", "error", "opening"} of those that did not
    text: str                # the visible text around them
    openings: list[str] = field(default_factory=list)  # how each parsed call opened (ParsedCall.opening)


class _NoModel:
    """The agent here only renders prompts; generation happens in the browser or PyTorch."""

    def generate(self, prompt, options):
        raise RuntimeError("the eval's agent renders prompts only")


def _never_run(arguments):
    raise RuntimeError("the eval scores calls; it never runs a tool")


def chat_format_for(folder: Path) -> ChatFormat:
    """The folder's chat format, read the way the page reads it (tokenizer_config + manifest)."""
    folder = Path(folder)
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return ChatFormat.from_model_files(tokenizer_config, manifest)


def render_case(chat_format: ChatFormat, case: Case) -> RenderedCase:
    specs = tool_specs(case.functions)
    agent = Agent(model=_NoModel(), chat_format=chat_format)
    for spec in specs:
        function = spec["function"]
        agent.add_tool(Tool.from_json_schema(function["name"], function["description"],
                                             function["parameters"], _never_run))
    agent.conversation = Conversation([dict(message) for message in case.messages])
    agent.options.tool_calls = "auto"  # the app's default for a folder that names its call format
    prompt = agent.render_prompt()
    return RenderedCase(case, prompt, [tool.spec() for tool in agent.active_tools()],
                        agent.logits_processors(prompt))


def read_calls(chat_format: ChatFormat, rendered: RenderedCase, output: str) -> ReadCalls:
    schemas = {spec["function"]["name"]: spec["function"]["parameters"] for spec in rendered.tool_specs}
    parser = ModelOutputParser(chat_format.tool_call_format, schemas,
                               thinking=prompt_leaves_thinking_open(rendered.prompt))
    parser.feed(output)
    parser.finish()
    parsed = [call for call in parser.calls if call.error is None]
    unparsed = [{"raw": call.raw, "error": call.error, "opening": call.opening}
                for call in parser.calls if call.error is not None]
    return ReadCalls([Call(call.name, call.arguments) for call in parsed], unparsed, parser.text,
                     [call.opening for call in parsed])
