"""Where onnxruntime-web's time goes, per op, on one folder's graph (WASM), in headless Chromium.

    nice .venv/bin/python bench/profile_ops.py static/models/qwen2.5-coder-0.5b [--dtype q8]
        [--threads 2] [--chunk 1024] [--past 1024] [--decode-steps 8] [--chunks 256,512,1024] [--json]

Runs the graph the runtime runs on WASM (the dtype's appending graph) with onnxruntime's profiler on
(bench/profile-ops.js): one prefill chunk of --chunk tokens from an empty cache, then --decode-steps
one-token steps after --past positions. Prints each phase's wall time, the kernel time the profiler
saw, and the ops that take the most of it (summed by op type), then a prompt of --prompt tokens cut
into chunks of each --chunks size (profiler off). Not a test: figures to read.
"""

import argparse
import collections
import json
import os
import sys
from pathlib import Path

from botpsy_web.bench import CHROMIUM_ARGS, CHROMIUM_PATH, BENCH_PAGE
from botpsy_web.serve import serve_in_background


def op_shares(events: list[dict], start: float, end: float) -> tuple[float, list[tuple[str, float]]]:
    """(kernel ms, [(op type, ms)] largest first) of the node events between two timestamps (us)."""
    by_op = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time") and start <= event["ts"] <= end:
            by_op[event.get("args", {}).get("op_name", "?")] += event["dur"] / 1000
    return sum(by_op.values()), by_op.most_common()


def profile_events(lines: list[str]) -> list[dict]:
    """The profiler's JSON events among console lines (one array, or one event per line)."""
    events = []
    for line in lines:
        text = line.strip().rstrip(",")
        if not text.startswith(("{", "[")):
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            continue
        events += value if isinstance(value, list) else [value]
    return [event for event in events if isinstance(event, dict) and "ts" in event]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--dtype", default="q8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=1024)
    parser.add_argument("--past", type=int, default=1024)
    parser.add_argument("--decode-steps", type=int, default=8)
    parser.add_argument("--prompt", type=int, default=1024)
    parser.add_argument("--chunks", default="", help="chunk sizes to time a --prompt-token prompt with, e.g. 256,512,1024")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    folder = args.folder.resolve()
    server, base_url = serve_in_background(models_dir=folder.parent)
    lines: list[str] = []
    load = os.getloadavg()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            page = browser.new_context().new_page()
            page.set_default_timeout(600_000)
            page.on("console", lambda message: lines.append(message.text))
            page.goto(base_url + BENCH_PAGE)
            result = page.evaluate("options => import('/bench/profile-ops.js').then((m) => m.profile(options))", {
                "folderUrl": f"/models/{folder.name}/", "dtype": args.dtype, "threads": args.threads,
                "chunk": args.chunk, "past": args.past, "decodeSteps": args.decode_steps, "prompt": args.prompt,
                "chunks": [int(size) for size in args.chunks.split(",") if size], "profile": True})
            browser.close()
    finally:
        server.shutdown()
    events = profile_events(lines)
    runs = sorted((event for event in events if event.get("name") == "model_run"), key=lambda event: event["ts"])
    report = {"folder": str(folder), "graph": result["graph"], "threads": result["threads"],
              "load_average": [load[0], os.getloadavg()[0]], "prefill_ms": result["prefillMs"],
              "decode_ms": result["decodeMs"], "chunks_ms": result["chunks"], "profiled_runs": len(runs), "phases": {}}
    # runs[0] is the warm-up call, runs[1] the prefill chunk, the rest decode steps
    if len(runs) >= 2 + args.decode_steps:
        phases = {f"prefill {args.chunk}": runs[1:2], f"decode after {args.past}": runs[2:2 + args.decode_steps]}
        for phase, phase_runs in phases.items():
            kernel_ms, ops = op_shares(events, phase_runs[0]["ts"], phase_runs[-1]["ts"] + phase_runs[-1]["dur"])
            report["phases"][phase] = {"runs": len(phase_runs), "kernel_ms": kernel_ms / len(phase_runs),
                                       "ops": [(op, ms / len(phase_runs)) for op, ms in ops]}
    print(f"{report['graph']}, {report['threads']} threads, load {report['load_average'][0]:.2f} -> "
          f"{report['load_average'][1]:.2f}; prefill {args.chunk}: {report['prefill_ms']:.0f} ms; decode step after "
          f"{args.past}: {sorted(report['decode_ms'])[len(report['decode_ms']) // 2]:.1f} ms (median)")
    if not report["phases"]:
        print(f"the profiler's events did not reach the console ({len(events)} events, {len(runs)} runs)")
    for phase, figures in report["phases"].items():
        print(f"[{phase}] kernel time {figures['kernel_ms']:.1f} ms per run")
        for op, ms in figures["ops"][:args.top]:
            print(f"  {op:28} {ms:9.2f} ms  {100 * ms / figures['kernel_ms']:5.1f}%")
    for size, ms in report["chunks_ms"].items():
        print(f"prompt {args.prompt} in chunks of {size}: {ms:.0f} ms ({args.prompt / (ms / 1000):.1f} tok/s)")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
