"""Backend choice: WebGPU when an adapter exists (SwiftShader here), WASM otherwise, and the
reason is reported in words; WASM runs 2 threads on a cross-origin-isolated page."""

import pytest

from botpsy_web.verify_browser import CHROMIUM_ARGS, CHROMIUM_PATH, open_harness


@pytest.fixture(scope="module")
def browser_without_webgpu(browser_type):
    browser = browser_type.launch(executable_path=CHROMIUM_PATH,
                                  args=[arg for arg in CHROMIUM_ARGS if arg != "--enable-unsafe-webgpu"])
    yield browser
    browser.close()


@pytest.fixture
def page_without_webgpu(browser_without_webgpu, open_guarded_page, server):
    context, page, guard = open_guarded_page(browser_without_webgpu)
    page.set_default_timeout(300_000)
    open_harness(page, server)
    yield page
    context.close()
    guard.assert_clean()


def test_without_webgpu_auto_falls_back_to_wasm_and_says_why(page_without_webgpu, server, exported_model, runtime_driver):
    folder = exported_model("tiny-qwen3.5")
    info = runtime_driver.load(page_without_webgpu, server, folder, backend="auto", dtype=None)
    assert info["backend"] == "wasm"
    assert info["threads"] == 2
    assert info["reason"].startswith("WebGPU unavailable")
    assert "using WASM, 2 threads" in info["reason"]
    manifest = info_manifest_recommendation(page_without_webgpu)
    assert info["dtype"] == manifest["wasm"]
    result = runtime_driver.generate(page_without_webgpu, "Hello", maxTokens=3, stopOnEos=False)
    assert result["stats"]["generatedTokens"] == 3


def test_asking_for_webgpu_without_it_is_an_error_that_says_what_to_do(page_without_webgpu, server, exported_model):
    folder = exported_model("tiny-qwen3.5")
    message = page_without_webgpu.evaluate("""async (url) => {
      const client = new window.botpsyRuntime.ModelClient();
      try { await client.load(url, {backend: "webgpu"}); return "loaded"; }
      catch (e) { return e.message; } finally { client.terminate(); }
    }""", f"{server}/models/{folder.name}/")
    assert "WebGPU unavailable" in message
    assert 'backend "wasm"' in message


def test_with_an_adapter_auto_picks_webgpu_and_names_it(runtime_page, server, exported_model, runtime_driver):
    folder = exported_model("tiny-qwen3.5")
    info = runtime_driver.load(runtime_page, server, folder, key="auto", backend="auto", dtype="fp32")
    assert info["backend"] == "webgpu"
    assert "swiftshader" in info["reason"].lower()
    assert info["stages"][-1] == "ready"
    result = runtime_driver.generate(runtime_page, "Hello", key="auto", maxTokens=3, stopOnEos=False)
    assert result["stats"]["generatedTokens"] == 3
    runtime_page.evaluate("() => window.clients.auto.unload()")
    after_unload = runtime_page.evaluate("""async () => {
      try { await window.clients.auto.tokenize("hi"); return "still loaded"; } catch (e) { return e.message; }
    }""")
    assert "no model is loaded" in after_unload


def test_an_unknown_dtype_or_backend_is_named(runtime_page, server, exported_model):
    folder = exported_model("tiny-qwen3.5")
    messages = runtime_page.evaluate("""async (url) => {
      const out = [];
      for (const options of [{backend: "wasm", dtype: "int3"}, {backend: "cuda"}]) {
        const client = new window.botpsyRuntime.ModelClient();
        try { await client.load(url, options); out.push("loaded"); } catch (e) { out.push(e.message); }
        finally { client.terminate(); }
      }
      return out;
    }""", f"{server}/models/{folder.name}/")
    assert 'dtype "int3" is not in this model folder' in messages[0]
    assert 'got "cuda"' in messages[1]


def info_manifest_recommendation(page):
    return page.evaluate("() => window.clients.model.info.manifest.recommended_dtype")


CHOOSE = """
async ({manifest, request, probe}) => {
  const {chooseBackend} = await import("/web/runtime/model/backend-selection.js");
  try { return await chooseBackend(manifest, request, async () => probe); }
  catch (e) { return {error: e.message}; }
}
"""
F16_MANIFEST = {
    "dtypes": {"fp32": {"requires": []}, "q4f16": {"requires": ["shader-f16"]}},
    "recommended_dtype": {"wasm": "fp32", "webgpu": "q4f16"},
}
GPU_WITHOUT_F16 = {"available": True, "shaderF16": False, "adapterName": "test adapter", "reason": ""}
GPU_WITH_F16 = {**GPU_WITHOUT_F16, "shaderF16": True}


def test_a_dtype_that_needs_shader_f16_only_goes_to_webgpu_when_the_adapter_has_it(runtime_page):
    choose = lambda request, probe: runtime_page.evaluate(CHOOSE, {"manifest": F16_MANIFEST, "request": request, "probe": probe})
    with_f16 = choose({"backend": "auto"}, GPU_WITH_F16)
    assert (with_f16["backend"], with_f16["dtype"]) == ("webgpu", "q4f16")
    without = choose({"backend": "auto"}, GPU_WITHOUT_F16)
    assert (without["backend"], without["dtype"]) == ("wasm", "fp32")
    assert "lacks shader-f16" in without["reason"] and "using WASM, 2 threads" in without["reason"]
    assert "lacks shader-f16" in choose({"backend": "webgpu"}, GPU_WITHOUT_F16)["error"]
    fp32_on_gpu = choose({"backend": "auto", "dtype": "fp32"}, GPU_WITHOUT_F16)
    assert (fp32_on_gpu["backend"], fp32_on_gpu["dtype"]) == ("webgpu", "fp32")
