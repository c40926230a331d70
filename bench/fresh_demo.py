"""`./run.sh demo` as a newcomer meets it: a fresh clone, empty caches, then the first question.

Clones the repository's committed HEAD into a temporary folder and runs `./run.sh demo` there with
empty pip, npm and export caches (XDG_CACHE_HOME, PIP_CACHE_DIR and npm's cache point into the
temporary folder; the machine's package-index configuration is kept, as a fresh machine of this
image has it). It timestamps each step the demo prints, and once the page is served it opens it in
headless Chromium, loads the model the demo exported (WASM) and asks "What is 17% of 2,340?".

Prints the seconds of each step, the time until the page was ready, and what the answer held.
Not a test: the figures depend on the network, the package mirrors and the machine's load.
Packages the system lacks (apt) are not timed: this machine has them.

Usage:  .venv/bin/python bench/fresh_demo.py [--keep] [--json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from botpsy_web import REPO_ROOT
from botpsy_web.app_page import LAST_TURN_OVER, load_model, send
from botpsy_web.bench import CHROMIUM_ARGS, CHROMIUM_PATH
from botpsy_web.serve import free_port

QUESTION = "What is 17% of 2,340?"
EXPECTED = "397.8"
READY = "BotPsy is ready"
# A step starts at the first line that matches one of these (in order of appearance).
STEP_MARKERS = [
    ("pip install", re.compile(r"^==> pip")),
    ("npm install", re.compile(r"^==> npm")),
    ("hub check", re.compile(r"^Checking whether")),
    ("model export", re.compile(r"^Exporting ")),
    ("agent bundle", re.compile(r"^Agent bundle")),
]


class DemoProcess:
    """`./run.sh demo` in `checkout`, its output read line by line (\\r too: progress bars), timestamped."""

    def __init__(self, checkout: Path, port: int, env: dict, log: Path):
        self.start = time.perf_counter()
        self.lines: list[tuple[float, str]] = []
        self.ready = threading.Event()
        self.log = log.open("w")
        self.process = subprocess.Popen(["./run.sh", "demo", "--port", str(port)], cwd=checkout, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        # A line is timed when its first byte arrives: a progress bar's first draw ends with no
        # newline, and its end (the next redraw) may come minutes later.
        pending, pending_since = b"", 0.0
        while chunk := self.process.stdout.read1(65536):
            now = time.perf_counter() - self.start
            if not pending:
                pending_since = now
            pending += chunk
            *complete, pending = re.split(rb"[\r\n]", pending)
            for index, raw in enumerate(complete):
                line = raw.decode(errors="replace").strip()
                seconds = pending_since if index == 0 else now
                if line:
                    self.lines.append((seconds, line))
                    self.log.write(f"{seconds:8.1f} {line}\n")
                    self.log.flush()
                    if READY in line:
                        self.ready.set()
            if pending and complete:
                pending_since = now
        self.ready.set()  # the process ended: whoever waits looks at the exit code

    def steps(self) -> list[tuple[str, float, float]]:
        """(step, start, seconds) for each step seen, each ending where the next starts."""
        starts = []
        for name, marker in STEP_MARKERS:
            at = next((seconds for seconds, line in self.lines if marker.search(line)), None)
            if at is not None:
                starts.append((name, at))
        ready_at = next((seconds for seconds, line in self.lines if READY in line), None)
        ends = [at for _, at in starts[1:]] + [ready_at if ready_at is not None else self.lines[-1][0]]
        return [(name, at, end - at) for (name, at), end in zip(starts, ends)]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            self.process.wait(timeout=30)
        self.log.close()


def ask_first_question(url: str, model: str) -> dict:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(900_000)
        start = time.perf_counter()
        page.goto(url)
        load_model(page, model, dtype="q8", backend="wasm")
        loaded = time.perf_counter() - start
        page.get_by_label("Temperature").fill("0")
        asked = time.perf_counter()
        send(page, QUESTION)
        reply = page.locator(".message.assistant").last
        reply.wait_for()
        page.wait_for_function(LAST_TURN_OVER)
        answered = time.perf_counter() - asked
        tools = reply.locator(".tool-card .tool-name").all_inner_texts()
        results = reply.locator(".tool-card .tool-result").all_inner_texts()
        answer = " ".join(reply.locator(".answer").all_inner_texts())
        notices = reply.locator(".notice.error").all_inner_texts()
        browser.close()
    return {"load_seconds": round(loaded, 1), "answer_seconds": round(answered, 1), "tools": tools,
            "tool_results": results, "answer": answer, "notices": notices,
            "expected_in_answer": EXPECTED in answer, "expected_in_result": any(EXPECTED in r for r in results)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="botpsy-fresh-demo-"))
    checkout, caches = work / "botpsy-web", work / "cache"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO_ROOT), str(checkout)], check=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(caches), "PIP_CACHE_DIR": str(caches / "pip"),
           "npm_config_cache": str(caches / "npm"), "HF_HOME": str(caches / "huggingface"),
           "PYTHONUNBUFFERED": "1"}  # the demo's lines arrive when printed, so their timestamps hold
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(REPO_ROOT)))
    port = free_port()
    load = os.getloadavg()
    print(f"fresh clone of {commit} in {checkout}; empty caches in {caches}; log: {work / 'demo.log'}")
    demo = DemoProcess(checkout, port, env, work / "demo.log")
    try:
        demo.ready.wait()
        if demo.process.poll() is not None:
            print(f"error: ./run.sh demo exited with {demo.process.returncode}; the last lines:")
            for _, line in demo.lines[-15:]:
                print("   ", line)
            return 1
        ready_seconds = demo.lines[-1][0]
        models = sorted(p.name for p in (checkout / "static" / "models").iterdir() if p.is_dir())
        first = ask_first_question(f"http://127.0.0.1:{port}/", models[0])
    finally:
        demo.stop()
    steps = demo.steps()
    sizes = {"venv_mb": _mb(checkout / ".venv"), "node_modules_mb": _mb(checkout / "node_modules"),
             "models_mb": _mb(checkout / "static" / "models"), "caches_mb": _mb(caches)}
    print(f"\n{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, load average at start "
          f"{load[0]:.1f}, at end {os.getloadavg()[0]:.1f}; model exported: {', '.join(models)}")
    print(f"{'step':<16}{'starts at (s)':>15}{'seconds':>10}")
    for name, at, seconds in steps:
        print(f"{name:<16}{at:>15.1f}{seconds:>10.1f}")
    print(f"{'page ready':<16}{ready_seconds:>15.1f}")
    print(f"\nin the page: model loaded in {first['load_seconds']} s; \"{QUESTION}\" answered in "
          f"{first['answer_seconds']} s; tools called: {first['tools'] or 'none'}; "
          f"{EXPECTED} in the tool's result: {first['expected_in_result']}, in the answer: {first['expected_in_answer']}")
    print(f"answer: {first['answer'][:300]!r}; notices: {first['notices']}")
    print("disk: " + ", ".join(f"{k} {v:.0f}" for k, v in sizes.items()))
    if args.keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"commit": commit, "ready_seconds": round(ready_seconds, 1),
                          "steps": {name: round(seconds, 1) for name, _, seconds in steps},
                          "first_question": first, **sizes, "load_start": round(load[0], 2)}))
    return 0 if first["expected_in_result"] else 1


def _mb(path: Path) -> float:
    if not path.exists():
        return 0.0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 2 ** 20


if __name__ == "__main__":
    raise SystemExit(main())
