"""BFCL v4's multi-turn cases, read from the installed `bfcl-eval` package (CPython only).

`bfcl_eval/data/BFCL_v4_multi_turn_<category>.json` (one case per line): `id`, `question`
(one list of messages per user turn; an empty list where a held-out function arrives),
`initial_config` (class name -> the state its `_load_scenario` starts from),
`involved_classes`, and in miss_func `missed_function` (turn index -> function names held
out until that turn). The function docs are every involved class's file in
`data/multi_turn_func_doc/`; `data/possible_answer/` holds the ground truth (per turn, the
calls as Python source).

The case is prepared the way BFCL's own inference prepares it (bfcl_eval.utils
`populate_test_cases_with_predefined_functions` and the base handler's multi-turn loop):
the held-out functions are taken out of the docs and offered again at their turn, whose
user message is BFCL's DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC. BFCL 2026.3.23 reads
no other field (`path` and `excluded_function` are not used by its inference or checker).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..data import (DATA_PACKAGE, INSTALL_COMMAND, MULTI_TURN_CATEGORIES, BfclDataError, _data_root, _read_lines,
                    check_categories, sample_cases)


@dataclass(frozen=True)
class MultiTurnCase:
    id: str
    category: str
    turns: list[list[dict]]           # per user turn: its messages (held-out turns: BFCL's prompt)
    initial_config: dict              # class name -> its scenario
    involved_classes: list[str]
    functions: list[dict]             # the function docs offered from the first turn
    added_functions: dict[int, list]  # turn index -> docs offered from that turn on (miss_func)
    ground_truth: list[list[str]]     # per turn: the calls as Python source

    @property
    def long_context(self) -> bool:
        """BFCL loads long-context scenarios (extra files, messages, ...) for these: utils' rule."""
        return "long_context" in self.category or "composite" in self.category

    def for_the_agent(self) -> dict:
        """What the conversation needs (conversation.run_conversation), as plain JSON: the agent
        worker gets exactly this."""
        return {"id": self.id, "category": self.category, "turns": self.turns,
                "initial_config": self.initial_config, "involved_classes": self.involved_classes,
                "long_context": self.long_context, "functions": self.functions,
                "added_functions": {str(turn): docs for turn, docs in self.added_functions.items()}}

    def checker_entry(self) -> dict:
        """The test entry BFCL's multi_turn_checker reads."""
        return {"id": self.id, "initial_config": self.initial_config, "involved_classes": self.involved_classes}


def bfcl_constants():
    """BFCL's constants the multi-turn inference uses (modules that import nothing heavy)."""
    from bfcl_eval.constants import default_prompts, executable_backend_config

    return default_prompts, executable_backend_config


def function_docs(class_name: str) -> list[dict]:
    _, backend = bfcl_constants()
    file_name = backend.MULTI_TURN_FUNC_DOC_FILE_MAPPING.get(class_name)
    if file_name is None:
        raise BfclDataError(f"{DATA_PACKAGE} has no function docs for class {class_name!r}")
    return _read_lines(_data_root() / "multi_turn_func_doc" / file_name)


def check_multi_turn_categories(names) -> list[str]:
    return check_categories(names, MULTI_TURN_CATEGORIES, "multi-turn")


def _prepare(entry: dict, category: str, ground_truth: list, docs_by_class: dict) -> MultiTurnCase:
    prompts, _ = bfcl_constants()
    functions = [doc for class_name in entry["involved_classes"] for doc in docs_by_class[class_name]]
    added: dict[int, list] = {}
    turns = [list(messages) for messages in entry["question"]]
    for turn_text, names in entry.get("missed_function", {}).items():
        turn = int(turn_text)
        held_out = [doc for doc in functions if doc["name"] in names]
        if len(held_out) != len(names):
            raise BfclDataError(f"{entry['id']}: held-out functions {names} are not all in the docs of "
                                f"{entry['involved_classes']}")
        if turns[turn]:
            raise BfclDataError(f"{entry['id']}: turn {turn} adds functions but also has a user message")
        functions = [doc for doc in functions if doc["name"] not in names]
        added[turn] = held_out
        turns[turn] = [{"role": "user", "content": prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC}]
    if len(ground_truth) != len(turns):
        raise BfclDataError(f"{entry['id']}: {len(turns)} turns but {len(ground_truth)} ground-truth turns")
    for index, messages in enumerate(turns):
        if not messages or messages[-1].get("role") != "user":
            raise BfclDataError(f"{entry['id']}: turn {index} does not end with a user message")
    return MultiTurnCase(entry["id"], category, turns, entry["initial_config"], list(entry["involved_classes"]),
                         functions, added, ground_truth)


def load_category(category: str) -> list[MultiTurnCase]:
    """Every case of one multi-turn category, in the file's order."""
    check_multi_turn_categories([category])
    root = _data_root()
    entries = _read_lines(root / f"BFCL_v4_{category}.json")
    answers = {entry["id"]: entry["ground_truth"]
               for entry in _read_lines(root / "possible_answer" / f"BFCL_v4_{category}.json")}
    docs_by_class = {}
    for entry in entries:
        for class_name in entry["involved_classes"]:
            if class_name not in docs_by_class:
                docs_by_class[class_name] = function_docs(class_name)
    cases = []
    for entry in entries:
        if entry["id"] not in answers:
            raise BfclDataError(f"{entry['id']} has no possible answer in {DATA_PACKAGE} ({INSTALL_COMMAND})")
        cases.append(_prepare(entry, category, answers[entry["id"]], docs_by_class))
    return cases


def load_cases(categories, limit: int | None = None, seed: int = 0) -> list[MultiTurnCase]:
    """The seeded sample of every category (data.sample_cases: the same rule as single-turn)."""
    return [case for category in check_multi_turn_categories(categories)
            for case in sample_cases(load_category(category), limit, seed)]


def case_json(case: MultiTurnCase) -> str:
    return json.dumps(case.for_the_agent(), ensure_ascii=False)
