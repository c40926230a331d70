"""run_python under CPython: the program runs in a child process, never in ours.

The boundary is the process: `python -I` (no environment variables, no user site, no
current directory on the path), an empty environment, a fresh temporary directory as the
working directory, and hard rlimits set before the program starts (address space, CPU
seconds, file size: the program cannot raise them back). The parent kills the whole
process group at the time limit (a sleeping program uses no CPU). It does not stop the
child from reading files the user can read or opening sockets: unlike the browser's
sandbox, an unprivileged process cannot take those away without OS namespaces.
Asyncio's subprocess API: no threads, no blocking in the agent's loop.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import sys
import tempfile

from .sandbox_request import MEMORY_LIMIT_BYTES, RUNNER_PATH, SandboxRequest

FILE_LIMIT_BYTES = 16 * 2 ** 20
ANSWER_LIMIT_BYTES = 4 * 2 ** 20   # more on stdout than a capped answer can be: the program wrote there itself


def _kill_group(process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _answer_from(stdout: bytes) -> dict:
    lines = stdout.decode("utf-8", errors="replace").strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict):
        return {"output": "", "error": "SandboxError: the sandbox's answer was unreadable"}
    return answer


async def run_in_subprocess(request: SandboxRequest, memory_limit_bytes: int = MEMORY_LIMIT_BYTES) -> dict:
    """Run request.code with the harness in a limited child process; the harness's answer,
    or an error answer when the child was killed or died."""
    seconds = request.timeLimitSeconds
    payload = json.dumps({"code": request.code, "output_limit": request.outputLimitChars,
                          "memory_limit_bytes": memory_limit_bytes, "cpu_seconds": math.ceil(seconds) + 1,
                          "file_limit_bytes": FILE_LIMIT_BYTES}).encode()
    with tempfile.TemporaryDirectory(prefix="botpsy-run-python-") as workdir:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-I", str(RUNNER_PATH), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            cwd=workdir, env={}, start_new_session=True)
        try:
            stdout = await asyncio.wait_for(_exchange(process, payload), timeout=seconds)
        except asyncio.TimeoutError:
            return {"output": "", "error": f"TimeLimitExceeded: stopped after {seconds:g} seconds"}
        except _TooMuchOutput:
            return {"output": "", "error": f"OutputLimitExceeded: stopped after printing {request.outputLimitChars} characters"}
        finally:
            _kill_group(process)   # at the limit, and whatever the program left running in its group
            await _reap(process)
    if process.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return {"output": "", "error": f"TimeLimitExceeded: stopped after {seconds:g} seconds"}
    if process.returncode != 0:
        return {"output": "", "error": f"SandboxError: the sandbox stopped unexpectedly (exit status {process.returncode})"}
    return _answer_from(stdout)


async def _reap(process) -> None:
    """Wait for the killed child; asyncio counts it as ended only once its stdout is closed,
    so read what is left of it (bounded by time: a detached grandchild may hold the pipe)."""
    async def drain():
        while await process.stdout.read(1 << 16):
            pass
        await process.wait()
    try:
        await asyncio.wait_for(drain(), timeout=5)
    except asyncio.TimeoutError:
        process._transport.close()  # give up on the pipe; the process itself is already dead


class _TooMuchOutput(Exception):
    """The child wrote more to its stdout than any capped answer needs."""


async def _exchange(process, payload: bytes) -> bytes:
    """Send the request, read the answer (at most ANSWER_LIMIT_BYTES: never the whole of a flood)."""
    process.stdin.write(payload)
    await process.stdin.drain()
    process.stdin.close()
    received = bytearray()
    while chunk := await process.stdout.read(1 << 16):
        received += chunk
        if len(received) > ANSWER_LIMIT_BYTES:
            raise _TooMuchOutput()
    await process.wait()
    return bytes(received)
