"""A built site (`botpsy-web build-site`) against `botpsy-web serve`, in one run: the size of the
build without models and per model folder, and the time to the first answer for a new visitor
and a returning one, in headless Chromium (WASM).

- new visitor: a fresh browser profile opens the page, picks the model, presses Load, sends
  "Hello" as soon as it can; the clock runs from the navigation to the first text of the answer.
- returning visitor: the same profile opens the page again (the service worker and the model
  stored by the runtime are there; the last model reopens by itself), sends "Hello"; same clock.

A script that prints figures, not a test. Usage:
    .venv/bin/python bench/site.py MODEL_FOLDER [MODEL_FOLDER ...] [--repeats 3] [--dtype q8] [--json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from botpsy_web.app_page import LAST_ANSWER_HAS_TEXT, LAST_TURN_OVER, load_model, send, wait_until_offline_ready
from botpsy_web.bench import CHROMIUM_ARGS, CHROMIUM_PATH
from botpsy_web.serve import free_port, serve_in_background
from botpsy_web.site.build import SiteOptions, build_site
from botpsy_web.site.local_nginx import LocalNginx

MIB = 2 ** 20


def first_answer_seconds(page, base_url: str, model: str, dtype: str, new_visitor: bool) -> float:
    """Seconds from navigation to the first text of the answer to "Hello"."""
    start = time.perf_counter()
    page.goto(f"{base_url}/")
    if new_visitor:
        load_model(page, model, dtype=dtype, backend="wasm")
    page.locator("#load-progress[data-state='ready']").wait_for()  # a returning visitor's model reopens by itself
    page.get_by_label("Temperature").fill("0")
    send(page, "Hello")
    page.wait_for_function(LAST_ANSWER_HAS_TEXT)
    seconds = time.perf_counter() - start
    page.get_by_role("button", name="Stop").click()
    page.wait_for_function(LAST_TURN_OVER)
    return seconds


def visits(browser, base_url: str, model: str, dtype: str) -> tuple[float, float]:
    """(new visitor, returning visitor) seconds in one fresh profile."""
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(600_000)
    new = first_answer_seconds(page, base_url, model, dtype, new_visitor=True)
    wait_until_offline_ready(page)
    page.close()
    page = context.new_page()
    page.set_default_timeout(600_000)
    returning = first_answer_seconds(page, base_url, model, dtype, new_visitor=False)
    context.close()
    return new, returning


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+", help="exported model folders; the first is timed")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", default="q8")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folders = [folder.resolve() for folder in args.folders]
    timed = folders[0]
    if len({folder.parent for folder in folders}) != 1:
        parser.error("give model folders that sit in one parent folder (serve's --models)")
    with tempfile.TemporaryDirectory(prefix="botpsy-site-bench-") as work:
        work = Path(work)
        port = free_port()
        started = time.perf_counter()
        built = build_site(SiteOptions(out=work / "out", models=tuple(folders), base_url=f"http://127.0.0.1:{port}/"))
        build_seconds = time.perf_counter() - started
        nginx = LocalNginx(built.out, port, work / "nginx")
        server, serve_url = serve_in_background(models_dir=timed.parent)
        times = {"nginx": ([], []), "serve": ([], [])}
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
                servers = [("nginx", nginx.url), ("serve", serve_url)]
                for repeat in range(args.repeats):
                    # Interleaved, in turns going first: both see the same machine load.
                    for name, url in (servers if repeat % 2 == 0 else servers[::-1]):
                        new, returning = visits(browser, url, timed.name, args.dtype)
                        times[name][0].append(new)
                        times[name][1].append(returning)
                        print(f"  run {repeat + 1} {name}: new {new:.1f} s, returning {returning:.1f} s", flush=True)
                browser.close()
        finally:
            nginx.close()
            server.shutdown()
            server.server_close()

    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"bench/site.py {' '.join(str(f) for f in args.folders)} --repeats {args.repeats} --dtype {args.dtype}")
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; uptime: {uptime}")
    print(f"built in {build_seconds:.1f} s; site without models: {built.app_bytes / MIB:.1f} MiB "
          f"({len(built.files) - sum(len(f) for f in built.model_files.values())} files; runtime folder "
          f"{sum(size for path, size in built.files.items() if path.startswith(built.vendor + '/')) / MIB:.1f} MiB)")
    for name, files in built.model_files.items():
        print(f"model folder {name}: {sum(files.values()) / MIB:.1f} MiB ({len(files)} files)")
    print(f"time to first answer, {timed.name} {args.dtype}, WASM, median of {args.repeats} (min-max):")
    figures = {}
    for name in ("nginx", "serve"):
        for label, values in zip(("new visitor", "returning visitor"), times[name]):
            print(f"  {name:6} {label:18} {statistics.median(values):6.1f} s ({min(values):.1f}-{max(values):.1f})")
            figures[f"{name} {label}"] = values
    if args.json:
        print(json.dumps({"app_bytes": built.app_bytes,
                          "models": {n: sum(f.values()) for n, f in built.model_files.items()}, "seconds": figures}))


if __name__ == "__main__":
    main()
