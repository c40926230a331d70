"""A scripted model: replays prepared outputs instead of running a network.

For deterministic tests of the loop and the browser host. Each `generate` call
streams the next scripted output in small chunks and records the prompt it got.
An entry may also be a function of the prompt (to "obey" whatever a document
in the prompt says, as the injection tests do).
"""

from __future__ import annotations

from typing import AsyncIterator, Callable


class ScriptExhausted(RuntimeError):
    """The scripted model was asked for more outputs than it was given."""


class ScriptedModel:
    def __init__(self, outputs: list[str | Callable[[str], str]], chunk_size: int = 5):
        self.outputs = list(outputs)
        self.chunk_size = chunk_size
        self.prompts: list[str] = []
        self.generated: list[str] = []
        self.options: list[dict] = []  # each generation's options (its logits processors: the grammar)

    async def generate(self, prompt: str, options: dict | None = None) -> AsyncIterator[str]:
        if len(self.prompts) >= len(self.outputs):
            raise ScriptExhausted(f"the scripted model has only {len(self.outputs)} outputs")
        entry = self.outputs[len(self.prompts)]
        self.prompts.append(prompt)
        self.options.append(options or {})
        output = entry(prompt) if callable(entry) else entry
        self.generated.append(output)
        for start in range(0, len(output), self.chunk_size):
            yield output[start:start + self.chunk_size]
