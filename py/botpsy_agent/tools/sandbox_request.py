"""The sandbox's request: one call of run_python as both sandboxes take it, and the limits
they enforce. Shared below python_sandbox.py (the tool) and python_subprocess.py (the CPython
sandbox), so neither imports the other."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

TIME_LIMIT_SECONDS = 5.0
MAX_OUTPUT_CHARS = 10_000
MAX_CODE_CHARS = 20_000
MEMORY_LIMIT_BYTES = 512 * 2 ** 20   # the browser path's WebAssembly cap (web/sandbox/sandbox-client.js)
RUNNER_PATH = Path(__file__).with_name("sandbox_runner.py")


@dataclass(frozen=True)
class SandboxRequest:
    """One call, as both sandboxes take it (web/sandbox/protocol.js RunRequest)."""

    code: str
    runner: str                      # the harness's Python source (sandbox_runner.py)
    timeLimitSeconds: float = TIME_LIMIT_SECONDS
    outputLimitChars: int = MAX_OUTPUT_CHARS

    def to_json_dict(self) -> dict:
        return asdict(self)
