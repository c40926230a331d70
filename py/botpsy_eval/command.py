"""`botpsy-web eval DIR`: BFCL single-turn function-calling accuracy through the whole pipeline.

Each case's functions become the agent's tools, the agent renders the prompt with the
folder's chat template, the browser runtime generates greedily (per dtype, free and/or
grammar-constrained tool calls), the agent's parser reads the calls, and an AST checker
(botpsy_eval.checker) scores them. `--reference pytorch` runs the same prompts through the
PyTorch model the folder was exported from. Prints a table per category; `--json` adds one
JSON line (botpsy_eval.report); every case's prompt and output go to the --outputs file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def register(subparsers):
    from .browser import DEFAULT_DTYPES
    from .data import CATEGORIES, MULTI_TURN_CATEGORIES
    from .settings import REFERENCES, TOOL_CALL_MODES

    parser = subparsers.add_parser(
        "eval", help="BFCL single-turn tool-call accuracy of a folder in the browser, per dtype (and PyTorch's)")
    parser.add_argument("folder", type=Path, metavar="DIR", help="an exported model folder (holds manifest.json)")
    parser.add_argument("--dtype", type=_list, default=None,
                        help=f"comma-separated dtypes to run in the browser (default: those of {','.join(DEFAULT_DTYPES)} "
                             "the folder has)")
    parser.add_argument("--backend", choices=["wasm", "webgpu"], default="wasm", help="onnxruntime-web backend (default wasm)")
    parser.add_argument("--categories", type=_list, default=list(CATEGORIES),
                        help=f"comma-separated BFCL categories (default all: {','.join(CATEGORIES)}); or the "
                             f"multi-turn ones, run on their own: {','.join(MULTI_TURN_CATEGORIES)}")
    parser.add_argument("--limit", type=int, default=None, help="a fixed, seeded sample of N cases per category")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--tool-calls", type=_list, default=["free"],
                        help=f"comma-separated: {','.join(TOOL_CALL_MODES)} (default free)")
    parser.add_argument("--reference", choices=REFERENCES, default=None,
                        help="also run the prompts through the PyTorch model the folder was exported from")
    parser.add_argument("--max-tokens", type=int, default=256, help="most tokens generated per case (default 256)")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="threads for the PyTorch reference (default torch's; 1 is faster on a busy machine)")
    parser.add_argument("--outputs", type=Path, default=None,
                        help="where the per-case outputs go (JSON lines, gzip-compressed when the name ends in .gz; default eval-<model>-<time>.jsonl here)")
    parser.add_argument("--resume", action="store_true",
                        help="go on from the --outputs file: cases it already holds for the same model, engine and "
                             "prompt are read back and scored, not generated again; new runs are appended")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(func=run)


def _settings(args):
    """EvalSettings from the arguments, or an error message naming what is wrong."""
    from .data import BfclDataError, check_categories, load_category
    from .run_options import check_run_options, eval_settings

    checked, error = check_run_options(args)
    if error:
        return None, error
    try:
        categories = check_categories(args.categories)
        load_category(categories[0])  # the data is there (else: how to install it)
    except (ValueError, BfclDataError, IndexError) as error:
        return None, str(error) if not isinstance(error, IndexError) else "--categories is empty"
    return eval_settings(args, checked, categories), None


class _Progress:
    """A bar over every generation, with ETA, on stderr."""

    def __init__(self, total: int, enabled: bool):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, file=sys.stderr, unit="case", dynamic_ncols=True,
                            bar_format="{desc} {bar:24} {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]")

    def stage(self, text: str) -> None:
        if self.bar:
            self.bar.set_description_str(text)
        else:
            print(f"... {text}", file=sys.stderr, flush=True)

    def advance(self, run) -> None:
        if self.bar and not run.reused:
            self.bar.set_postfix_str(f"{run.case_id} {'ok' if run.correct else 'wrong'}", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar:
            self.bar.close()


def run(args) -> int:
    from .data import MULTI_TURN_CATEGORIES

    if any(category in MULTI_TURN_CATEGORIES for category in args.categories):
        from .multi_turn.command import run_multi_turn_eval

        return run_multi_turn_eval(args)
    settings, problem = _settings(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from .report import OutputsFile, format_table, summarize
    from .resume import EarlierRuns, ResumeError
    from .run_options import outputs_path
    from .runner import pending_generations, render_cases, run_eval
    from .stopping import run_until_stopped

    outputs = outputs_path(args, settings, "eval")
    try:
        earlier = EarlierRuns.read(outputs) if args.resume else EarlierRuns()
    except ResumeError as error:
        print(f"error: cannot resume: {error}", file=sys.stderr)
        return 2
    prepared = render_cases(settings)
    pending = pending_generations(settings, prepared[2], earlier)
    total = sum(pending.values())
    if args.resume:
        print(f"resuming from {outputs}: {len(earlier.runs)} stored run(s); {total} generation(s) to go",
              file=sys.stderr, flush=True)
    progress = _Progress(total, enabled=not args.no_progress)
    outputs_file = OutputsFile(outputs, append=args.resume)

    def on_run(case_run):
        outputs_file.write(case_run)
        progress.advance(case_run)

    try:
        results, exit_code = run_until_stopped(
            lambda: run_eval(settings, on_run=on_run, on_stage=progress.stage, earlier=earlier, prepared=prepared),
            outputs)
    finally:
        progress.close()
    if exit_code:
        return exit_code
    if earlier.stale:
        print(f"note: {earlier.stale} stored run(s) were generated again: their prompt or --max-tokens no longer "
              "matches (or they had failed)", file=sys.stderr)
    summary = summarize(results, outputs)
    print(format_table(summary))
    if args.json:
        print(json.dumps(summary))
    return 0
