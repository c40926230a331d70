"""`botpsy-web tasks DIR`: the task suite (docs/tasks.md) through what the page runs.

Every task file is read and checked first (a bad line stops the run, naming file, line and
field); then each task runs in the browser (one dtype) and/or, with --reference pytorch, through
the PyTorch model under CPython. Prints the table (report.py); --json adds the summary as the last
line; every task run's record goes to --outputs as it ends.
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def register(subparsers) -> None:
    parser = subparsers.add_parser("tasks", help="was what the person asked done? the task suite (tasks/*.jsonl) "
                                                 "through the page's agent, in the browser (and PyTorch's)")
    parser.add_argument("folder", type=Path, metavar="DIR", help="an exported model folder (holds manifest.json)")
    parser.add_argument("--dtype", default=None,
                        help="the dtype the browser runs (default q8 when the folder has it, else its first); "
                             "none: no browser run")
    parser.add_argument("--backend", choices=["wasm", "webgpu"], default="wasm", help="onnxruntime-web backend (default wasm)")
    parser.add_argument("--tasks", type=Path, nargs="+", default=None, metavar="FILE",
                        help="task files (default: every tasks/*.jsonl of the repository)")
    parser.add_argument("--categories", type=_list, default=None, help="comma-separated categories (default all)")
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks of each category")
    parser.add_argument("--reference", choices=["pytorch"], default=None,
                        help="also run the tasks through the PyTorch model the folder was exported from (CPython, free calls)")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0: greedy)")
    parser.add_argument("--torch-threads", type=int, default=None, help="threads for the PyTorch reference")
    parser.add_argument("--outputs", type=Path, default=None,
                        help="the per-task records (JSON lines, .gz compresses; default tasks-<model>-<time>.jsonl here)")
    parser.add_argument("--resume", action="store_true",
                        help="go on from the --outputs file: tasks it holds for the same task, model and engine are "
                             "judged again with today's checks, not run again")
    parser.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(func=run)


def settings_from(args):
    """(TaskSettings, tasks) from the arguments, or (None, an error naming the option or the line)."""
    from .data import TaskFileError, load_tasks, select_tasks
    from .runner import TaskSettings

    folder = args.folder.resolve()
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        return None, f"{folder} has no manifest.json: is it a folder written by `botpsy-web export`?"
    available = list(json.loads(manifest_path.read_text(encoding="utf-8")).get("dtypes", {}))
    dtype = args.dtype or ("q8" if "q8" in available else (available[0] if available else None))
    if dtype == "none":
        dtype = None
    if dtype is not None and dtype not in available:
        return None, f"--dtype {dtype!r} is not in {folder}; it has {', '.join(available)}"
    if dtype is None and not args.reference:
        return None, "nothing to run: --dtype none and no --reference"
    if args.limit is not None and args.limit < 1:
        return None, f"--limit must be at least 1, got {args.limit}"
    if args.temperature < 0:
        return None, f"--temperature must be 0 or more, got {args.temperature}"
    if args.reference and args.temperature:
        return None, "the PyTorch reference decodes greedily: --reference pytorch needs --temperature 0"
    if args.resume and args.outputs is None:
        return None, "--resume goes on from an earlier run's file: name it with --outputs FILE"
    if not args.resume and args.outputs is not None and args.outputs.is_file() and args.outputs.stat().st_size:
        return None, (f"{args.outputs} already holds runs: add --resume to go on from them, "
                      "or name another --outputs file (it is never overwritten)")
    try:
        tasks = select_tasks(load_tasks(args.tasks), args.categories, args.limit)
    except TaskFileError as error:
        return None, str(error)
    return (TaskSettings(folder, dtype, args.backend, args.reference, args.temperature, args.torch_threads), tasks), None


def run(args) -> int:
    chosen, problem = settings_from(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    settings, tasks = chosen
    from botpsy_eval.jsonl_files import RunLines
    from botpsy_eval.stopping import run_until_stopped

    from .report import format_table, summarize
    from .runner import EarlierTaskRuns, run_tasks

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    outputs = args.outputs or Path(f"tasks-{settings.folder.name}-{stamp}.jsonl")
    try:
        earlier = EarlierTaskRuns(outputs if args.resume else None)
    except ValueError as error:
        print(f"error: cannot resume: {error}", file=sys.stderr)
        return 2
    lines = RunLines(outputs, append=args.resume)
    quiet = args.no_progress

    def on_stage(text: str) -> None:
        if not quiet:
            print(f"... {text}", file=sys.stderr, flush=True)

    def on_run(run) -> None:
        if not quiet and not run.reused:
            verdict = "done" if run.done else "not done: " + ", ".join(run.failures or ["?"])
            print(f"    {run.task_id}: {verdict}, {run.generations} generation(s), {run.seconds:.1f} s",
                  file=sys.stderr, flush=True)

    def on_step(progress: dict) -> None:
        if not quiet:
            print(f"      {progress['task_id']} turn {progress['turn'] + 1} generation {progress['step']}: "
                  f"{progress['output_chars']} characters in {progress['seconds']:.1f} s", file=sys.stderr, flush=True)

    results, exit_code = run_until_stopped(
        lambda: run_tasks(settings, tasks, lines, earlier, on_run=on_run, on_stage=on_stage, on_step=on_step), outputs)
    if exit_code:
        return exit_code
    summary = summarize(results, str(lines.path))
    print(format_table(summary))
    if args.json:
        print(json.dumps(summary))
    return 0
