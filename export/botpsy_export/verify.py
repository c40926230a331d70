"""Check an exported graph against the PyTorch fp32 model it came from.

Figures per dtype (all logits compared are the last position of a call):
- max_abs_logit_diff: largest |onnx - torch| over every compared position;
- top1_agreement: fraction of teacher-forced positions of the chat prompt whose argmax matches;
- greedy_match: fraction of the 32 greedy tokens reproduced before the first divergence. With
  teacher forcing, the ONNX greedy run is identical to the reference up to the first argmax
  mismatch, so this equals the greedy continuation match without a second run;
- checks: the per-case max diff for prefills of 1, 7 and 300 tokens in one call followed by
  single-token decode steps, and a 300-token prompt split across two calls.

fp32 passes when every difference is within max(FP32_MAX_ABS_DIFF, FP32_TORCH_NOISE_FACTOR x
PyTorch's own disagreement between its cached and uncached runs of the same tokens): a model whose
residual stream reaches thousands (Qwen2.5-Coder-0.5B: ~2,000 from layer 3 on) cannot meet 1e-3
against itself (1.3e-3 there), while small models keep the 1e-3 bound.
"""

import math
from dataclasses import dataclass

import numpy as np
import torch

from .architectures import Architecture
from .runner import OnnxStepper

GREEDY_TOKENS = 32
PREFILL_LENGTHS = (1, 7, 300)
DECODE_STEPS = 4
SPLIT_AT = 150
FP32_MAX_ABS_DIFF = 1e-3
FP32_TORCH_NOISE_FACTOR = 4.0
PROMPT_MESSAGES = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "Name three colours of the sea and say why it changes colour."},
]
LONG_SEED = 20261130
CALIBRATION_MESSAGES = [
    {"role": "user", "content": "Summarise the plot of a detective story in two sentences, then list "
                                "the suspects as a table with their motives."},
    {"role": "assistant", "content": "A jeweller is found dead in a locked shop; the inspector discovers "
                                     "that the key was copied weeks earlier. | Suspect | Motive |"},
    {"role": "user", "content": "Now translate 'the key was copied' into French and explain the grammar."},
]


@dataclass
class Reference:
    """PyTorch fp32 logits, computed once and shared by every dtype."""

    prompt_ids: list
    greedy_ids: list
    greedy_logits: np.ndarray  # [GREEDY_TOKENS + 1, vocab]: after the prompt, then after each greedy token
    long_ids: list
    long_logits: np.ndarray  # [len(long_ids), vocab]
    torch_cached_vs_uncached: float  # max |diff|: long_ids[:1] then decode steps via HF's cache, vs long_logits


def prompt_token_ids(arch: Architecture, messages=PROMPT_MESSAGES) -> list:
    from jinja2 import Environment

    text = Environment().from_string(arch.chat_template()).render(
        messages=messages, add_generation_prompt=True, enable_thinking=False,
        bos_token=arch.tokenizer.bos_token or "", eos_token=arch.tokenizer.eos_token or "",
    )
    return arch.tokenizer(text, add_special_tokens=False)["input_ids"]


def calibration_token_ids(arch: Architecture) -> list:
    """Sequences for activation statistics; deliberately not the verification prompt."""
    return [prompt_token_ids(arch, CALIBRATION_MESSAGES)]


def build_reference(arch: Architecture, on_step=lambda: None) -> Reference:
    prompt = prompt_token_ids(arch)
    tokens, rows = list(prompt), []
    for logits in arch.reference_greedy_logits(prompt, GREEDY_TOKENS + 1):
        rows.append(logits.numpy())
        tokens.append(int(logits.argmax()))
        on_step()
    vocab = arch.config.vocab_size
    generator = np.random.default_rng(LONG_SEED)
    long_ids = generator.integers(0, vocab, max(PREFILL_LENGTHS) + DECODE_STEPS).tolist()
    long_logits = arch.reference_logits(torch.tensor([long_ids])).numpy()
    on_step()
    cached = arch.reference_cached_logits(long_ids[:1 + DECODE_STEPS], 1).numpy()
    torch_noise = float(np.abs(cached - long_logits[:1 + DECODE_STEPS]).max())
    on_step()
    return Reference(prompt, tokens[len(prompt):-1], np.stack(rows), long_ids, long_logits, torch_noise)


def verification_steps() -> int:
    """How many progress ticks `build_reference` makes."""
    return GREEDY_TOKENS + 3


def verify_graph(graph_path, arch: Architecture, reference: Reference, dtype: str) -> dict:
    stepper = OnnxStepper(graph_path, arch.state_specs())
    diffs, all_finite = [], True

    def compare(logits, expected):
        nonlocal all_finite
        all_finite = all_finite and bool(np.isfinite(logits).all())
        diff = float(np.abs(logits - expected).max())
        diffs.append(diff)
        return diff

    # Chat prompt in one call, then teacher-forced greedy tokens one by one.
    agree = []
    logits = stepper.feed(reference.prompt_ids)
    for step in range(GREEDY_TOKENS + 1):
        compare(logits, reference.greedy_logits[step])
        agree.append(int(logits.argmax()) == int(reference.greedy_logits[step].argmax()))
        if step < GREEDY_TOKENS:
            logits = stepper.feed([reference.greedy_ids[step]])
    greedy = agree[:GREEDY_TOKENS]
    first_miss = greedy.index(False) if False in greedy else GREEDY_TOKENS

    checks = {}
    for length in PREFILL_LENGTHS:
        stepper.reset()
        worst = compare(stepper.feed(reference.long_ids[:length]), reference.long_logits[length - 1])
        for offset in range(DECODE_STEPS):
            position = length + offset
            if position >= len(reference.long_ids):
                break
            logits = stepper.feed([reference.long_ids[position]])
            worst = max(worst, compare(logits, reference.long_logits[position]))
        checks[f"prefill_{length}_then_decode"] = worst
    stepper.reset()
    stepper.feed(reference.long_ids[:SPLIT_AT])
    end = max(PREFILL_LENGTHS)
    checks[f"split_{SPLIT_AT}_{end - SPLIT_AT}"] = compare(
        stepper.feed(reference.long_ids[SPLIT_AT:end]), reference.long_logits[end - 1])

    result = {
        "max_abs_logit_diff": max(diffs),
        "greedy_match": first_miss / GREEDY_TOKENS,
        "top1_agreement": sum(agree) / len(agree),
        "checks": checks,
        "finite": all_finite,
    }
    if dtype == "fp32":
        bound = max(FP32_MAX_ABS_DIFF, FP32_TORCH_NOISE_FACTOR * reference.torch_cached_vs_uncached)
        result["torch_cached_vs_uncached"] = reference.torch_cached_vs_uncached
        result["criteria"] = (f"max_abs_logit_diff <= {bound:.3g} (max of {FP32_MAX_ABS_DIFF} and "
                              f"{FP32_TORCH_NOISE_FACTOR:g} x torch_cached_vs_uncached) and greedy_match == 1.0")
        result["passed"] = bool(all_finite and result["max_abs_logit_diff"] <= bound
                                and result["greedy_match"] == 1.0)
    else:
        result["criteria"] = "report only: finite logits"
        result["passed"] = all_finite
    return {key: _rounded(value) for key, value in result.items()}


def _rounded(value):
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    return value
