"""Prefix reuse: a prompt that extends (or shares the start of) an earlier one computes only
the new tokens, and the generated tokens are exactly those of a fresh run.
KV-only models (tiny-llama: SmolLM2's architecture at toy size) cut their cache back; the
hybrid tiny-qwen3.5 resumes from snapshots taken at message boundaries and at prompt ends. On WASM the folders' appending
graphs run (KV buffers shared with the snapshots, copied on write); on WebGPU the standard ones."""

import pytest

SYSTEM = "<|im_start|>system\nYou are a helpful assistant. Answer briefly and precisely.<|im_end|>\n"
TURN1 = SYSTEM + "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n"
GREEDY = {"maxTokens": 8, "stopOnEos": False}


# On WebGPU the snapshots hold GPU buffers (test_webgpu_cache.py).
# q8 is what WASM recommends: its int8 activations are scaled per token, so chunking is invisible.
# WebGPU (SwiftShader here) is checked in test_webgpu_cache.py: what differs there (cache tensors
# kept on the GPU, the hybrid's GPU snapshots, edited prompts, continued conversations, KV cut-backs).
# Running this whole module on it too cost ~5 minutes of CI once tiny-qwen3.5 had the real 248k
# vocabulary; which tokens are reused is decided the same way for every backend.
CASES = [("tiny-llama", "wasm", "fp32"), ("tiny-llama", "wasm", "q8"), ("tiny-qwen3.5", "wasm", "fp32"),
         ("tiny-qwen3.5", "wasm", "q8")]


@pytest.fixture(scope="module", params=CASES, ids=["-".join(case) for case in CASES])
def model(request, runtime_page, server, exported_model, runtime_driver):
    """(generate(prompt, **options), fresh(prompt), tokenize(text)) on a loaded folder."""
    name, backend, dtype = request.param
    info = runtime_driver.load(runtime_page, server, exported_model(name), backend=backend, dtype=dtype)
    assert (info["backend"], info["dtype"]) == (backend, dtype)
    assert info["cacheMode"] == ("appending" if backend == "wasm" else "standard")

    def generate(prompt, **options):
        return runtime_driver.generate(runtime_page, prompt, **{**GREEDY, **options})

    def fresh(prompt):
        return generate(prompt, reusePrefix=False)

    def tokenize(text):
        return runtime_page.evaluate("(text) => window.clients.model.tokenize(text)", text)

    return generate, fresh, tokenize


def test_continuing_a_conversation_reuses_the_processed_prefix(model):
    generate, fresh, tokenize = model
    first = generate(TURN1)
    turn2 = TURN1 + first["text"] + "<|im_end|>\n<|im_start|>user\nAnd three more?<|im_end|>\n<|im_start|>assistant\n"
    reused = generate(turn2)
    # at least up to the last message boundary of turn 1 (generated text may re-tokenize differently)
    before_last_message = TURN1[:TURN1.rindex("<|im_start|>")]
    assert reused["stats"]["reusedTokens"] >= len(tokenize(before_last_message))
    assert reused["stats"]["reusedTokens"] < reused["stats"]["promptTokens"]
    assert reused["tokens"] == fresh(turn2)["tokens"]


def test_a_prompt_that_diverges_inside_the_last_message_resumes_at_or_before_it(model):
    generate, fresh, tokenize = model
    generate(TURN1)
    edited = SYSTEM + "<|im_start|>user\nName three animals.<|im_end|>\n<|im_start|>assistant\n"
    reused = generate(edited)
    assert reused["stats"]["reusedTokens"] >= len(tokenize(SYSTEM))
    assert reused["tokens"] == fresh(edited)["tokens"]


def test_the_same_prompt_twice_gives_the_same_tokens(model):
    generate, _, _ = model
    once = generate(TURN1)
    again = generate(TURN1)
    assert again["stats"]["reusedTokens"] > 0
    assert again["tokens"] == once["tokens"]


def test_token_id_prompts_and_text_prompts_share_the_state(model):
    generate, fresh, tokenize = model
    ids = tokenize(TURN1)
    by_text = generate(TURN1)
    extended = ids + by_text["tokens"][:3]
    by_ids = generate(extended)
    assert by_ids["stats"]["reusedTokens"] >= len(ids)
    assert by_ids["tokens"] == fresh(extended)["tokens"]


def test_a_fresh_run_reuses_nothing(model):
    generate, fresh, _ = model
    generate(TURN1)
    assert fresh(TURN1)["stats"]["reusedTokens"] == 0


def test_resuming_a_conversation_after_an_edited_prompt_gives_the_fresh_tokens_and_logits(
        model, runtime_page, runtime_driver):
    # The edit resumes early (hybrid: from the snapshot after SYSTEM) and writes over
    # positions that turn 1's later snapshots still cover; turn 2 then resumes from one of
    # those, which must still hold turn 1 (appending mode: copy-on-write of the KV buffers).
    generate, _, tokenize = model
    first = generate(TURN1)
    edited = SYSTEM + "<|im_start|>user\nName three animals.<|im_end|>\n<|im_start|>assistant\n"
    generate(edited, maxTokens=12)
    turn2 = TURN1 + first["text"] + "<|im_end|>\n<|im_start|>user\nAnd three more?<|im_end|>\n<|im_start|>assistant\n"
    reused = runtime_driver.generate_keeping_logits(runtime_page, turn2, "reused", **GREEDY)
    fresh = runtime_driver.generate_keeping_logits(runtime_page, turn2, "fresh", **GREEDY, reusePrefix=False)
    # hybrid: a turn-1 snapshot past SYSTEM; KV-only: the prefix shared with the edited prompt
    assert reused["stats"]["reusedTokens"] > len(tokenize(SYSTEM))
    assert reused["tokens"] == fresh["tokens"]
    assert runtime_driver.max_logit_diff(runtime_page, "reused", "fresh") < 1e-3


def test_a_prefilled_prompt_start_is_reused_by_the_next_generate(model, runtime_page):
    generate, fresh, tokenize = model
    generate("<|im_start|>user\nSomething else entirely.<|im_end|>\n", maxTokens=1)  # another prefix first
    prefilled = runtime_page.evaluate("(prompt) => window.clients.model.prefill(prompt)", SYSTEM)
    assert prefilled["promptTokens"] == len(tokenize(SYSTEM)) and not prefilled["cancelled"]
    reused = generate(TURN1)
    assert reused["stats"]["reusedTokens"] >= prefilled["promptTokens"] - 1
    assert reused["tokens"] == fresh(TURN1)["tokens"]
