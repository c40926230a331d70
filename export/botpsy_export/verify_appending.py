"""Check an appending graph against the standard graph of the same dtype, both in onnxruntime.

The appending graph is driven as web/runtime drives it on WASM (`runner.AppendingStepper`:
the processed positions fed as the past, the returned new positions appended), the standard
graph as transformers.js does (present fed back as the past). The prompt is fed in two calls,
then GREEDY_STEPS tokens one by one. Both graphs run the same nodes on the same inputs (the
appending graph only returns the Concat's new part instead of the Concat), so for every dtype,
q8 included, the logits must agree to float identity and the greedy tokens must be the same.

The appending graph's `num_logits` input is checked too: after the prompt's first half, one call
of the second half and the greedy tokens, scoring all of them, is compared row by row with the
calls above, which scored one position each (the runtime checks guessed tokens this way).
In onnxruntime-web (WASM) those are the same bits (the attention's softmax sums in key order,
blocks.softmax_in_key_order; tests/runtime/test_draft_decoding.py). Native onnxruntime's x86
kernels round differently for a call of 1 and of 9 positions (~1e-5 in fp32), which q8's
per-token int8 rounding magnifies (logits up to ~1.4 apart on SmolLM2). So here the rows must
pick the same greedy token, at least ONE_CALL_MIN_AGREEMENT of them (a graph scoring the wrong
positions agrees on next to none); the difference is reported.
"""

import numpy as np

from .runner import AppendingStepper, OnnxStepper

GREEDY_STEPS = 8
MAX_ABS_LOGIT_DIFF = 1e-6
ONE_CALL_MIN_AGREEMENT = 0.75


def _calls(prompt_ids) -> list:
    split = max(1, len(prompt_ids) // 2)
    return [list(prompt_ids[:split])] + ([list(prompt_ids[split:])] if len(prompt_ids) > split else [])


def _run(stepper, calls) -> tuple[list, list]:
    """Feed the calls, then GREEDY_STEPS greedy tokens one by one; the logits of each call and the tokens."""
    logits, tokens = [], []
    for step in range(len(calls) + GREEDY_STEPS):
        logits.append(stepper.feed(calls[step] if step < len(calls) else [tokens[-1]]))
        if step >= len(calls) - 1:
            tokens.append(int(logits[-1].argmax()))
    return logits, tokens


def verify_appending_graph(standard_path, appending_path, state_specs, prompt_ids, dtype: str) -> dict:
    """Figures and a pass/fail for one dtype's appending graph (see the module docstring)."""
    # One session at a time: each holds a copy of the weights (3 GB for fp32 at 0.8B).
    calls = _calls(prompt_ids)
    standard_logits, standard_tokens = _run(OnnxStepper(standard_path, state_specs), calls)
    appending = AppendingStepper(appending_path, state_specs)
    appending_logits, tokens = _run(appending, calls)
    diff = max(float(np.abs(row - expected).max()) for row, expected in zip(appending_logits, standard_logits))
    scored = _score_in_one_call(appending_path, state_specs, calls, tokens)
    singles = np.stack(appending_logits[len(calls) - 1:len(calls) - 1 + len(scored)])
    multi_diff = float(np.abs(scored - singles).max())
    agreement = float(np.mean(scored.argmax(-1) == singles.argmax(-1)))
    passed = tokens == standard_tokens and np.isfinite(diff) and diff <= MAX_ABS_LOGIT_DIFF and \
        np.isfinite(multi_diff) and agreement >= ONE_CALL_MIN_AGREEMENT
    return {
        "max_abs_logit_diff": _rounded(diff),
        "greedy_tokens_equal": tokens == standard_tokens,
        "calls": len(appending_logits),
        "final_length": appending.length,
        "positions_scored_in_one_call": len(scored),
        "one_call_max_abs_logit_diff": _rounded(multi_diff),
        "one_call_greedy_agreement": agreement,
        "criteria": f"{dtype}: same greedy tokens and max_abs_logit_diff <= {MAX_ABS_LOGIT_DIFF} "
                    "(the same nodes on the same inputs); positions scored in one call (num_logits) pick "
                    f"the greedy token of one call each on >= {ONE_CALL_MIN_AGREEMENT:.0%} of them",
        "passed": bool(passed),
    }


def _rounded(value: float) -> float:
    return float(f"{value:.6g}") if np.isfinite(value) else value


def _score_in_one_call(appending_path, state_specs, calls, tokens) -> np.ndarray:
    """From one call scoring GREEDY_STEPS + 1 positions: the logits at the prompt's last token
    and at each greedy token after it ([GREEDY_STEPS + 1, vocab])."""
    stepper = AppendingStepper(appending_path, state_specs)
    for call in calls[:-1]:
        stepper.feed(call)
    fed = list(calls[-1]) + tokens[:GREEDY_STEPS]
    return stepper.feed_scoring(fed, GREEDY_STEPS + 1)
