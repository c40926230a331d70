"""On WebGPU (SwiftShader in headless Chromium) the model state stays on the GPU between
steps, every replaced state tensor is freed, and prefix reuse - KV cut back for tiny-llama
(SmolLM2's architecture at toy size), snapshots for the hybrid tiny-qwen3.5 - gives exactly the
tokens of a fresh run."""

import pytest

SYSTEM = "<|im_start|>system\nBe brief.<|im_end|>\n"
TURN1 = SYSTEM + "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n"
EDITED = SYSTEM + "<|im_start|>user\nName three animals.<|im_end|>\n<|im_start|>assistant\n"
GREEDY = {"maxTokens": 2, "stopOnEos": False}  # the prefill's token and one decode step: SwiftShader is slow


def load_on_gpu(runtime_page, server, exported_model, runtime_driver, name, key):
    """(generate(prompt, **options), cache entry count) for a folder loaded on WebGPU, fp32."""
    info = runtime_driver.load(runtime_page, server, exported_model(name), key=key, backend="webgpu", dtype="fp32")
    assert info["backend"] == "webgpu", info["reason"]
    assert info["cacheMode"] == "standard"  # the appending graphs are for WASM: the cache stays on the GPU
    entries = len(runtime_page.evaluate("(key) => window.clients[key].info.manifest.cache", key))

    def generate(prompt, **options):
        return runtime_driver.generate(runtime_page, prompt, key=key, **{**GREEDY, **options})

    return generate, entries


def freed_between(earlier, later):
    return later["stats"]["gpuTensorsDisposed"] - earlier["stats"]["gpuTensorsDisposed"]


def test_a_kv_cache_is_cut_back_on_the_gpu_and_gives_the_fresh_tokens(
        runtime_page, server, exported_model, runtime_driver):
    generate, entries = load_on_gpu(runtime_page, server, exported_model, runtime_driver, "tiny-llama", "kv")
    first = generate(TURN1, maxTokens=1, reusePrefix=False)
    assert first["stats"]["cacheLocations"] == {"gpu-buffer": entries}
    edited = generate(EDITED, maxTokens=2)  # shares SYSTEM and the start of the user turn: cut back
    assert edited["stats"]["reusedTokens"] > 0
    assert edited["stats"]["cacheLocations"] == {"gpu-buffer": entries}
    # the cut frees the old state, then the one decode step replaces every state tensor
    assert freed_between(first, edited) == entries * edited["stats"]["generatedTokens"]
    assert edited["tokens"] == generate(EDITED, maxTokens=2, reusePrefix=False)["tokens"]


@pytest.fixture(scope="module")
def hybrid_on_gpu(runtime_page, server, exported_model, runtime_driver):
    return load_on_gpu(runtime_page, server, exported_model, runtime_driver, "tiny-qwen3.5", "hybrid")


def test_the_hybrid_state_stays_on_the_gpu_and_replaced_tensors_are_freed(hybrid_on_gpu):
    generate, entries = hybrid_on_gpu
    before = generate(TURN1, reusePrefix=False)
    after = generate(TURN1, reusePrefix=False)
    assert after["stats"]["cacheLocations"] == {"gpu-buffer": entries}
    # The fresh run frees the previous state (entries), then each decode step after the
    # prefill replaces every state tensor (entries per step, generatedTokens - 1 steps).
    assert freed_between(before, after) == entries * after["stats"]["generatedTokens"]


def test_the_hybrid_resumes_an_edited_prompt_from_a_gpu_snapshot_with_the_fresh_tokens(hybrid_on_gpu):
    generate, entries = hybrid_on_gpu
    generate(TURN1)
    reused = generate(EDITED)
    assert reused["stats"]["reusedTokens"] > 0
    assert reused["stats"]["cacheLocations"] == {"gpu-buffer": entries}
    assert reused["tokens"] == generate(EDITED, reusePrefix=False)["tokens"]


def test_the_hybrid_continues_a_conversation_with_the_fresh_tokens(hybrid_on_gpu):
    generate, _ = hybrid_on_gpu
    first = generate(TURN1)
    turn2 = TURN1 + first["text"] + "<|im_end|>\n<|im_start|>user\nAnd one more?<|im_end|>\n<|im_start|>assistant\n"
    reused = generate(turn2)
    assert 0 < reused["stats"]["reusedTokens"] < reused["stats"]["promptTokens"]
    assert reused["tokens"] == generate(turn2, reusePrefix=False)["tokens"]
