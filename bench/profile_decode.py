"""Where a decode step's time goes: inside onnxruntime's session.run against everything else,
for our runtime and for transformers.js 4.3.2 on the same folder, in headless Chromium.

    nice .venv/bin/python bench/profile_decode.py /tmp/botpsy-models/smollm2-135m [--dtype q8]
        [--engines botpsy,transformers.js] [--repeats 3] [--backend wasm] [--json]

Two scenarios, as in `botpsy-web bench`: a ~20-token chat prompt then 64 greedy tokens
("short"), and a 1024-token prompt then 32 tokens ("after 1024"). Per decode step, in ms
(medians over runs):
- page: what the page sees, (total - time to first token) / (tokens - 1);
- run: inside session.run (ours: the worker's own timer; transformers.js: session.run wrapped);
- the rest of ours split by phase (feeds, outputs, sample, detokenize, emit, yield) and the
  worker -> page delivery (page - the worker's decode time);
- time to first token, with the prefill's session.run part.
Not a test: figures to read.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

from botpsy_web.bench import CHROMIUM_ARGS, CHROMIUM_PATH, BenchPage, BenchPrompts, pick_dtype
from botpsy_web.serve import serve_in_background

SCENARIOS = {"short": (None, 64), "after 1024": (1024, 32)}


def profile_run(engine: str, run: dict) -> dict:
    """Per-step figures of one generate result (see the module docstring)."""
    steps = len(run["tokens"]) - 1
    page_decode_ms = run["totalMs"] - run["ttftMs"]
    figures = {"page_ms": page_decode_ms / steps, "ttft_ms": run["ttftMs"]}
    if engine == "botpsy":
        phases = run["decodePhaseMs"]
        figures["run_ms"] = phases.get("run", 0) / steps
        for phase, ms in phases.items():
            if phase != "run":
                figures[f"{phase}_ms"] = ms / steps
        figures["delivery_ms"] = (page_decode_ms - run["decodeMs"]) / steps
        figures["ttft_run_ms"] = run["prefillPhaseMs"].get("run", 0)
        figures["ttft_prefill_ms"] = run["prefillMs"]
    else:
        runs = run["runMs"]
        figures["run_ms"] = sum(runs[1:]) / max(1, len(runs) - 1)
        figures["ttft_run_ms"] = runs[0] if runs else None
    figures["outside_run_ms"] = figures["page_ms"] - figures["run_ms"]
    return figures


def median_figures(runs: list[dict]) -> dict:
    keys = {key for run in runs for key in run}
    return {key: statistics.median(run[key] for run in runs if run.get(key) is not None)
            for key in sorted(keys) if any(run.get(key) is not None for run in runs)}


def profile(folder: Path, engines, dtype, backend, repeats, scenarios=tuple(SCENARIOS)) -> dict:
    from playwright.sync_api import sync_playwright

    folder = Path(folder).resolve()
    manifest = json.loads((folder / "manifest.json").read_text())
    dtype = pick_dtype(manifest, backend, dtype)
    prompts = BenchPrompts(folder)
    chat = prompts.chat([{"role": "user", "content": "Tell me a long story about a lighthouse keeper."}])
    server, base_url = serve_in_background(models_dir=folder.parent)
    report = {"model": manifest.get("name", folder.name), "dtype": dtype, "backend": backend, "scenarios": {}}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            context = browser.new_context()
            pages = {}
            for engine in engines:
                page = BenchPage(context, base_url, engine)
                threads = 2 if page.call("crossOriginIsolated") else 1
                page.call("load", {"folderUrl": f"/models/{folder.name}/", "backend": backend, "dtype": dtype,
                                   "threads": threads})
                page.generate(prompts.plain(16, variant=99), 4)  # warm-up
                pages[engine] = page
            for scenario in scenarios:
                prompt_length, tokens = SCENARIOS[scenario]
                results = {engine: [] for engine in engines}
                for run in range(repeats):
                    prompt = chat if prompt_length is None else prompts.plain(prompt_length, variant=100 + run)
                    for engine, page in pages.items():
                        results[engine].append(profile_run(engine, page.generate(prompt, tokens)))
                report["scenarios"][scenario] = {engine: median_figures(runs) for engine, runs in results.items()}
            for page in pages.values():
                page.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return report


def format_report(report: dict) -> str:
    lines = [f"{report['model']}, {report['backend']}, {report['dtype']}: ms per decode step (medians)"]
    for scenario, engines in report["scenarios"].items():
        lines.append(f"[{scenario}]")
        for engine, figures in engines.items():
            cells = ", ".join(f"{key.removesuffix('_ms')} {value:.2f}" for key, value in figures.items())
            lines.append(f"  {engine}: {cells}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--dtype")
    parser.add_argument("--backend", default="wasm", choices=("wasm", "webgpu"))
    parser.add_argument("--engines", default="botpsy,transformers.js")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"comma-separated, of: {', '.join(SCENARIOS)}")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line, last")
    args = parser.parse_args(argv)
    engines = [name.strip() for name in args.engines.split(",") if name.strip()]
    scenarios = [name.strip() for name in args.scenarios.split(",") if name.strip()]
    unknown = [name for name in scenarios if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    report = profile(args.folder, engines, args.dtype, args.backend, args.repeats, scenarios)
    print(format_report(report))
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
