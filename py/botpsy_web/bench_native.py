"""The native ceiling of `botpsy-web bench`: the same folder and dtype in Python onnxruntime.

Engine "native" runs the dtype's standard graph (`dtypes.<d>.file`) on onnxruntime's CPU
execution provider in this process, with the thread count the browser engines get
(intra-op threads; one inter-op thread, sequential execution). A generate call prefills the
whole prompt in one session.run (native onnxruntime needs no chunking: it is the best this
machine does), then decodes one token per call, feeding each call's present cache back as the
next call's past, greedily, always producing the requested number of tokens. Everything it
needs comes from the manifest (inputs, outputs, cache names and zero shapes), as in web/.

It answers the bench page's calls a Python engine can (`load`, `unload`, `clearCache`,
`startMemory` and `memoryResult`: none) and `generate` with the same result keys, so every scenario that runs on a plain
engine (prefill, decode, the agent without reuse, a returning visitor's reload) runs on it too.
The ratios `prefill_vs_native` and `decode_vs_native` (bench_report.py) compare our runtime
with it in the same run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

ENGINE = "native"


class NativeEngine:
    """One folder's dtype in onnxruntime, behind the bench page's interface (bench.BenchPage)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.manifest = json.loads((self.folder / "manifest.json").read_text())
        self.session = None
        self.prompt_mismatches: list[tuple[int, int]] = []  # never: it takes the ids as they are

    # --- the bench page's calls -------------------------------------------------

    def call(self, method: str, *args):
        calls = {"load": self.load, "unload": self.unload, "clearCache": lambda *_: None,
                 "startMemory": lambda: None, "memoryResult": lambda: None}
        if method not in calls:
            raise ValueError(f"the native engine has no {method!r}")
        return calls[method](*args)

    def load(self, options: dict) -> dict:
        """Creates the session of options' dtype with options' threads (the browser's load options)."""
        import onnxruntime

        dtype, threads = options["dtype"], options["threads"]
        if dtype not in self.manifest["dtypes"]:
            raise ValueError(f"{self.folder} has no dtype {dtype}")
        started = time.perf_counter()
        settings = onnxruntime.SessionOptions()
        settings.intra_op_num_threads = threads
        settings.inter_op_num_threads = 1
        settings.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        settings.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        settings.log_severity_level = 3  # errors only: not a warning per unused initializer
        graph = self.folder / self.manifest["dtypes"][dtype]["file"]
        self.session = onnxruntime.InferenceSession(str(graph), settings, providers=["CPUExecutionProvider"])
        self._position_rows = self._position_ids_rows()
        return {"loadMs": (time.perf_counter() - started) * 1000, "backend": "cpu", "dtype": dtype,
                "threads": threads, "engine": f"onnxruntime {onnxruntime.__version__} (Python, CPU)"}

    def unload(self):
        self.session = None

    def close(self, unload=True):
        self.unload()

    # --- generation -------------------------------------------------------------

    def generate(self, prompt_ids: list[int], max_tokens: int, reuse_prefix: bool = False,
                 draft_tokens: int | None = None) -> dict:
        """Greedy: the prompt in one call, then one token per call, exactly max_tokens tokens.
        No prefix is reused between calls (reuse_prefix and draft_tokens are the browser's)."""
        if self.session is None:
            raise RuntimeError("the native engine is not loaded")
        started = time.perf_counter()
        past = self.empty_cache()
        logits, past = self.step(prompt_ids, past, processed=0)
        tokens = [int(np.argmax(logits))]
        first_token_at = time.perf_counter()
        processed = len(prompt_ids)
        while len(tokens) < max_tokens:
            logits, past = self.step(tokens[-1:], past, processed)
            processed += 1
            tokens.append(int(np.argmax(logits)))
        ended = time.perf_counter()
        return {"tokens": tokens, "ttftMs": (first_token_at - started) * 1000, "totalMs": (ended - started) * 1000,
                "promptTokens": len(prompt_ids), "reusedTokens": 0, "modelCalls": len(tokens),
                "draftedTokens": None, "acceptedDraftTokens": None}

    def empty_cache(self) -> dict[str, np.ndarray]:
        """Every cache input at its zero-initial state (the manifest's shapes)."""
        return {entry["input"]: np.zeros(entry["shape"], dtype=entry["dtype"]) for entry in self.manifest["cache"]}

    def step(self, ids: list[int], past: dict, processed: int) -> tuple[np.ndarray, dict]:
        """One session.run on `ids` after `processed` positions: (the last position's logits, the next past)."""
        names = self.manifest["inputs"]
        count = len(ids)
        feeds = dict(past)
        feeds[names["input_ids"]] = np.asarray([ids], dtype=np.int64)
        if "attention_mask" in names:
            feeds[names["attention_mask"]] = np.ones((1, processed + count), dtype=np.int64)
        if "position_ids" in names:
            positions = np.arange(processed, processed + count, dtype=np.int64)
            shape = (1, count) if self._position_rows is None else (self._position_rows, 1, count)
            feeds[names["position_ids"]] = np.broadcast_to(positions, shape).copy()
        cache = self.manifest["cache"]
        outputs = self.session.run([self.manifest["outputs"]["logits"], *(entry["output"] for entry in cache)], feeds)
        next_past = {entry["input"]: value for entry, value in zip(cache, outputs[1:])}
        return outputs[0].reshape(-1, outputs[0].shape[-1])[-1], next_past

    def _position_ids_rows(self) -> int | None:
        """None for position_ids [1, seq]; n for [n, 1, seq] (rows equal, as the contract says)."""
        name = self.manifest["inputs"].get("position_ids")
        meta = next((i for i in self.session.get_inputs() if i.name == name), None)
        if meta is None or len(meta.shape) != 3:
            return None
        rows = meta.shape[0]
        return rows if isinstance(rows, int) else 1
