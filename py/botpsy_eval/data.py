"""The Berkeley Function Calling Leaderboard's single-turn cases, read from the `bfcl-eval` package.

The data is BFCL's own (PyPI `bfcl-eval`, Apache-2.0), installed without its dependencies
(`pip install --no-deps bfcl-eval==2026.3.23`: a normal install pins numpy 1.26 and pulls
dozens of provider SDKs). Only its data files are read, with importlib.resources:
`bfcl_eval/data/BFCL_v4_<category>.json` (one case per line: `id`, `question` = turns of
messages, `function` = BFCL function docs) and `bfcl_eval/data/possible_answer/` (per call,
parameter -> accepted values; `""` among them means the parameter may be left out).
"""

from __future__ import annotations

import importlib.resources
import json
import random
from dataclasses import dataclass

DATA_PACKAGE = "bfcl-eval"
DATA_VERSION = "2026.3.23"
INSTALL_COMMAND = f".venv/bin/python -m pip install --no-deps {DATA_PACKAGE}=={DATA_VERSION}"

# Single-turn categories scored on the calls' syntax trees, in BFCL's order.
CATEGORIES = (
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "live_relevance",
)
# No call is the right answer here; in live_relevance any call is.
NO_CALL_CATEGORIES = ("irrelevance", "live_irrelevance")
ANY_CALL_CATEGORIES = ("live_relevance",)
# Conversations over stateful tool environments: their own loader, runner and checker (multi_turn/).
MULTI_TURN_CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                         "multi_turn_long_context")


class BfclDataError(RuntimeError):
    """The BFCL data is missing or not what this version of the loader reads."""


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    messages: list[dict]          # the one turn: system / user / assistant messages
    functions: list[dict]         # BFCL function docs (BFCL types: dict, float, tuple, any...)
    possible_answer: list | None  # [{function name: {parameter: [accepted values]}}], None when no answer file


def _data_root():
    try:
        return importlib.resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        raise BfclDataError(
            f"the BFCL data is not installed: the Python package {DATA_PACKAGE!r} is missing. "
            f"Install it without its dependencies: {INSTALL_COMMAND} "
            "(./run.sh test and ./run.sh demo do this for you)") from None


def _read_lines(path) -> list[dict]:
    if not path.is_file():
        raise BfclDataError(f"{DATA_PACKAGE} has no {path.name}: this loader reads the layout of "
                            f"{DATA_PACKAGE}=={DATA_VERSION} ({INSTALL_COMMAND})")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check_categories(names, known=CATEGORIES, kind: str = "BFCL") -> list[str]:
    """The names as a list, or ValueError naming those not in `known` (the `kind` of categories)."""
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"unknown {kind} categor{'y' if len(unknown) == 1 else 'ies'} "
                         f"{', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    return list(names)


def load_category(category: str) -> list[Case]:
    """Every case of one category, in the file's order."""
    check_categories([category])
    root = _data_root()
    entries = _read_lines(root / f"BFCL_v4_{category}.json")
    answers = {}
    if category not in NO_CALL_CATEGORIES + ANY_CALL_CATEGORIES:
        answers = {entry["id"]: entry["ground_truth"]
                   for entry in _read_lines(root / "possible_answer" / f"BFCL_v4_{category}.json")}
    cases = []
    for entry in entries:
        if len(entry["question"]) != 1:
            raise BfclDataError(f"{entry['id']}: {len(entry['question'])} turns in a single-turn category")
        if answers and entry["id"] not in answers:
            raise BfclDataError(f"{entry['id']} has no possible answer in {DATA_PACKAGE}")
        cases.append(Case(entry["id"], category, entry["question"][0], entry["function"],
                          answers.get(entry["id"])))
    return cases


def sample_cases(cases: list[Case], limit: int | None, seed: int) -> list[Case]:
    """A fixed, seeded sample of `limit` cases (all when None), in the file's order: the same
    seed gives the same cases for every category, model and dtype, so runs compare like with like.
    Samples nest: the cases of a smaller --limit are among those of a larger one (the sample is
    the head of one seeded shuffle), so a resumed run can grow a table case by case."""
    if limit is None or limit >= len(cases):
        return list(cases)
    if limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    category = cases[0].category if cases else ""
    order = list(range(len(cases)))
    random.Random(f"{seed}:{category}").shuffle(order)
    chosen = set(order[:limit])
    return [case for index, case in enumerate(cases) if index in chosen]


def load_cases(categories, limit: int | None = None, seed: int = 0) -> list[Case]:
    return [case for category in check_categories(categories)
            for case in sample_cases(load_category(category), limit, seed)]
