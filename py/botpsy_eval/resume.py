"""Earlier generations read back from an outputs file, so a long eval that stopped goes on
where it was (`botpsy-web eval --outputs FILE --resume`).

A stored run stands in for a new generation only when nothing that decides the tokens has
changed: the same model folder name and weights (weights_identity: the manifest's digests of
the files the engine runs), backend, engine, dtype and tool-call mode, the same case,
exactly the same prompt text (the agent's rendering today, so a changed template or system
prompt generates again), the same constraint (constraint.py's digest of the logits processors the
runtime was asked for: a changed grammar generates a constrained run again; a stored line
without a digest stands only for a free run), and a --max-tokens under which greedy decoding would have written
the same tokens: a run that stopped by itself at n tokens stands for any cap of n or more, a
run cut at the cap only for that same cap. Generations that failed are tried again. Reused
outputs are read and scored again by today's parser and checker; their seconds stay those of
the run that generated them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields
from pathlib import Path

from .generation import Generation
from .jsonl_files import read_text

# Stops that do not depend on the cap: any cap of at least the tokens written gives the same run
# (the context window comes from config.json, which is part of the weights' identity).
_SELF_STOPPED = ("eos", "stop_string", "context_full")


class ResumeError(ValueError):
    """The outputs file cannot be read back; names the file and the line."""


@dataclass(frozen=True)
class RunKey:
    model: str
    weights: str
    backend: str
    engine: str
    dtype: str
    tool_calls: str
    case_id: str


@dataclass(frozen=True)
class StoredRun:
    prompt: str
    output: str
    token_ids: list[int]
    prompt_tokens: int
    stop_reason: str
    seconds: float
    constraint: str | None = None  # constraint_digest; None on lines written before it was recorded

    def covers(self, prompt: str, max_tokens: int, constraint: str = "") -> bool:
        if self.prompt != prompt or self.stop_reason == "error":
            return False
        if self.constraint != constraint and not (self.constraint is None and constraint == ""):
            return False
        if self.stop_reason in _SELF_STOPPED:
            return len(self.token_ids) <= max_tokens
        return self.stop_reason == "max_tokens" and len(self.token_ids) == max_tokens

    def generation(self) -> Generation:
        return Generation(self.output, list(self.token_ids), self.prompt_tokens, self.stop_reason, self.seconds)


_OPTIONAL = {"constraint"}
_REQUIRED = ({f.name for f in fields(RunKey)} | {f.name for f in fields(StoredRun)}) - _OPTIONAL


class EarlierRuns:
    """Stored runs by key; the last line for a key wins (a retried failure replaces the failure)."""

    def __init__(self, runs: dict[RunKey, StoredRun] | None = None):
        self.runs = dict(runs or {})
        self.stale = 0       # lookups that found a run for the key that could not stand in

    @classmethod
    def read(cls, path: Path) -> EarlierRuns:
        path = Path(path)
        if not path.exists():
            return cls()
        runs = {}
        lines = read_text(path).splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as error:
                if number == len(lines):  # a run killed mid-write leaves half a line
                    break
                raise ResumeError(f"{path}:{number} is not JSON ({error.msg}): is it a `botpsy-web eval` outputs file?")
            missing = sorted(_REQUIRED - set(entry)) if isinstance(entry, dict) else ["(not an object)"]
            if missing:
                raise ResumeError(f"{path}:{number} lacks {', '.join(missing)}: written by an older `botpsy-web eval` "
                                  "(runs without model, weights and backend cannot be matched) or not an outputs file")
            key = RunKey(*(entry[f.name] for f in fields(RunKey)))
            runs[key] = StoredRun(*(entry.get(f.name) for f in fields(StoredRun)))
        return cls(runs)

    def lookup(self, key: RunKey, prompt: str, max_tokens: int, constraint: str = "") -> Generation | None:
        stored = self.runs.get(key)
        if stored is None:
            return None
        if not stored.covers(prompt, max_tokens, constraint):
            self.stale += 1
            return None
        return stored.generation()

    def count_covered(self, planned, max_tokens: int) -> int:
        """How many of the planned (key, prompt, constraint) need no new generation (for the progress bar)."""
        return sum(1 for key, prompt, constraint in planned
                   if key in self.runs and self.runs[key].covers(prompt, max_tokens, constraint))



def weights_identity(folder: Path, engine: tuple[str, str, str]) -> str:
    """What identifies the weights and tokenizer one engine runs, from the folder's manifest
    (the sha256 it records for each file): a folder exported again with other weights under
    the same name does not match the old runs. The browser runs the dtype's graphs; PyTorch
    the checkpoint the folder was exported from (manifest "source")."""
    manifest = json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))
    recorded = manifest.get("files", {})
    names = ["config.json", "tokenizer.json"]
    if engine[0] == "browser":
        entry = manifest["dtypes"][engine[1]]
        names += [*entry.get("files", [entry.get("file")]), entry.get("appending_file")]
    text = "\n".join(f"{name}:{recorded.get(name, {}).get('sha256', '?')}" for name in names if name)
    if engine[0] != "browser":
        text += f"\nsource:{manifest.get('source')}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
