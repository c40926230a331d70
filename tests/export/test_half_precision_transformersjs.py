"""An fp16 graph also loads in transformers.js 4.3.2 (dtype "fp16", WASM): it reads the float32
cache inputs from the session, and generates the tokens our runtime generates from the same graph.

q4f16 does not load there, like q4: the onnxruntime-web that transformers.js 4.3.2 bundles has
no GatherBlockQuantized kernel (the 4-bit embedding), while onnxruntime-web 1.30 (ours) has."""

import pytest

from botpsy_web.verify_browser import tokenize_prompts

from .conftest import BUILTIN_MODELS
from .test_half_precision import EXPORTED_DTYPES
from . import test_transformersjs_loads_folders as transformers_js


@pytest.mark.parametrize("model_name", BUILTIN_MODELS)
def test_fp16_generates_in_transformers_js_what_our_runtime_generates(runtime_page, server, exported_model, model_name):
    folder = exported_model(model_name, EXPORTED_DTYPES)
    result = transformers_js.greedy_in_transformers_js(runtime_page, folder, "fp16")

    assert [run["promptIds"] for run in result["runs"]] == tokenize_prompts(folder, transformers_js.PROMPTS)
    ours = runtime_page.evaluate(transformers_js.GREEDY_IN_OUR_RUNTIME, {
        "folderUrl": f"{server}/models/{folder.name}/", "dtype": "fp16",
        "prompts": [run["promptIds"] for run in result["runs"]], "newTokens": transformers_js.NEW_TOKENS})
    assert (ours["backend"], ours["dtype"]) == ("wasm", "fp16")
    assert [run["tokens"] for run in result["runs"]] == ours["runs"], result["modelClass"]
    transformers_js.assert_not_a_constant_stream(result["runs"])
