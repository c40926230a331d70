"""What the browser scenarios of `botpsy-web bench` (bench_constrained, bench_returning_visitor)
share: the agent as the page builds it for a model folder, and a call into the scenario's own
browser module (bench/scenario-*.js) on the bench page."""

from __future__ import annotations

import json
from pathlib import Path


def folder_agent(folder: Path, options=None):
    """An agent with no model and no tools yet that renders prompts as the page does for this
    folder (its chat template and manifest); `options`: botpsy_agent.agent.AgentOptions."""
    from botpsy_agent.agent import Agent, AgentOptions
    from botpsy_agent.chat_format import ChatFormat

    manifest = json.loads((folder / "manifest.json").read_text())
    chat_format = ChatFormat.from_model_files(json.loads((folder / "tokenizer_config.json").read_text()), manifest)
    return Agent(model=None, chat_format=chat_format, options=options or AgentOptions())


def call_scenario(page, module: str, function: str, argument=None):
    """`await function(argument)` of the scenario's module (served at `module`), in the page."""
    return page.evaluate(f"async (argument) => (await import({module!r})).{function}(argument)", argument)
