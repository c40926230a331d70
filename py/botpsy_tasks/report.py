"""A run's figures: per engine, tasks done per category and overall, seconds per task (median and
90th percentile, all tasks and single-turn ones), generations and confirmations per task, and the
failure classes. `botpsy-web tasks --json` prints the summary as its last line:

    {"model", "temperature", "tasks": {category: n},
     "engines": {"browser q8" | "pytorch fp32": {
         "done": {category: n, "overall": n}, "rate": {category: 0..1, "overall": 0..1},
         "median_seconds", "p90_seconds", "median_single_turn_seconds",
         "generations_per_task", "confirmations_per_task",
         "failures": {class: tasks}, "not_done": [task ids], "unwanted_acting_calls": [task ids]}},
     "browser_runtime": {"browser <dtype>": {"backend", "dtype", "threads", "warmUpSeconds", ...}},
     "reused_runs", "records", "seconds"}
"""

from __future__ import annotations

import statistics
from collections import Counter

from .failures import CLASSES
from .runner import TaskResults


def percentile(values: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile (0.5: the median of an odd count; 0.9: 90th)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))  # ceil
    return ordered[int(rank) - 1]


def _engine_summary(runs) -> dict:
    categories = list(dict.fromkeys(run.category for run in runs))
    done = {category: sum(run.done for run in runs if run.category == category) for category in categories}
    counts = Counter(run.category for run in runs)
    seconds = [run.seconds for run in runs if not run.record.get("error")]
    single = [run.seconds for run in runs if run.turns == 1 and not run.record.get("error")]
    failures = Counter(name for run in runs for name in run.failures)
    return {
        "done": {**done, "overall": sum(done.values())},
        "rate": {**{category: done[category] / counts[category] for category in categories},
                 "overall": sum(done.values()) / len(runs) if runs else 0.0},
        "median_seconds": statistics.median(seconds) if seconds else None,
        "p90_seconds": percentile(seconds, 0.9),
        "median_single_turn_seconds": statistics.median(single) if single else None,
        "generations_per_task": statistics.mean(run.generations for run in runs) if runs else None,
        "confirmations_per_task": statistics.mean(run.confirmations for run in runs) if runs else None,
        "failures": {name: failures[name] for name in CLASSES if failures[name]},
        "not_done": [run.task_id for run in runs if not run.done],
        "unwanted_acting_calls": [run.task_id for run in runs if "unwanted_acting_call" in run.failures],
    }


def summarize(results: TaskResults, records: str) -> dict:
    engines: dict[str, list] = {}
    for run in results.runs:
        engines.setdefault(f"{run.engine} {run.dtype}", []).append(run)
    return {"model": results.model, "temperature": results.settings.temperature,
            "tasks": dict(Counter(task.category for task in results.tasks)),
            "engines": {name: _engine_summary(runs) for name, runs in engines.items()},
            "browser_runtime": results.engine_info,
            "reused_runs": sum(run.reused for run in results.runs),
            "records": records, "seconds": round(results.seconds, 1)}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def format_table(summary: dict) -> str:
    names = list(summary["engines"])
    width = max([24] + [len(name) + 2 for name in names])
    label = max([18] + [len(category) + 2 for category in summary["tasks"]])

    def row(text: str, cells: list[str]) -> str:
        return text.ljust(label) + "".join(cell.rjust(width) for cell in cells)

    lines = [f"Tasks done, {summary['model']} (temperature {summary['temperature']:g})", "",
             row("category (tasks)", names)]
    for category, count in summary["tasks"].items():
        cells = [f"{engine['done'].get(category, 0)}/{count}" for engine in summary["engines"].values()]
        lines.append(row(f"{category} ({count})", cells))
    total = sum(summary["tasks"].values())
    lines.append(row(f"overall ({total})", [f"{engine['done']['overall']}/{total} "
                                              f"({100 * engine['rate']['overall']:.0f}%)"
                                              for engine in summary["engines"].values()]))
    lines.append("")
    for text, key in (("median s / task", "median_seconds"), ("p90 s / task", "p90_seconds"),
                      ("median s, 1 turn", "median_single_turn_seconds")):
        lines.append(row(text, [_seconds(engine[key]) for engine in summary["engines"].values()]))
    for text, key in (("generations / task", "generations_per_task"),
                      ("confirmations / task", "confirmations_per_task")):
        lines.append(row(text, ["-" if engine[key] is None else f"{engine[key]:.2f}"
                                for engine in summary["engines"].values()]))
    lines.append("")
    lines.append("failure classes (tasks):")
    for name in CLASSES:
        if any(name in engine["failures"] for engine in summary["engines"].values()):
            lines.append(row(f"  {name}", [str(engine["failures"].get(name, 0))
                                           for engine in summary["engines"].values()]))
    for engine_name, engine in summary["engines"].items():
        if engine["unwanted_acting_calls"]:
            lines.append(f"{engine_name}: acting calls not asked for in {', '.join(engine['unwanted_acting_calls'])}")
    for name, info in summary["browser_runtime"].items():
        lines.append(f"{name}: {info.get('backend')}, {info.get('threads')} thread(s), warm-up "
                     f"{info.get('warmUpSeconds', 0):.1f} s for {info.get('warmUpTokens')} prompt tokens")
    if summary["reused_runs"]:
        lines.append(f"{summary['reused_runs']} task run(s) read back from the records file and judged again")
    lines.append(f"records: {summary['records']}; {summary['seconds']:.0f} s")
    return "\n".join(lines)
