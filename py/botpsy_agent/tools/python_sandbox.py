"""run_python: the model's Python runs in a sandbox outside the agent.

The code is treated as attacker-written (a model that read an injected file may write
anything), so nothing in this process inspects or filters it. It runs:
- in the browser, in the page's sandbox (web/sandbox/): an opaque-origin frame whose
  Content-Security-Policy allows no connections, one Pyodide worker per call, terminated at
  the time limit, its WebAssembly memory capped. The agent worker reaches it through
  the bridge (ctx.run_python, set by browser_session.py);
- under CPython, in a subprocess (python_subprocess.py): `python -I`, empty environment,
  a temporary working directory, rlimits on address space and CPU, killed at the time limit.
Both run the same harness (sandbox_runner.py) and answer with text only.
"""

from __future__ import annotations

import sys

from botpsy_agent.tooling import ToolContext, ToolError, tool

from .sandbox_request import MAX_CODE_CHARS, MAX_OUTPUT_CHARS, RUNNER_PATH, TIME_LIMIT_SECONDS, SandboxRequest


def runner_source() -> str:
    """sandbox_runner.py's text (read from the package, which Pyodide has in its file system too)."""
    return RUNNER_PATH.read_text(encoding="utf-8")


def clean_answer(raw, output_limit: int = MAX_OUTPUT_CHARS) -> dict:
    """The sandbox's answer as the model gets it: only the text fields survive (the sandbox
    ran attacker code; its answer is checked here as well as in the page)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("output"), str):
        return {"output": "", "error": "SandboxError: the sandbox answered with something that is not a result"}
    answer = {"output": raw["output"][:output_limit]}
    for key in ("result", "error"):
        if isinstance(raw.get(key), str):
            answer[key] = raw[key][:output_limit]
    if raw.get("truncated") is True:
        answer["truncated"] = True
    return answer


async def _no_sandbox(request: SandboxRequest) -> dict:
    raise ToolError("run_python needs the page's sandbox, and this agent was started without one")


def default_runner():
    """The sandbox when the context brings none: a subprocess under CPython; none in Pyodide
    (there the page's sandbox comes through the bridge)."""
    if sys.platform == "emscripten":
        return _no_sandbox
    from .python_subprocess import run_in_subprocess  # CPython only: not imported in Pyodide
    return run_in_subprocess


async def run_code(ctx: ToolContext, code: str, time_limit: float = TIME_LIMIT_SECONDS,
                   output_limit: int = MAX_OUTPUT_CHARS) -> dict:
    """Run `code` in the context's sandbox; returns {"output", "result"?, "error"?, "truncated"?}."""
    if not isinstance(code, str) or not code.strip():
        raise ToolError("the code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise ToolError(f"the code is longer than {MAX_CODE_CHARS} characters")
    request = SandboxRequest(code=code, runner=runner_source(), timeLimitSeconds=time_limit,
                             outputLimitChars=output_limit)
    runner = ctx.run_python or default_runner()
    return clean_answer(await runner(request), output_limit)


@tool
async def run_python(ctx: ToolContext, code: str) -> dict:
    """Run a short Python program for a computation and return what it prints (and the value of
    its last expression). The standard library is available; no files of the user, no network;
    5 second limit.

    Args:
        code: The Python source to run.
    """
    return await run_code(ctx, code)
