"""Which dtype the runtime picks for a manifest, given what the WebGPU adapter can do: the real
chooseBackend (web/runtime/model/backend-selection.js) in Chromium, with the adapter probe replaced so
that an adapter with shader-f16 (which SwiftShader lacks) can be described."""

import pytest

MANIFEST = {
    "dtypes": {name: {"file": f"onnx/{name}.onnx", "files": [], "requires": requires}
               for name, requires in [("fp32", []), ("q8", []), ("q4", []),
                                      ("fp16", ["shader-f16"]), ("q4f16", ["shader-f16"])]},
    "recommended_dtype": {"wasm": "q8", "webgpu": "q4"},
    "recommended_dtype_shader_f16": {"webgpu": "q4f16"},
}

CHOOSE = """async ({manifest, options, adapter}) => {
  const {chooseBackend} = await import("/web/runtime/model/backend-selection.js");
  const probe = async () => adapter;
  try { return await chooseBackend(manifest, options, probe); }
  catch (error) { return {error: error.message}; }
}"""


def gpu(shader_f16):
    return {"available": True, "shaderF16": shader_f16, "isFallbackAdapter": False,
            "adapterName": "test adapter", "reason": ""}


NO_GPU = {"available": False, "shaderF16": False, "reason": "no WebGPU adapter was found"}


@pytest.fixture
def choose(runtime_page):
    def run(manifest=MANIFEST, adapter=NO_GPU, **options):
        return runtime_page.evaluate(CHOOSE, {"manifest": manifest, "options": options, "adapter": adapter})
    return run


def test_an_adapter_with_shader_f16_gets_the_f16_recommendation(choose):
    assert choose(adapter=gpu(True)) | {"reason": ""} == {"backend": "webgpu", "dtype": "q4f16", "threads": 1, "reason": ""}


def test_an_adapter_without_shader_f16_gets_the_plain_recommendation(choose):
    chosen = choose(adapter=gpu(False))
    assert (chosen["backend"], chosen["dtype"]) == ("webgpu", "q4")


def test_without_webgpu_the_wasm_recommendation_stands(choose):
    chosen = choose()
    assert (chosen["backend"], chosen["dtype"]) == ("wasm", "q8")


def test_a_folder_without_the_f16_dtype_falls_back_to_the_plain_recommendation(choose):
    manifest = {**MANIFEST, "dtypes": {k: v for k, v in MANIFEST["dtypes"].items() if k != "q4f16"}}
    chosen = choose(manifest=manifest, adapter=gpu(True))
    assert (chosen["backend"], chosen["dtype"]) == ("webgpu", "q4")


def test_an_explicit_dtype_wins_over_every_recommendation(choose):
    chosen = choose(adapter=gpu(True), dtype="q8")
    assert (chosen["backend"], chosen["dtype"]) == ("webgpu", "q8")


def test_an_f16_dtype_asked_for_on_an_adapter_without_shader_f16_says_why(choose):
    chosen = choose(adapter=gpu(False), dtype="fp16", backend="webgpu")
    assert "lacks shader-f16" in chosen["error"] and "fp16" in chosen["error"]
