"""Whether a stored transcript (--resume) was run under today's protocol: its first generation
was given the prompt our agent renders today (system prompt, chat template, tool docs, the
first user message) and the same grammar (constrained runs). A changed template, system prompt
or grammar then runs the case again instead of mixing old conversations into a new table.

Today's start is found by running the conversation under CPython with a model that stops at its
first generation: the agent code is the one the worker runs, so the prompt is the one it sees.
"""

from __future__ import annotations

import asyncio


class _StopAtFirstGeneration:
    async def generate(self, prompt: str, options: dict):
        raise RuntimeError("only the first generation's prompt is wanted")
        yield ""  # an async generator, like a real model


def todays_start(case_for_the_agent: dict, chat_format, agent_settings: dict) -> tuple[str, str]:
    """(first prompt, constraint digest of its grammar) a run of the case would start with now."""
    from .conversation import run_conversation

    transcript = asyncio.run(run_conversation(case_for_the_agent, _StopAtFirstGeneration(), chat_format,
                                              agent_settings))
    return transcript["first_prompt"], transcript["first_constraint"]


def starts_alike(transcript: dict, start: tuple[str, str]) -> bool:
    """A transcript written before constraints were recorded has no digest: it stands for a free run only."""
    prompt, constraint = start
    recorded = transcript.get("first_constraint")
    same_grammar = recorded == constraint or (recorded is None and not constraint)
    return transcript.get("first_prompt") == prompt and same_grammar
