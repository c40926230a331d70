"""Greedy generation with the PyTorch model the folder was exported from (fp32, CPU).

The model is what the export builds from the manifest's `source` (a built-in name, a local
folder or `.gguf`, or a Hub id: botpsy_export.sources.load_source), so "browser fp32 vs
PyTorch" measures the export and the runtime, nothing else. Prompts are tokenized with the
folder's tokenizer.json exactly as written (no special tokens added), as the runtime does;
generation stops at the manifest's EOS ids or stop strings, or after max_tokens.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .generation import Generation


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
        self._torch = torch
        if threads:  # on a busy machine one thread beats two that keep waiting for each other
            torch.set_num_threads(threads)

    def generate(self, prompt: str, max_tokens: int, logits_processors: list | None = None) -> Generation:
        if logits_processors:
            raise ValueError("the PyTorch reference runs free tool calls only")
        torch = self._torch
        started = time.perf_counter()
        prompt_ids = self.tokenizer.encode(prompt, add_special_tokens=False).ids
        tokens: list[int] = []
        stop_reason = "max_tokens"
        with torch.no_grad():
            output = self.model(input_ids=torch.tensor([prompt_ids]), use_cache=True, logits_to_keep=1)
            for _ in range(max_tokens):
                token = int(torch.argmax(output.logits[0, -1]))
                tokens.append(token)
                if token in self.eos:
                    stop_reason = "eos"
                    break
                text = self._text(tokens)
                if any(stop in text for stop in self.stop_strings):
                    stop_reason = "stop_string"
                    break
                output = self.model(input_ids=torch.tensor([[token]]), cache=output.cache, use_cache=True,
                                    logits_to_keep=1)
        text = self._text([t for t in tokens if t not in self.eos])
        for stop in self.stop_strings:
            text = text.split(stop)[0]
        return Generation(text, tokens, len(prompt_ids), stop_reason, time.perf_counter() - started)

    def _text(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=False)

    def close(self) -> None:
        self.model = None
