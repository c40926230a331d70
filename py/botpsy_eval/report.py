"""The eval's results as a table, as one JSON summary, and as a per-case outputs file.

The JSON summary (`botpsy-web eval --json` prints it as its last line):

    {"model": folder name, "backend", "seed", "limit", "max_tokens",
     "cases": {category: n},
     "accuracy": {"browser": {dtype: {"free"|"constrained": {category: 0..1, "overall": 0..1}}},
                  "pytorch": {"free": {category: 0..1, "overall": 0..1}}},
     "unparsed_calls": {"browser": {dtype: {mode: n}}, "pytorch": {"free": n}},
     "calls_by_opening": same nesting, {opening: n}: every call read (parsed or not) by how it
                        opened: "tool_call_tag", "function_tag", "bare_json", "fenced_json", "double_braced_json",
     "failed_generations": same nesting: cases whose generation failed (counted wrong; the reason is in the outputs),
     "mean_prompt_tokens" / "mean_output_tokens" / "seconds_per_engine": same nesting as unparsed_calls,
     "fp32_vs_pytorch": {"compared": n, "same_tokens": n, "differing": [{"id", "browser_correct", "pytorch_correct"}]}
                        (only when both ran),
     "same_tokens": {"baseline": "pytorch free" | "browser fp32 free", "compared": n,
                     "browser": {dtype: {mode: n}}, "pytorch": {"free": n}}: how many of the cases every
                    column ran gave exactly the baseline's greedy tokens (the original model: PyTorch when
                    it ran, else browser fp32 free), so a quantization that changes what the model writes
                    shows even where its score does not; "constrained_same_as_free": {dtype: n}, how
                    often the grammar left a dtype's tokens as they were (both only where they apply),
     "cases_per_minute": case runs (one case through one engine) generated per minute over the whole run,
     "reused_runs": case runs read back from the outputs file (--resume) instead of generated,
     "browser_runtime": {"browser <dtype>": {"backend", "dtype", "threads", "reason"}} as the runtime loaded it,
     "outputs": path of the per-case file, "seconds": wall time}

"overall" is the unweighted mean of the categories' accuracies. This is BFCL's single-turn
AST accuracy: not BFCL v4's overall score, which also weighs multi-turn and agentic
categories. The outputs file has one JSON object per case and engine (runner.CaseRun):
the prompt, what the model wrote, the calls read from it, the verdict and why.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from .columns import ColumnTable, accuracy, cases_per_category, group_by_column, lookup, nested, run_settings
from .jsonl_files import RunLines
from .runner import CaseRun, EvalResults

NOT_THE_BFCL_SCORE = ("Single-turn AST accuracy (BFCL v4 data); not BFCL v4's overall score, "
                      "which also weighs multi-turn and agentic categories.")


def _calls_by_opening(runs: list[CaseRun]) -> dict:
    return dict(sorted(Counter(call["opening"] for run in runs for call in run.calls + run.unparsed).items()))


def fp32_parity(runs: list[CaseRun]) -> dict | None:
    """Browser fp32 (free) against PyTorch on the same cases: greedy tokens must be the same."""
    browser = {run.case_id: run for run in runs if run.engine == "browser" and run.dtype == "fp32"
               and run.tool_calls == "free"}
    torch = {run.case_id: run for run in runs if run.engine == "pytorch"}
    common = [case_id for case_id in browser if case_id in torch]
    if not common:
        return None
    differing = [{"id": case_id, "browser_correct": browser[case_id].correct, "pytorch_correct": torch[case_id].correct}
                 for case_id in common if browser[case_id].token_ids != torch[case_id].token_ids]
    return {"compared": len(common), "same_tokens": len(common) - len(differing), "differing": differing}


def summarize(results: EvalResults, outputs_path: Path | None) -> dict:
    groups = group_by_column(results.runs)
    generated = sum(not run.reused for run in results.runs)
    summary = {
        **run_settings(results), "cases": cases_per_category(results.cases),
        "accuracy": nested(groups, accuracy),
        "unparsed_calls": nested(groups, lambda runs: sum(len(run.unparsed) for run in runs)),
        "calls_by_opening": nested(groups, _calls_by_opening),
        "failed_generations": nested(groups, lambda runs: sum(run.stop_reason == "error" for run in runs)),
        "mean_prompt_tokens": nested(groups, lambda runs: round(statistics.mean(r.prompt_tokens for r in runs), 1)),
        "mean_output_tokens": nested(groups, lambda runs: round(statistics.mean(r.output_tokens for r in runs), 1)),
        "seconds_per_engine": nested(groups, lambda runs: round(sum(r.seconds for r in runs), 1)),
        "cases_per_minute": round(generated / (results.seconds / 60), 2) if results.seconds and generated else None,
        "reused_runs": len(results.runs) - generated,
        "browser_runtime": results.engine_info,
        "outputs": str(outputs_path) if outputs_path else None,
        "seconds": round(results.seconds, 1),
    }
    parity = fp32_parity(results.runs)
    if parity is not None:
        summary["fp32_vs_pytorch"] = parity
    summary.update(token_agreement(groups))
    return summary


def token_agreement(groups: dict) -> dict:
    """Greedy tokens against the original model's (see the module's docstring): "same_tokens",
    and "constrained_same_as_free" where a dtype ran both modes. Compared over the cases every
    column ran."""
    tokens = {keys: {run.case_id: run.token_ids for run in runs} for keys, runs in groups.items()}
    baseline_keys = next((keys for keys in (("pytorch", "free"), ("browser", "fp32", "free")) if keys in tokens), None)
    if baseline_keys is None:
        return {}
    common = set.intersection(*(set(by_case) for by_case in tokens.values()))
    if not common:
        return {}
    baseline = tokens[baseline_keys]

    def agreeing(keys, reference) -> int:
        return sum(tokens[keys][case_id] == reference[case_id] for case_id in common)

    same = nested({keys: keys for keys in tokens}, lambda keys: agreeing(keys, baseline))
    out = {"same_tokens": {"baseline": " ".join(baseline_keys), "compared": len(common), **same}}
    constrained = {keys[1]: agreeing(keys, tokens[("browser", keys[1], "free")]) for keys in tokens
                   if keys[0] == "browser" and keys[2] == "constrained" and ("browser", keys[1], "free") in tokens}
    if constrained:
        out["constrained_same_as_free"] = constrained
    return out


def format_table(summary: dict) -> str:
    table = ColumnTable(summary, wide_labels=("same tokens as fp32 free",))
    columns = table.columns
    lines = [NOT_THE_BFCL_SCORE, ""] + table.accuracy_and_measures(summary, [
        ("overall (mean)", "accuracy", lambda v: f"{v['overall']:.3f}"),
        ("unparsed calls", "unparsed_calls", str),
        ("failed generations", "failed_generations", str),
        ("mean prompt tokens", "mean_prompt_tokens", lambda v: f"{v:.0f}"),
        ("mean output tokens", "mean_output_tokens", lambda v: f"{v:.1f}"),
        ("seconds", "seconds_per_engine", lambda v: f"{v:.0f}")])
    lines.extend(_agreement_rows(summary, table))
    openings = [(label, lookup(summary["calls_by_opening"], keys)) for label, keys in columns]
    if any(counts for _, counts in openings):
        lines += ["", "calls by opening:"] + [
            f"  {label}: " + (", ".join(f"{opening} {n}" for opening, n in counts.items()) or "none")
            for label, counts in openings]
    parity = summary.get("fp32_vs_pytorch")
    if parity:
        lines.append("")
        lines.append(f"browser fp32 vs PyTorch: {parity['same_tokens']}/{parity['compared']} cases with the same tokens")
        for case in parity["differing"]:
            lines.append(f"  differs: {case['id']} (browser {'right' if case['browser_correct'] else 'wrong'}, "
                         f"PyTorch {'right' if case['pytorch_correct'] else 'wrong'})")
    lines.append("")
    rate = summary["cases_per_minute"]
    lines.append(f"{len(columns)} column(s), {summary['seconds']:.0f} s, "
                 + (f"{rate} generations/min" if rate is not None else "nothing generated"))
    if summary.get("reused_runs"):
        lines.append(f"{summary['reused_runs']} case run(s) read back from the outputs file, not generated again")
    if summary["outputs"]:
        lines.append(f"per-case outputs: {summary['outputs']}")
    return "\n".join(lines)


def _agreement_rows(summary: dict, table: ColumnTable) -> list[str]:
    same = summary.get("same_tokens")
    if not same:
        return []
    compared = same["compared"]
    rows = [table.row("same tokens as " + same["baseline"].removeprefix("browser ").removesuffix(" free"), compared,
                      [lookup(same, keys) for _, keys in table.columns])]
    constrained = summary.get("constrained_same_as_free")
    if constrained:
        rows.append(table.row("constrained = free", compared,
                              [constrained[keys[1]] if keys[-1] == "constrained" and keys[1] in constrained else ""
                               for _, keys in table.columns]))
    return rows


class OutputsFile:
    """The per-case outputs, one JSON line per case run, written as each run ends (a long
    run that stops early keeps what it did; jsonl_files.RunLines says how). With append, new
    runs go after the file's own; runs read back from it are not written twice."""

    def __init__(self, path: Path, append: bool = False):
        self.lines = RunLines(path, append)
        self.path = self.lines.path

    def write(self, run: CaseRun) -> None:
        if run.reused:
            return
        entry = run.as_json()
        del entry["reused"]
        self.lines.append(entry)
