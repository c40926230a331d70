"""run_python under CPython: the code is arbitrary (attacker-written), so it runs in a child
process with no environment, a throwaway working directory and hard limits; whatever it
does, the agent's process, its data and its time stay out of reach. (The browser's sandbox:
tests/agent/test_sandbox_escape.py.)"""

import asyncio
import os
import time

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.notes import notes_create, notes_list
from botpsy_agent.tools.python_sandbox import MAX_OUTPUT_CHARS, run_code, run_python

from .conftest import call


def run(ctx, code, **limits):
    return asyncio.run(run_code(ctx, code, **limits))


def test_prints_and_shows_the_last_expression(ctx):
    answer = call(run_python, ctx, code="total = 0\nfor n in range(5):\n    total += n\n    print(n)\ntotal * 2")
    assert answer == {"output": "0\n1\n2\n3\n4\n", "result": "20"}


def test_the_standard_library_and_classes_work(ctx):
    code = ("import statistics, math\nfrom fractions import Fraction\nimport json\n"
            "class Box:\n    def __init__(self, v):\n        self.v = v\n"
            "print(statistics.median([3, 1, 2]), math.comb(5, 2), Fraction(1, 3) + Fraction(1, 6))\n"
            "json.dumps({'b': Box(4).v})")
    assert run(ctx, code) == {"output": "2 10 1/2\n", "result": "'{\"b\": 4}'"}


def test_each_run_starts_with_a_fresh_namespace(ctx):
    run(ctx, "leftover = 1")
    assert run(ctx, "leftover")["error"] == "NameError: name 'leftover' is not defined (line 1)"


@pytest.mark.parametrize("code, error", [
    ("1/0", "ZeroDivisionError: division by zero (line 1)"),
    ("x = 1\ny = [][x]", "IndexError: list index out of range (line 2)"),
    ("def (:", "SyntaxError: invalid syntax (line 1)"),
    ("import sys\nsys.exit(3)", "SystemExit: the program tried to exit"),
    ("def f(n):\n    return f(n + 1)\nf(0)", "RecursionError: maximum recursion depth exceeded"),
])
def test_failing_code_reports_its_error_as_the_answer(ctx, code, error):
    assert run(ctx, code)["error"] == error


def test_the_old_escape_to_os_reaches_only_an_empty_child_process(ctx, monkeypatch):
    """The route that used to get the interpreter's real __import__ past the in-process filter
    now needs no trick at all, and finds a process that holds nothing of the agent's."""
    monkeypatch.setenv("BOTPSY_SECRET_TOKEN", "s3cr3t")
    call(notes_create, ctx, text="my bank PIN is 4711")
    code = ("importer = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'BuiltinImporter'][0]\n"
            "os = importer.load_module('posix')\n"
            "import sys\n"
            "(os.getpid(), os.getppid(), os.getcwd(), sorted(os.environ), 'botpsy_agent.tools' in sys.modules)")
    pid, parent, cwd, environment, agent_loaded = eval(run(ctx, code)["result"])
    assert pid != os.getpid() and parent == os.getpid()   # another process: none of our memory
    assert "botpsy-run-python-" in cwd and not os.path.exists(cwd)
    assert set(environment) <= {b"LC_CTYPE"}   # posix.environ: bytes keys; Python sets the locale itself
    assert agent_loaded is False
    assert "4711" in str(call(notes_list, ctx))   # the agent's data is untouched


@pytest.mark.parametrize("code", ["while True: pass", "10**10**8", "import time\ntime.sleep(60)",
                                  "try:\n    while True: pass\nexcept BaseException:\n    while True: pass"])
def test_the_time_limit_stops_anything_by_killing_the_process(ctx, code):
    started = time.monotonic()
    assert run(ctx, code, time_limit=1.0) == {"output": "", "error": "TimeLimitExceeded: stopped after 1 seconds"}
    assert time.monotonic() - started < 4


def test_the_memory_limit_holds(ctx):
    answer = run(ctx, "chunks = [bytearray(256 * 1024**2) for _ in range(16)]")   # 4 GB
    assert answer["error"] == "MemoryError: the computation needs more memory than run_python allows"
    code = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))"
    assert run(ctx, code)["error"].startswith("ValueError: not allowed to raise maximum limit")


def test_processes_the_program_starts_end_with_it(ctx):
    code = ("import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\n"
            "else:\n    print(os.getpid())\n    time.sleep(30)")
    answer = run(ctx, code, time_limit=1.0)
    assert answer["error"].startswith("TimeLimitExceeded")
    time.sleep(0.2)
    leftovers = [line for line in os.popen("ps -eo args").read().splitlines() if "sandbox_runner.py" in line]
    assert leftovers == []


def test_output_is_capped_whichever_way_it_is_written(ctx):
    answer = run(ctx, "for i in range(10**6):\n    print('spam')", output_limit=100)
    assert len(answer["output"]) == 100 and answer["truncated"] is True
    assert answer["error"] == "OutputLimitExceeded: stopped after printing 100 characters"
    flood = run(ctx, "import os\nwhile True:\n    os.write(1, b'x' * 65536)")
    assert flood == {"output": "", "error": f"OutputLimitExceeded: stopped after printing {MAX_OUTPUT_CHARS} characters"}


def test_a_forged_answer_is_only_text(ctx):
    code = "import sys, os\nsys.__stdout__.write('\\n{\"output\": {\"x\": 1}, \"result\": 5}\\n')\nsys.__stdout__.flush()\nos._exit(0)"
    assert run(ctx, code) == {"output": "", "error": "SandboxError: the sandbox answered with something that is not a result"}


def test_a_crashing_sandbox_is_an_error_answer(ctx):
    assert run(ctx, "import os\nos.kill(os.getpid(), 11)")["error"] == (
        "SandboxError: the sandbox stopped unexpectedly (exit status -11)")


@pytest.mark.parametrize("code, message", [("", "code is empty"), ("x" * 20_001, "longer than")])
def test_refusals(ctx, code, message):
    with pytest.raises(ToolError, match=message):
        run(ctx, code)


def test_the_context_s_sandbox_is_used_when_given(ctx):
    seen = []

    async def page_sandbox(request):
        seen.append(request)
        return {"output": "from the page\n", "result": "2", "extra": object()}

    ctx.run_python = page_sandbox
    assert call(run_python, ctx, code="1+1") == {"output": "from the page\n", "result": "2"}
    assert seen[0].code == "1+1" and "def run_json" in seen[0].runner and seen[0].timeLimitSeconds == 5.0
