"""Whether a stored transcript (--resume) is what today's agent makes of the same model outputs.

first_prompt.py checks the start (today's system prompt, template, tool docs and grammar). The
rest of a conversation depends on the agent as well: its parser, its argument checks, the
results and state changes the environment gives back. So the stored outputs are replayed, in
order, through today's agent and the case's environment under CPython (no model: milliseconds a
step), and every step must come out as stored: the prompt's length, the calls, whether each ran,
its result and state change. Otherwise the case runs again (5adf519, for one: a call with an
argument invented for a function that takes none ran before and is refused since).
"""

from __future__ import annotations

import asyncio
import json


class _StoredOutputs:
    """A "model" that writes the stored outputs again, one per generation, in order."""

    def __init__(self, outputs: list[str]):
        self.outputs = outputs
        self.given = 0

    async def generate(self, prompt: str, options: dict):
        if self.given >= len(self.outputs):
            raise RuntimeError("today's agent asks for a generation the stored run did not make")
        self.given += 1
        yield self.outputs[self.given - 1]


def _steps(transcript: dict) -> list:
    """What a replay must reproduce, as JSON would store it (the transcript went through JSON)."""
    steps = [[turn["turn"], step["prompt_chars"], step["output"],
              [[call["name"], call["arguments"], call["ran"], call["result"], call.get("state_diff")]
               for call in step["calls"]]]
             for turn in transcript["turns"] for step in turn["steps"]]
    return json.loads(json.dumps(steps, ensure_ascii=False, default=str))


def replays_alike(case_for_the_agent: dict, transcript: dict, chat_format, agent_settings: dict) -> bool:
    from .conversation import run_conversation

    outputs = [step["output"] for turn in transcript["turns"] for step in turn["steps"]]
    replay = _StoredOutputs(outputs)
    try:
        replayed = asyncio.run(run_conversation(case_for_the_agent, replay, chat_format, agent_settings))
    except Exception:  # today's agent or environment cannot take the stored conversation at all
        return False
    return (replayed["error"] is None and replay.given == len(outputs)
            and replayed["forced_quit"] == transcript["forced_quit"] and _steps(replayed) == _steps(transcript))
