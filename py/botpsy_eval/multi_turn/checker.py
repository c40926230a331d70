"""A multi-turn transcript scored by BFCL's own checker (CPython).

`bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker` imports only multi_turn_utils and
BFCL's backend constants, so it is imported as published and nothing is stubbed. It replays
the model's calls from the case's initial_config in fresh instances of the same classes and,
after every turn that has a ground truth, wants the same state as the ground truth's calls
and every ground-truth result among the model's results so far.

What it is given follows BFCL 2026.3.23's eval_runner (`_evaluate_single_multi_turn_entry`,
which cannot be imported without BFCL's model handlers): a conversation that stopped before
its last turn (force-quit, a failed generation) fails as "force_terminated"; per turn, each
step's calls as Python call source (`name(key=repr(value), ...)`, what BFCL's decoders
produce), steps without calls left out. Our calls are those that ran in the environment
(conversation.executed_calls): the agent never runs a call it could not parse or whose
arguments break the schema, so the replay sees the state the model saw.

BFCL's multi_turn_irrelevance_checker (no call in a turn whose ground truth is empty: the
miss_func / miss_param turns) is imported by its eval_runner but not applied to the score
in this release; we report its verdict beside the score, not in it.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from .conversation import executed_calls
from .data import MultiTurnCase


@dataclass(frozen=True)
class MultiTurnVerdict:
    correct: bool
    error_type: str = ""         # BFCL's ("multi_turn:instance_state_mismatch", ...) or ours ("generation_failed")
    reason: str = ""             # BFCL's error message
    no_call_turns_ok: bool = True  # multi_turn_irrelevance_checker's verdict (reported, not scored)


def call_source(name: str, arguments: dict) -> str:
    """One call as BFCL's decoders write it (model_handler.utils: `key=repr(value)`)."""
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def decoded_turns(transcript: dict) -> list[list[list[str]]]:
    return [[[call_source(call["name"], call["arguments"]) for call in step] for step in turn if step]
            for turn in executed_calls(transcript)]


def score_transcript(case: MultiTurnCase, transcript: dict) -> MultiTurnVerdict:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker, multi_turn_utils

    if transcript.get("error"):
        return MultiTurnVerdict(False, "generation_failed", transcript["error"])
    decoded = decoded_turns(transcript)
    if len(decoded) != len(case.ground_truth):
        return MultiTurnVerdict(False, "multi_turn:force_terminated",
                                f"Model was force-terminated during inference phase. The length of the model result "
                                f"turns ({len(decoded)}) does not match the length of the ground truth turns "
                                f"({len(case.ground_truth)}).")
    # The checker keeps its instances in multi_turn_utils' globals under the model's name: a
    # fresh name per check starts from the initial_config, and its instances are dropped after.
    model_name = f"botpsy_check_{uuid.uuid4().hex}"
    try:
        result = multi_turn_checker.multi_turn_checker(decoded, case.ground_truth, case.checker_entry(),
                                                       case.category, model_name)
        no_calls = multi_turn_checker.multi_turn_irrelevance_checker(decoded, case.ground_truth)
    finally:
        prefix = re.sub(r"[-./:]", "_", model_name)
        for name in [name for name in vars(multi_turn_utils) if name.startswith(prefix)]:
            delattr(multi_turn_utils, name)
    return MultiTurnVerdict(bool(result["valid"]), result.get("error_type", ""), result.get("error_message", ""),
                            bool(no_calls["valid"]))
