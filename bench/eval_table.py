"""One table from several `botpsy-web eval --outputs` files (e.g. a free run and a constrained run
of the same sample): rebuilds the summary from the per-case lines and prints the table, then the
summary as one JSON line.

    .venv/bin/python bench/eval_table.py runs-free.jsonl runs-constrained.jsonl

The files must hold the same cases (the same --categories, --limit and --seed); seconds are
the sum of the files' generation times (loads not included).
"""

import argparse
import json
from pathlib import Path

from botpsy_eval.data import Case
from botpsy_eval.report import format_table, summarize
from botpsy_eval.runner import CaseRun, EvalResults, EvalSettings


def read_runs(path: Path) -> list[CaseRun]:
    return [CaseRun(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", type=Path, nargs="+", help="per-case outputs files of botpsy-web eval")
    parser.add_argument("--limit", type=int, default=None, help="the runs' --limit, for the summary")
    parser.add_argument("--max-tokens", type=int, default=None, help="the runs' --max-tokens, for the summary")
    parser.add_argument("--model", default=None, help="the model's name in the summary (default: from the first file name)")
    args = parser.parse_args()
    runs = [run for path in args.outputs for run in read_runs(path)]
    per_engine = {}
    for run in runs:
        per_engine.setdefault((run.engine, run.dtype, run.tool_calls), set()).add(run.case_id)
    case_sets = {frozenset(ids) for ids in per_engine.values()}
    if len(case_sets) != 1:
        raise SystemExit("error: the files do not hold the same cases for every engine")
    cases = {run.case_id: Case(run.case_id, run.category, [], [], None) for run in runs}
    settings = EvalSettings(args.outputs[0], tuple(sorted({r.dtype for r in runs if r.engine == "browser"})),
                            tuple(dict.fromkeys(run.category for run in runs)), limit=args.limit,
                            max_tokens=args.max_tokens)
    results = EvalResults(settings, args.model or args.outputs[0].stem, list(cases.values()), runs,
                          seconds=sum(run.seconds for run in runs))
    summary = summarize(results, None)
    print(format_table(summary))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
