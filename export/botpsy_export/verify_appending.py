"""Check an appending graph against the standard graph of the same dtype, both in onnxruntime.

The appending graph is driven as web/runtime drives it on WASM (`runner.AppendingStepper`:
the processed positions fed as the past, the returned new positions appended), the standard
graph as transformers.js does (present fed back as the past). The prompt is fed in two calls,
then GREEDY_STEPS tokens one by one. Both graphs run the same nodes on the same inputs (the
appending graph only returns the Concat's new part instead of the Concat), so for every dtype,
q8 included, the logits must agree to float identity and the greedy tokens must be the same.
"""

import numpy as np

from .runner import AppendingStepper, OnnxStepper

GREEDY_STEPS = 8
MAX_ABS_LOGIT_DIFF = 1e-6


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
    return {
        "max_abs_logit_diff": float(f"{diff:.6g}") if np.isfinite(diff) else diff,
        "greedy_tokens_equal": tokens == standard_tokens,
        "calls": len(appending_logits),
        "final_length": appending.length,
        "criteria": f"{dtype}: same greedy tokens and max_abs_logit_diff <= {MAX_ABS_LOGIT_DIFF} "
                    "(the same nodes on the same inputs)",
        "passed": bool(tokens == standard_tokens and np.isfinite(diff) and diff <= MAX_ABS_LOGIT_DIFF),
    }
