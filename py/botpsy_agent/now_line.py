"""The agent's line telling the model when and where the person is, before each of their messages.

A small model cannot know today's date, and wrote one it made up where a request needed it
("next Friday at 3" stored as 2026-12-05 on Monday 7 December; "days until Valentine's Day" from
2026-05-15: bench/RESULTS.md, issue 41). The line is not in the system prompt: the tools' schemas
follow the system prompt, so a date there would change the prompt every day, and no stored or
shipped prompt state (a first visit's 1 s first token) would ever match. It is not in the page's
warm-up either (Agent.render_prompt_prefix): the turn computes it, ~15 tokens.
"""

from __future__ import annotations

from .tooling import ToolContext
from .tools.clock import user_zone


def now_line(context: ToolContext) -> str:
    """"Now: Monday 7 December 2026, 10:00." in the person's zone. The zone's name is left out: with
    it, Qwen2.5-Coder-0.5B called current_time("Europe/London") after results it already had."""
    moment = context.now().astimezone(user_zone(context))
    return f"Now: {moment.strftime('%A')} {moment.day} {moment.strftime('%B %Y, %H:%M')}."
