"""The returning-visitor scenario of `botpsy-web bench` alone (our runtime only): time to the
first token of the first answer after a page load, with the prompt state the previous visit
stored and without it, plus load-to-ready, the state's size and its restore time; when the folder
ships a prompt state (`botpsy-web prompt-state`), also a first visit with it.

A script that prints figures, not a test. Usage:
    .venv/bin/python bench/returning_visitor.py MODEL_FOLDER [--backend wasm] [--dtype q8] [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from botpsy_web.bench import CHROMIUM_ARGS, CHROMIUM_PATH, BenchPage, BenchPrompts, log, pick_dtype
from botpsy_web.bench_returning_visitor import FIGURE_ROWS, measure_returning_visitor
from botpsy_web.serve import serve_in_background


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--backend", default="wasm", choices=("wasm", "webgpu"))
    parser.add_argument("--dtype")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = args.folder.resolve()
    manifest = json.loads((folder / "manifest.json").read_text())
    dtype = pick_dtype(manifest, args.backend, args.dtype)
    prompts = BenchPrompts(folder)
    server, base_url = serve_in_background(models_dir=folder.parent)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            page = BenchPage(browser.new_context(), base_url, "botpsy")
            load_options = {"folderUrl": f"/models/{folder.name}/", "backend": args.backend, "dtype": dtype}
            page.call("load", load_options)  # stores the model files: every visit below loads from the cache
            page.call("unload")
            figures = measure_returning_visitor("botpsy", page, load_options, folder, prompts.encode, args.repeats, log)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(f"{manifest.get('name', folder.name)}, {args.backend} {dtype}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}, medians of {args.repeats}")
    for label, key, pattern in FIGURE_ROWS:
        value = figures.get(key)
        print(f"{label:38}{pattern.format(value) if value is not None else '-':>12}")
    print(f"same tokens with and without the state: {figures['returning_visitor_same_tokens']}; "
          f"restored tokens per run: {figures['returning_visitor_restored_tokens']}")
    if "first_visit_shipped_state_first_token_s" in figures:
        print(f"first visit with the shipped state: restored tokens per run "
              f"{figures['first_visit_shipped_state_restored_tokens']}, same tokens as without any state: "
              f"{figures['first_visit_shipped_state_same_tokens']}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
