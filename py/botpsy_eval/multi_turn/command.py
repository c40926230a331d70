"""`botpsy-web eval DIR --categories multi_turn_...`: the multi-turn categories (command.py hands
the run here when any is named; they are not mixed with single-turn categories in one run).

The options mean what they mean for single-turn cases; --max-tokens caps each generation
(default 256); --outputs names the records file (JSON lines), whose transcripts go to the
folder beside it (<stem>-transcripts/<engine>-<dtype>-<mode>/<case id>.json); --resume reads
both back and runs only the cases they lack.
"""

from __future__ import annotations

import json
import sys


def _settings(args):
    """EvalSettings from the arguments, or an error message naming what is wrong."""
    from ..data import BfclDataError, MULTI_TURN_CATEGORIES
    from ..run_options import check_run_options, eval_settings
    from .data import load_category

    mixed = [category for category in args.categories if category not in MULTI_TURN_CATEGORIES]
    if mixed:
        return None, (f"--categories mixes multi-turn and single-turn categories ({', '.join(mixed)}): "
                      "run them as two commands")
    checked, error = check_run_options(args)
    if error:
        return None, error
    try:
        load_category(args.categories[0])  # the data is there (else: how to install it)
    except BfclDataError as error:
        return None, str(error)
    return eval_settings(args, checked, dict.fromkeys(args.categories)), None


def run_multi_turn_eval(args) -> int:
    settings, problem = _settings(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from ..run_options import outputs_path
    from ..stopping import run_until_stopped
    from .report import format_table, summarize
    from .runner import EarlierMultiTurnRuns, RecordsFile, run_multi_turn

    outputs = outputs_path(args, settings, "eval-multi-turn")
    try:
        earlier = EarlierMultiTurnRuns(outputs if args.resume else None)
    except ValueError as error:
        print(f"error: cannot resume: {error}", file=sys.stderr)
        return 2
    records = RecordsFile(outputs, append=args.resume)
    quiet = args.no_progress

    def on_stage(text: str) -> None:
        if not quiet:
            print(f"... {text}", file=sys.stderr, flush=True)

    def on_run(run) -> None:
        if not quiet and not run.reused:
            print(f"    {run.case_id}: {'right' if run.correct else 'wrong ' + (run.error_type or '')}, "
                  f"{run.turns}/{run.turns_expected} turns, steps {run.steps_per_turn}, {run.seconds:.0f} s",
                  file=sys.stderr, flush=True)

    def on_step(progress: dict) -> None:
        if not quiet:
            print(f"      {progress['case_id']} turn {progress['turn']} step {progress['step']}: "
                  f"{progress['output_chars']} characters in {progress['seconds']:.1f} s", file=sys.stderr, flush=True)

    results, exit_code = run_until_stopped(
        lambda: run_multi_turn(settings, records, earlier, on_run=on_run, on_stage=on_stage, on_step=on_step),
        outputs)
    if exit_code:
        return exit_code
    summary = summarize(results, outputs, records.transcripts)
    print(format_table(summary))
    if args.json:
        print(json.dumps({"multi_turn": summary}))
    return 0
