"""Greedy generation with the PyTorch model the folder was exported from (fp32, CPU).

The model is what the export builds from the manifest's `source` (a built-in name, a local
folder or `.gguf`, or a Hub id: botpsy_export.sources.load_source), so "browser fp32 vs
PyTorch" measures the export and the runtime, nothing else. Prompts are tokenized with the
folder's tokenizer.json exactly as written (no special tokens added), as the runtime does;
generation stops at the manifest's EOS ids or stop strings, or after max_tokens.

The state after the last prompt is kept, and a prompt computes only what it does not share with
it, as the browser runtime does: a conversation's next prompt extends the last one (multi-turn
eval: the prompt so far, the reply as the template renders it, the tool results), and the next
case with the same tools shares the system prompt. A key/value-only cache (the manifest's
`cache` kinds) is cut back to the shared prefix; a hybrid model's recurrent state cannot be, so
there only a prompt that extends the whole kept one reuses it.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass
from pathlib import Path

from .generation import Generation, GenerationError


@dataclass
class _PromptState:
    """The model's cache and last logits right after a prompt: what the next prompt may extend."""

    token_ids: list[int]
    cache: object
    logits: object

    def shared_length(self, prompt_ids: list[int]) -> int:
        n = 0
        for kept, new in zip(self.token_ids, prompt_ids):
            if kept != new:
                break
            n += 1
        return n


class TorchModel:
    name = "pytorch fp32"

    def __init__(self, folder: Path, threads: int | None = None):
        import torch
        from tokenizers import Tokenizer

        from botpsy_export.sources import load_source

        folder = Path(folder)
        self.manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.model = load_source(self.manifest["source"]).architecture.model.eval()  # fp32: what the export traced
        self.eos = set(self.manifest.get("eos_token_ids") or [])
        self.stop_strings = list(self.manifest.get("stop_strings") or [])
        self.context_length = self.manifest.get("context_length")  # as the browser runtime: refuse, or stop there
        self._torch = torch
        self._last_prompt: _PromptState | None = None
        self._truncatable = all(entry["kind"] in ("key", "value") for entry in self.manifest["cache"])
        self.reused_prompt_tokens = 0  # summed over generations: what the kept state saved
        if threads:  # on a busy machine one thread beats two that keep waiting for each other
            torch.set_num_threads(threads)

    def generate(self, prompt: str, max_tokens: int, logits_processors: list | None = None) -> Generation:
        if logits_processors:
            raise ValueError("the PyTorch reference runs free tool calls only")
        torch = self._torch
        started = time.perf_counter()
        prompt_ids = self.tokenizer.encode(prompt, add_special_tokens=False).ids
        if self.context_length and len(prompt_ids) >= self.context_length:
            raise GenerationError(f"the prompt is {len(prompt_ids)} tokens and this model reads at most "
                                  f"{self.context_length} (manifest context_length)")
        tokens: list[int] = []
        stop_reason = "max_tokens"
        with torch.no_grad():
            cache, logits = self._prefill(prompt_ids)
            while True:
                token = int(torch.argmax(logits))
                tokens.append(token)
                if token in self.eos:
                    stop_reason = "eos"
                    break
                text = self._text(tokens)
                if any(stop in text for stop in self.stop_strings):
                    stop_reason = "stop_string"
                    break
                if len(tokens) >= max_tokens:
                    break
                if self.context_length and len(prompt_ids) + len(tokens) >= self.context_length:
                    stop_reason = "context_full"
                    break
                cache, logits = self._forward([token], cache)
        text = self._text([t for t in tokens if t not in self.eos])
        for stop in self.stop_strings:
            text = text.split(stop)[0]
        return Generation(text, tokens, len(prompt_ids), stop_reason, time.perf_counter() - started)

    def _prefill(self, prompt_ids: list[int]):
        """The cache and last logits after `prompt_ids`, computing only what the kept prompt did not share."""
        kept = self._last_prompt
        shared = kept.shared_length(prompt_ids) if kept is not None else 0
        if kept is not None and shared == len(kept.token_ids):
            cache, logits = copy.deepcopy(kept.cache), kept.logits
            if len(prompt_ids) > shared:
                cache, logits = self._forward(prompt_ids[shared:], cache)
        elif self._truncatable and shared > 0:
            shared = min(shared, len(prompt_ids) - 1)  # the last prompt token runs, for its logits
            cache = copy.deepcopy(kept.cache)
            cache.crop(shared - len(kept.token_ids))  # a negative length: drop that many from the end
            cache, logits = self._forward(prompt_ids[shared:], cache)
        else:
            shared = 0
            cache, logits = self._forward(prompt_ids, None)
        self.reused_prompt_tokens += shared
        self._last_prompt = _PromptState(list(prompt_ids), copy.deepcopy(cache), logits)
        return cache, logits

    def _forward(self, token_ids: list[int], cache):
        output = self.model(input_ids=self._torch.tensor([token_ids]), cache=cache, use_cache=True, logits_to_keep=1)
        return output.cache, output.logits[0, -1]

    def _text(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=False)

    def close(self) -> None:
        self.model = None
        self._last_prompt = None
