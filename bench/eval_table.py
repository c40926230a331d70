"""One table from several `botpsy-web eval --outputs` files (e.g. a free run and a constrained run
of the same sample): rebuilds the summary from the per-case lines and prints the table, then the
summary as one JSON line. Single-turn and multi-turn records alike (not mixed in one table).

    .venv/bin/python bench/eval_table.py runs-free.jsonl runs-constrained.jsonl
    .venv/bin/python bench/eval_table.py multi-turn.jsonl multi-turn-pytorch.jsonl --common

Every column (engine, dtype, free/constrained) must hold the same cases (the same --categories,
--limit and --seed), or pass --common to keep only the cases every column ran (a column that
went further than another is cut to the shared sample); --columns picks columns (to leave a
partial one out). A case found twice in a column counts once, as its last line (a rerun).
Seconds are the sum of the files' generation times (loads not included).
"""

import argparse
import json
import os
import sys
from pathlib import Path

from botpsy_eval import report as single_turn_report
from botpsy_eval.data import Case
from botpsy_eval.jsonl_files import read_text
from botpsy_eval.multi_turn import report as multi_turn_report
from botpsy_eval.multi_turn.data import MultiTurnCase
from botpsy_eval.multi_turn.runner import MultiTurnResults, MultiTurnRun
from botpsy_eval.runner import CaseRun, EvalResults, EvalSettings


def read_runs(path: Path) -> list:
    runs = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            kind = MultiTurnRun if "turns_expected" in record else CaseRun
            runs.append(kind(**record))
        except (json.JSONDecodeError, TypeError) as error:
            raise SystemExit(f"error: {path} line {number} is not a record of botpsy-web eval: {error}") from None
    return runs


def column(run) -> tuple[str, str, str]:
    return run.engine, run.dtype, run.tool_calls


def latest_runs(runs: list) -> list:
    """One run per column and case: a case run again (a later line) stands for its earlier lines."""
    latest = {(column(run), run.case_id): run for run in runs}
    if len(latest) < len(runs):
        print(f"{len(runs) - len(latest)} earlier line(s) of a case run again left out", file=sys.stderr)
    return list(latest.values())


def shared_cases(runs: list) -> list:
    per_column: dict[tuple, set] = {}
    for run in runs:
        per_column.setdefault(column(run), set()).add(run.case_id)
    common = set.intersection(*per_column.values())
    return [run for run in runs if run.case_id in common]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", type=Path, nargs="+", help="per-case outputs files of botpsy-web eval")
    parser.add_argument("--limit", type=int, default=None, help="the runs' --limit, for the summary")
    parser.add_argument("--max-tokens", type=int, default=None, help="the runs' --max-tokens, for the summary")
    parser.add_argument("--model", default=None, help="the model's name in the summary (default: from the first file name)")
    parser.add_argument("--common", action="store_true", help="keep only the cases every column ran")
    parser.add_argument("--columns", default=None,
                        help="comma-separated columns to show, named as their transcript folders "
                             "(browser-q8-free, browser-fp32-constrained, pytorch-fp32-free; default: all)")
    args = parser.parse_args()
    runs = [run for path in args.outputs for run in read_runs(path)]
    if args.columns:
        wanted = [name.strip() for name in args.columns.split(",") if name.strip()]
        present = {"-".join(column(run)) for run in runs}
        unknown = [name for name in wanted if name not in present]
        if unknown:
            raise SystemExit(f"error: no records for column(s) {', '.join(unknown)}; "
                             f"the files hold: {', '.join(sorted(present))}")
        runs = [run for run in runs if "-".join(column(run)) in wanted]
    if not runs:
        raise SystemExit("error: the files hold no records")
    multi_turn = {isinstance(run, MultiTurnRun) for run in runs}
    if len(multi_turn) != 1:
        raise SystemExit("error: the files mix single-turn and multi-turn records: make one table of each")
    if args.common:
        runs = shared_cases(runs)
    runs = latest_runs(runs)
    per_engine = {}
    for run in runs:
        per_engine.setdefault(column(run), set()).add(run.case_id)
    case_sets = {frozenset(ids) for ids in per_engine.values()}
    if len(case_sets) != 1:
        raise SystemExit("error: the files do not hold the same cases for every engine "
                         "(--common keeps the shared ones)")
    if multi_turn == {True}:
        return print_multi_turn(args, runs)
    cases = {run.case_id: Case(run.case_id, run.category, [], [], None) for run in runs}
    settings = EvalSettings(args.outputs[0], tuple(sorted({r.dtype for r in runs if r.engine == "browser"})),
                            tuple(dict.fromkeys(run.category for run in runs)), limit=args.limit,
                            max_tokens=args.max_tokens)
    results = EvalResults(settings, args.model or args.outputs[0].stem, list(cases.values()), runs,
                          seconds=sum(run.seconds for run in runs))
    summary = single_turn_report.summarize(results, None)
    print(single_turn_report.format_table(summary))
    print(json.dumps(summary))
    return 0


def print_multi_turn(args, runs: list[MultiTurnRun]) -> int:
    cases = {run.case_id: MultiTurnCase(run.case_id, run.category, [], {}, [], [], {}, []) for run in runs}
    settings = EvalSettings(args.outputs[0], tuple(sorted({r.dtype for r in runs if r.engine == "browser"})),
                            tuple(dict.fromkeys(run.category for run in runs)), limit=args.limit,
                            max_tokens=args.max_tokens or runs[0].max_tokens)
    results = MultiTurnResults(settings, args.model or args.outputs[0].stem, list(cases.values()), runs,
                               seconds=sum(run.seconds for run in runs))
    transcripts = sorted({os.path.relpath(Path(run.transcript).parent.parent) for run in runs})
    summary = multi_turn_report.summarize(results, ", ".join(map(str, args.outputs)), ", ".join(transcripts))
    print(multi_turn_report.format_table(summary))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
