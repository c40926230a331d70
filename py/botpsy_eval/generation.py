"""What a model wrote for one prompt: the one shape both generators (browser, PyTorch) return."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Generation:
    text: str               # the model's output as the agent receives it (EOS not included)
    token_ids: list[int]    # every generated token, EOS included when it stopped there
    prompt_tokens: int
    stop_reason: str        # "eos" | "stop_string" | "max_tokens" | "context_full" (the manifest's context_length)
    seconds: float


class GenerationError(RuntimeError):
    """One prompt could not be generated (the runtime's own message); the run goes on."""
