"""How long run_python takes in the browser's sandbox (web/sandbox/) and under CPython.

Browser: the first call (frame, Pyodide files handed over, a worker's Python start-up), a
call after the spare worker had time to start (what a call in a later model step meets), a
call right after another (the spare still starting), and the overhead of a time-limit kill.
CPython: the subprocess per call. A script that prints figures, not a test. Usage:
    .venv/bin/python bench/sandbox_latency.py [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from botpsy_agent.tooling import ToolContext
from botpsy_agent.tools.python_sandbox import run_code, runner_source
from botpsy_web.bench import CHROMIUM_ARGS, CHROMIUM_PATH
from botpsy_web.serve import serve_in_background

CODE = "import statistics\nstatistics.mean([1, 2, 3, 4])"
SPARE_WAIT_S = 15


def browser_figures(repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    server, base_url = serve_in_background()
    runner = runner_source()

    def call(page, code=CODE, limit=5):
        started = time.monotonic()
        answer = page.evaluate("([code, runner, limit]) => window.sandbox.run({code, runner, timeLimitSeconds: limit,"
                               " outputLimitChars: 10000})", [code, runner, limit])
        return time.monotonic() - started, answer

    figures: dict[str, list[float]] = {"first_call_s": [], "after_idle_s": [], "back_to_back_s": [],
                                       "time_limit_1s_call_s": []}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            for _ in range(repeats):
                page = browser.new_page()
                page.goto(base_url + "/tests/pages/agent-host.html")
                page.evaluate("async () => { const {PythonSandbox} = await import('/web/sandbox/sandbox-client.js');"
                              " window.sandbox = new PythonSandbox(); }")
                seconds, answer = call(page)
                assert answer.get("result") == "2.5", answer
                figures["first_call_s"].append(seconds)
                page.wait_for_timeout(SPARE_WAIT_S * 1000)
                figures["after_idle_s"].append(call(page)[0])
                figures["back_to_back_s"].append(call(page)[0])
                page.wait_for_timeout(SPARE_WAIT_S * 1000)
                figures["time_limit_1s_call_s"].append(call(page, "while True: pass", limit=1)[0])
                page.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return figures


def cpython_figures(repeats: int) -> dict:
    async def measure() -> list[float]:
        times = []
        for _ in range(repeats * 3):
            started = time.monotonic()
            answer = await run_code(ToolContext(), CODE)
            assert answer.get("result") == "2.5", answer
            times.append(time.monotonic() - started)
        return times
    return {"subprocess_call_s": asyncio.run(measure())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {**browser_figures(args.repeats), **cpython_figures(args.repeats)}
    summary = {name: {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
                      "max": round(max(values), 3)} for name, values in figures.items()}
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    for name, row in summary.items():
        print(f"{name:24s} median {row['median']:7.3f}   min {row['min']:7.3f}   max {row['max']:7.3f}")


if __name__ == "__main__":
    main()
