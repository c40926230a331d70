"""The multi-turn results as a table and as one JSON summary.

The JSON summary (`botpsy-web eval --json` with multi-turn categories prints it as the
"multi_turn" key of its last line):

    {"model", "backend", "seed", "limit", "max_tokens" (per generation), "max_steps_per_turn",
     "cases": {category: n},
     "accuracy": {"browser": {dtype: {"free"|"constrained": {category: 0..1, "overall": 0..1}}},
                  "pytorch": {"free": {...}}}   (BFCL's multi_turn_checker; overall = unweighted mean),
     "no_call_turns_ok", "forced_quits", "failed_cases", "calls_ran", "calls_refused",
     "mean_steps_per_turn", "mean_seconds_per_case", "seconds_per_engine": same nesting as
                   accuracy without the categories: one value per column,
     "same_outputs_as_pytorch": {"compared", "browser": {dtype: {mode: n}}}: cases where every
                   generation wrote exactly PyTorch's text (only when PyTorch ran),
     "browser_runtime": {"browser <dtype>": what the runtime loaded},
     "reused_runs", "records": path, "transcripts": folder, "seconds": wall time}
"""

from __future__ import annotations

import statistics

from ..columns import ColumnTable, accuracy, cases_per_category, group_by_column, lookup, nested, run_settings
from .runner import MultiTurnResults, MultiTurnRun

NOT_THE_BFCL_SCORE = ("BFCL v4 multi-turn accuracy (base, miss_func, miss_param, long_context) through our agent "
                      "loop; not BFCL v4's overall score, which also weighs single-turn, web-search and memory "
                      "categories.")


def _mean_steps(runs: list[MultiTurnRun]) -> float:
    steps = [count for run in runs for count in run.steps_per_turn]
    return round(statistics.mean(steps), 2) if steps else 0.0


def same_outputs_as_pytorch(groups: dict) -> dict | None:
    torch = {run.case_id: run.outputs_digest for run in groups.get(("pytorch", "free"), [])}
    if not torch:
        return None
    browser = {keys: runs for keys, runs in groups.items() if keys[0] == "browser"}
    if not browser:
        return None
    common = set(torch).intersection(*({run.case_id for run in runs} for runs in browser.values()))
    counts = nested(browser, lambda runs: sum(run.outputs_digest == torch[run.case_id]
                                               for run in runs if run.case_id in common))
    return {"compared": len(common), **counts}


def summarize(results: MultiTurnResults, records_path, transcripts_path) -> dict:
    groups = group_by_column(results.runs)
    summary = {
        **run_settings(results),
        "max_steps_per_turn": results.runs[0].max_steps if results.runs else None,
        "cases": cases_per_category(results.cases),
        "accuracy": nested(groups, accuracy),
        "no_call_turns_ok": nested(groups, lambda runs: sum(run.no_call_turns_ok for run in runs)),
        "forced_quits": nested(groups, lambda runs: sum(run.forced_quit for run in runs)),
        "failed_cases": nested(groups, lambda runs: sum(run.failed for run in runs)),
        "calls_ran": nested(groups, lambda runs: sum(run.calls_ran for run in runs)),
        "calls_refused": nested(groups, lambda runs: sum(run.calls_refused for run in runs)),
        "mean_steps_per_turn": nested(groups, _mean_steps),
        "mean_seconds_per_case": nested(groups, lambda runs: round(statistics.mean(r.seconds for r in runs), 1)),
        "seconds_per_engine": nested(groups, lambda runs: round(sum(r.seconds for r in runs), 1)),
        "browser_runtime": results.engine_info,
        "reused_runs": sum(run.reused for run in results.runs),
        "records": str(records_path), "transcripts": str(transcripts_path),
        "seconds": round(results.seconds, 1),
    }
    same = same_outputs_as_pytorch(groups)
    if same is not None:
        summary["same_outputs_as_pytorch"] = same
    return summary


def format_table(summary: dict) -> str:
    table = ColumnTable(summary, wide_labels=("same outputs as pytorch",))
    lines = [NOT_THE_BFCL_SCORE, ""] + table.accuracy_and_measures(summary, [
        ("overall (mean)", "accuracy", lambda v: f"{v['overall']:.3f}"),
        ("no-call turns kept", "no_call_turns_ok", str),
        ("forced quits", "forced_quits", str),
        ("failed cases", "failed_cases", str),
        ("calls run", "calls_ran", str),
        ("calls refused", "calls_refused", str),
        ("mean steps per turn", "mean_steps_per_turn", lambda v: f"{v:.2f}"),
        ("mean seconds per case", "mean_seconds_per_case", lambda v: f"{v:.1f}"),
        ("seconds", "seconds_per_engine", lambda v: f"{v:.0f}")])
    same = summary.get("same_outputs_as_pytorch")
    if same:
        lines.append(table.row("same outputs as pytorch", same["compared"],
                               [lookup(same, keys) if keys[0] == "browser" else "" for _, keys in table.columns]))
    lines.append("")
    lines.append(f"{len(table.columns)} column(s), {summary['seconds']:.0f} s; at most {summary['max_steps_per_turn']} "
                 f"generations per turn, {summary['max_tokens']} tokens each")
    if summary["reused_runs"]:
        lines.append(f"{summary['reused_runs']} case run(s) read back from the records file, not run again")
    lines.append(f"records: {summary['records']}; transcripts: {summary['transcripts']}")
    return "\n".join(lines)
