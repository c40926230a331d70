"""Greedy generation in the browser (web/runtime) matches onnxruntime in Python, token for
token, for both test architectures, on WASM (the folders' appending graphs) and on WebGPU
(SwiftShader in headless Chromium, the standard graphs). The reference runs the standard graph.
On WebGPU the KV-cache architecture is tiny-llama (SmolLM2's, at toy size): SwiftShader runs
SmolLM2's 135M parameters at seconds a token, and the graph's operators are the same."""

import pytest

from botpsy_web.verify_browser import DEFAULT_PROMPTS, verify_in_page

CASES = [
    ("tiny-qwen3.5", "wasm", DEFAULT_PROMPTS, 16),
    ("smollm2-135m", "wasm", DEFAULT_PROMPTS, 16),
    ("tiny-qwen3.5", "webgpu", DEFAULT_PROMPTS[:2], 6),  # SwiftShader: ~1.5-3 s a token at the 248k vocab
    ("tiny-llama", "webgpu", DEFAULT_PROMPTS[:2], 6),
]


@pytest.mark.parametrize("model_name, backend, prompts, steps", CASES,
                         ids=[f"{name}-{backend}" for name, backend, _, _ in CASES])
def test_fp32_greedy_tokens_match_onnxruntime_python(runtime_page, server, exported_model, runtime_driver,
                                                     model_name, backend, prompts, steps):
    folder = exported_model(model_name)
    agreement, info = verify_in_page(runtime_page, server, folder, backend, "fp32", prompts, steps)
    assert info["backend"] == backend, info["reason"]
    if backend == "wasm":  # verify_in_page does not say which graph ran: the same load again does
        assert runtime_driver.load(runtime_page, server, folder, backend="wasm")["cacheMode"] == "appending"
    assert agreement.token_agreement == 1.0, agreement.prompts
    assert agreement.max_abs_logit_diff < 1e-2, agreement.prompts
