"""What the single-turn and the multi-turn reports are both built from: runs grouped into
columns (engine, dtype, tool-call mode), a value per column nested as the JSON summaries nest
it, per-category accuracy, and the table with a row per category and per measure.

A run here is anything with engine, dtype, tool_calls, category and correct (runner.CaseRun,
multi_turn.runner.MultiTurnRun); a column's keys are ("browser", dtype, mode) or ("pytorch", mode).
"""

from __future__ import annotations

import statistics
from collections import defaultdict


def engine_keys(run) -> tuple:
    return ("browser", run.dtype, run.tool_calls) if run.engine == "browser" else ("pytorch", run.tool_calls)


def group_by_column(runs) -> dict[tuple, list]:
    groups = defaultdict(list)
    for run in runs:
        groups[engine_keys(run)].append(run)
    return groups


def cases_per_category(cases) -> dict[str, int]:
    counts = defaultdict(int)
    for case in cases:
        counts[case.category] += 1
    return dict(counts)


def nested(groups: dict, value_of) -> dict:
    out: dict = {}
    for keys, runs in groups.items():
        target = out
        for key in keys[:-1]:
            target = target.setdefault(key, {})
        target[keys[-1]] = value_of(runs)
    return out


def accuracy(runs) -> dict:
    by_category = defaultdict(list)
    for run in runs:
        by_category[run.category].append(run.correct)
    scores = {category: round(sum(values) / len(values), 4) for category, values in by_category.items()}
    scores["overall"] = round(statistics.mean(scores.values()), 4) if scores else 0.0
    return scores


def run_settings(results) -> dict:
    """The summary's first keys: what was run, and how."""
    settings = results.settings
    return {"model": results.model, "backend": settings.backend, "seed": settings.seed, "limit": settings.limit,
            "max_tokens": settings.max_tokens}


def lookup(tree: dict, keys: tuple):
    for key in keys:
        tree = tree[key]
    return tree


class ColumnTable:
    """A summary as text: a column per engine (browser dtype and mode, then PyTorch), a row per
    category, then a row per measure; labels as wide as the widest of the categories,
    "category" and the given wide_labels."""

    def __init__(self, summary: dict, wide_labels: tuple[str, ...] = ()):
        self.columns = [(f"{dtype} {mode}", ("browser", dtype, mode))
                        for dtype, modes in summary["accuracy"].get("browser", {}).items() for mode in modes]
        if "pytorch" in summary["accuracy"]:
            self.columns.append(("pytorch", ("pytorch", "free")))
        self.width = max([len("category"), *map(len, wide_labels)] + [len(category) for category in summary["cases"]])
        self.cell = max([11] + [len(label) + 1 for label, _ in self.columns])

    def row(self, label: str, count, cells) -> str:
        return f"{label:<{self.width}} {count:>5} " + "".join(f"{cell:>{self.cell}}" for cell in cells)

    def accuracy_and_measures(self, summary: dict, measures) -> list[str]:
        """The head row, a row per category, then one per (label, summary key, how to show a value)
        in measures; the "accuracy" measure counts every case."""
        lines = [self.row("category", "cases", [label for label, _ in self.columns])]
        for category, count in summary["cases"].items():
            lines.append(self.row(category, count, [f"{lookup(summary['accuracy'], keys).get(category, 0.0):.3f}"
                                                    for _, keys in self.columns]))
        total = sum(summary["cases"].values())
        for label, key, show in measures:
            lines.append(self.row(label, total if key == "accuracy" else "",
                                  [show(lookup(summary[key], keys)) for _, keys in self.columns]))
        return lines
