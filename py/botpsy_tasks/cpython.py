"""Tasks under CPython: the page's agent built from a folder's files exactly as the agent worker
builds it (botpsy_agent.browser_session.create_session), each task on a fresh in-memory store.
The PyTorch reference runs here; so do the tests, with the scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Callable

from botpsy_agent.agent import Agent, Model
from botpsy_agent.browser_session import create_session
from botpsy_agent.storage import MemoryStore

from .session import TaskStore, run_task


class _NoPage:
    """The session's host under CPython: no page to emit events to; the task's agent replaces
    the model, store and confirmations the host would give."""

    def emit(self, event_json: str) -> None:
        pass


def special_tokens(folder: Path, tokenizer_config: dict) -> list[str]:
    """Every added token of the folder's tokenizer, as the agent worker lists them (agent-worker.js)."""
    tokens = [entry.get("content") for entry in (tokenizer_config.get("added_tokens_decoder") or {}).values()]
    tokenizer = Path(folder) / "tokenizer.json"
    if tokenizer.is_file():
        tokens += [entry.get("content") for entry in json.loads(tokenizer.read_text(encoding="utf-8")).get("added_tokens", [])]
    return list(dict.fromkeys(token for token in tokens if isinstance(token, str) and token))


def page_agent(tokenizer_config: dict, manifest: dict, tokens: list[str] = ()) -> Agent:
    """The agent the page's session starts with (built-in tools, default options and tool-call mode)."""
    session = create_session(_NoPage(), json.dumps(tokenizer_config), json.dumps(manifest), True,
                             json.dumps(list(tokens)))
    session.agent.context.run_python = None  # run_python's limited subprocess (no sandbox frame here)
    return session.agent


def folder_page_agent(folder: Path) -> Agent:
    folder = Path(folder)
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return page_agent(tokenizer_config, manifest, special_tokens(folder, tokenizer_config))


def run_task_in_cpython(agent: Agent, model: Model, task: dict, temperature: float = 0.0,
                        on_step: Callable[[dict], None] = lambda progress: None) -> dict:
    """One task's record; a failure of the model or the agent's own code becomes the record's error."""
    try:
        return asyncio.run(run_task(agent, model, TaskStore(MemoryStore()), task, temperature, on_step))
    except Exception as error:
        return {"task_id": task["id"], "category": task["category"], "turns": [],
                "error": f"{type(error).__name__}: {error}"}


class TorchAgentModel:
    """The PyTorch reference as the agent's Model: greedy, free tool calls (it takes no grammar)."""

    def __init__(self, torch_model):
        self.torch_model = torch_model

    async def generate(self, prompt: str, options: dict):
        yield self.torch_model.generate(prompt, int(options["maxTokens"]), options.get("logitsProcessors")).text
