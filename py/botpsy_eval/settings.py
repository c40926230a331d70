"""What one `botpsy-web eval` run is asked for, single-turn and multi-turn alike (the commands
build it from their options, run_options.eval_settings; the runners run it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TOOL_CALL_MODES = ("free", "constrained")
REFERENCES = ("pytorch",)


@dataclass(frozen=True)
class EvalSettings:
    folder: Path
    dtypes: tuple[str, ...]
    categories: tuple[str, ...]
    backend: str = "wasm"
    limit: int | None = None
    seed: int = 0
    tool_calls: tuple[str, ...] = ("free",)
    reference: str | None = None
    max_tokens: int = 256               # per generation (a multi-turn case makes several)
    torch_threads: int | None = None    # None: torch's default

    def engines(self) -> list[tuple[tuple[str, str, str], str]]:
        """Every (engine, backend) the settings run, in the order they run."""
        listed = [(("browser", dtype, mode), self.backend) for dtype in self.dtypes for mode in self.tool_calls]
        if self.reference == "pytorch":
            listed.append((("pytorch", "fp32", "free"), "cpu"))
        return listed
