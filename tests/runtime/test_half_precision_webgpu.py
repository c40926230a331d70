"""fp16 and q4f16 folders in the browser. onnxruntime-web's WebGPU EP needs the adapter's
shader-f16 for fp16 kernels; headless Chromium's only adapter (SwiftShader) lacks it. So an
f16 dtype runs on WebGPU only where the adapter has shader-f16, falls back to WASM (which runs
fp16 graphs) otherwise, and in both cases generates what onnxruntime in Python generates."""

import json
from pathlib import Path

import pytest

from botpsy_web.verify_browser import DEFAULT_PROMPTS, verify_in_page

HALF_DTYPES = ("fp16", "q4f16")
EXPORTED_DTYPES = ("fp32", "q4") + HALF_DTYPES
MODEL = "tiny-qwen3.5"

ADAPTER_HAS_F16 = """
async () => {
  const adapter = await navigator.gpu?.requestAdapter();
  return Boolean(adapter?.features.has("shader-f16"));
}
"""

# Runs the f16 graph straight on onnxruntime-web's WebGPU EP, bypassing web/runtime's checks.
RAW_WEBGPU_RUN = """
async ({url, dataUrls, cache}) => {
  const {loadOrt} = await import("/web/runtime/model/ort-loader.js");
  const ort = await loadOrt("webgpu");
  // the graph's weights are in external data files, fetched by onnxruntime-web from their URLs
  const externalData = dataUrls.map((data) => ({path: data.slice(data.lastIndexOf("/") + 1), data}));
  const session = await ort.InferenceSession.create(url, {executionProviders: ["webgpu"], externalData});
  const ids = (values) => new ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), [1, values.length]);
  const feeds = {input_ids: ids([5, 7]), attention_mask: ids([1, 1])};
  if (session.inputNames.includes("position_ids")) feeds.position_ids = ids([0, 1]);
  for (const entry of cache) {
    const size = entry.shape.reduce((a, b) => a * b, 1);
    feeds[entry.input] = new ort.Tensor("float32", new Float32Array(size), entry.shape);
  }
  try {
    const logits = (await session.run(feeds)).logits.data;
    return {finite: logits.every(Number.isFinite)};
  } catch (error) {
    return {error: String(error.message ?? error)};
  } finally {
    await session.release();
  }
}
"""


@pytest.fixture(scope="module")
def half_folder(exported_model) -> Path:
    """tiny-qwen3.5 with fp32, q4, fp16 and q4f16 (the same folder tests/export's half-precision tests use)."""
    return exported_model(MODEL, EXPORTED_DTYPES)


@pytest.fixture(scope="module")
def adapter_has_f16(runtime_page):
    return runtime_page.evaluate(ADAPTER_HAS_F16)


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_an_f16_dtype_runs_where_the_adapter_allows_and_matches_onnxruntime(runtime_page, server, half_folder,
                                                                              adapter_has_f16, dtype):
    agreement, info = verify_in_page(runtime_page, server, half_folder, "auto", dtype, DEFAULT_PROMPTS[:2], 8)
    assert info["dtype"] == dtype
    if adapter_has_f16:
        assert info["backend"] == "webgpu", info["reason"]
        assert agreement.token_agreement >= 0.75, agreement.prompts  # GPU fp16 arithmetic may flip near-ties
    else:
        assert info["backend"] == "wasm"
        assert "lacks shader-f16" in info["reason"], info["reason"]
        assert agreement.token_agreement == 1.0, agreement.prompts
        assert agreement.max_abs_logit_diff < 1e-2, agreement.prompts


def test_webgpu_asked_for_fp16_on_an_adapter_without_shader_f16_says_so(runtime_page, server, half_folder,
                                                                       adapter_has_f16, runtime_driver):
    if adapter_has_f16:
        info = runtime_driver.load(runtime_page, server, half_folder, key="f16", backend="webgpu", dtype="fp16")
        assert info["backend"] == "webgpu"
    else:
        with pytest.raises(Exception, match='lacks shader-f16, which dtype fp16 needs; load with backend "wasm"'):
            runtime_driver.load(runtime_page, server, half_folder, key="f16", backend="webgpu", dtype="fp16")


def test_auto_on_a_folder_with_f16_dtypes_generates_on_webgpu_with_a_dtype_the_adapter_runs(
        runtime_page, server, half_folder):
    manifest = json.loads((half_folder / "manifest.json").read_text())
    # one load, with no backend or dtype named; the reference runs the dtype it picked
    agreement, info = verify_in_page(runtime_page, server, half_folder, "auto", None, DEFAULT_PROMPTS[:1], 4)
    assert info["backend"] == "webgpu", info["reason"]
    assert info["dtype"] == manifest["recommended_dtype"]["webgpu"]
    assert "shader-f16" not in manifest["dtypes"][info["dtype"]]["requires"]
    assert agreement.token_agreement == 1.0, agreement.prompts


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_onnxruntime_web_webgpu_needs_shader_f16_for_f16_graphs(runtime_page, server, half_folder,
                                                               adapter_has_f16, dtype):
    """Why the manifest says `requires: ["shader-f16"]`: without it the WebGPU EP fails at the first run."""
    manifest = json.loads((half_folder / "manifest.json").read_text())
    spec = manifest["dtypes"][dtype]
    folder_url = f"{server}/models/{half_folder.name}"
    data_urls = [f"{folder_url}/{path}" for path in spec["files"] if path != spec["file"]]
    result = runtime_page.evaluate(RAW_WEBGPU_RUN, {"url": f"{folder_url}/{spec['file']}", "dataUrls": data_urls,
                                                    "cache": manifest["cache"]})
    if adapter_has_f16:
        assert result == {"finite": True}
    else:
        assert "requires f16 but the device does not support it" in result.get("error", ""), result
