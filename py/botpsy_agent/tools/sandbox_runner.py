"""The harness that runs one run_python program inside the sandbox.

It runs in the sandbox itself: as `python -I sandbox_runner.py` in a subprocess under
CPython (python_subprocess.py), and in Pyodide in the page's sandbox worker
(web/sandbox/sandbox-worker.js, which is handed this file's source). It protects nothing:
the process or the worker around it is the boundary. It only shapes the answer the same
way on both paths: a fresh namespace, stdout and stderr captured up to a cap, the repr of
a last bare expression (as in a REPL), and errors as "Type: message (line N)".
Standard library only; no import of botpsy_agent.
"""

from __future__ import annotations

import ast
import builtins
import json
import sys

FILENAME = "<run_python>"


class OutputLimitExceeded(BaseException):
    """Raised inside the program when it printed more than the cap (BaseException: `except Exception` won't catch it)."""


class CappedOutput:
    """stdout and stderr of the program, one shared buffer, up to `limit` characters."""

    def __init__(self, limit: int):
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.truncated = False

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - self.size
        if len(text) > room:
            self.parts.append(text[:room])
            self.size = self.limit
            self.truncated = True
            raise OutputLimitExceeded()
        self.parts.append(text)
        self.size += len(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        return "".join(self.parts)


def _error_line(error: BaseException) -> int | None:
    trace, line = error.__traceback__, None
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == FILENAME:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _describe(error: BaseException, output_limit: int) -> str:
    if isinstance(error, OutputLimitExceeded):
        return f"OutputLimitExceeded: stopped after printing {output_limit} characters"
    if isinstance(error, MemoryError):
        return "MemoryError: the computation needs more memory than run_python allows"
    if isinstance(error, RecursionError):
        return "RecursionError: maximum recursion depth exceeded"
    if isinstance(error, SystemExit):
        return "SystemExit: the program tried to exit"
    line = _error_line(error)
    return f"{type(error).__name__}: {error}" + (f" (line {line})" if line else "")


def run(code: str, output_limit: int) -> dict:
    """Run `code`; returns {"output", "result"?, "error"?, "truncated"?} (text only)."""
    try:
        tree = ast.parse(code, filename=FILENAME, mode="exec")
    except SyntaxError as error:
        return {"output": "", "error": f"SyntaxError: {error.msg} (line {error.lineno})"}
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    output = CappedOutput(output_limit)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    answer: dict = {}
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = output
    try:
        exec(compile(tree, FILENAME, "exec"), namespace)
        if last is not None:
            value = eval(compile(last, FILENAME, "eval"), namespace)
            if value is not None:
                answer["result"] = repr(value)[:output_limit]
    except BaseException as error:  # the program's own failure is its answer
        answer["error"] = _describe(error, output_limit)
    finally:
        sys.stdout, sys.stderr = saved
    answer = {"output": output.text(), **answer}
    if output.truncated:
        answer["truncated"] = True
    return answer


def run_json(code: str, output_limit: int) -> str:
    """run() as JSON text (what the sandbox worker hands back)."""
    return json.dumps(run(str(code), int(output_limit)))


def _apply_limits(memory_bytes: int, cpu_seconds: int, file_bytes: int) -> None:
    """CPython subprocess only: hard limits (soft = hard, so the program cannot raise them again;
    a process running as root can, with CAP_SYS_RESOURCE: there only the parent's kill at the
    time limit holds)."""
    import resource

    for kind, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_CPU, cpu_seconds),
                        (resource.RLIMIT_FSIZE, file_bytes), (resource.RLIMIT_CORE, 0),
                        (resource.RLIMIT_NPROC, 0)):   # no child processes (threads count too)
        resource.setrlimit(kind, (value, value))


def main() -> None:
    """The subprocess's entry: one JSON request on stdin, one JSON answer as the last line of stdout."""
    request = json.loads(sys.stdin.read())
    _apply_limits(request["memory_limit_bytes"], request["cpu_seconds"], request["file_limit_bytes"])
    real_stdout = sys.stdout
    answer = run(request["code"], request["output_limit"])
    real_stdout.write("\n" + json.dumps(answer) + "\n")
    real_stdout.flush()


if __name__ == "__main__":
    main()
