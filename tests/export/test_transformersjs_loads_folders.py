"""An exported folder also runs in transformers.js 4.3.2 (node_modules, no CDN, no Hub):
loaded from the test server in Chromium, it generates the tokens our engines generate, for
the hybrid Qwen3.5 architecture and for Llama.

fp32 is compared with onnxruntime in Python. q8 is compared with our runtime (web/runtime)
in the same page: int8 activations are rounded per token, so q8 logits follow the float
order of operations, and native onnxruntime already differs from onnxruntime-web by up to
1.6 logits on SmolLM2 q8 (a different argmax on one of these prompts); the two browser
engines run the same WASM kernels.
"""

import numpy as np
import onnx
import pytest

from botpsy_export.architectures import StateSpec
from botpsy_export.runner import OnnxStepper
from botpsy_web.verify_browser import tokenize_prompts

from .conftest import BUILTIN_MODELS, load_graph_without_weights, read_manifest

PROMPTS = (
    "<|im_start|>user\nName three colours of the sea.<|im_end|>\n<|im_start|>assistant\n",
    "def fibonacci(n):\n",
)
NEW_TOKENS = 16
TRANSFORMERS_JS = "/node_modules/@huggingface/transformers/dist/transformers.min.js"
ITS_ONNXRUNTIME_WEB = "/node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/"

# Loads one folder with transformers.js (offline) and generates greedily from token ids.
GREEDY_IN_TRANSFORMERS_JS = """
async ({library, wasmPaths, modelId, dtype, prompts, newTokens}) => {
  const {AutoModelForCausalLM, AutoTokenizer, Tensor, env} = await import(library);
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useBrowserCache = false;
  env.localModelPath = "/models/";
  env.backends.onnx.wasm.wasmPaths = wasmPaths;
  const tokenizer = await AutoTokenizer.from_pretrained(modelId);
  const model = await AutoModelForCausalLM.from_pretrained(modelId, {dtype, device: "wasm"});
  try {
    const runs = [];
    for (const text of prompts) {
      const ids = tokenizer.encode(text, {add_special_tokens: false});
      const output = await model.generate({
        input_ids: new Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]),
        attention_mask: new Tensor("int64", new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
        max_new_tokens: newTokens, do_sample: false,
      });
      runs.push({promptIds: ids, tokens: Array.from(output.data, Number).slice(ids.length)});
    }
    return {modelClass: model.constructor.name, runs};
  } finally {
    await model.dispose();
  }
}
"""


# The same prompts through web/runtime's ModelClient (WASM), greedy, fresh state each time.
GREEDY_IN_OUR_RUNTIME = """
async ({folderUrl, dtype, prompts, newTokens}) => {
  const client = new window.botpsyRuntime.ModelClient();
  try {
    const info = await client.load(folderUrl, {backend: "wasm", dtype});
    const runs = [];
    for (const ids of prompts) {
      const tokens = [];
      for await (const chunk of client.generate(ids, {maxTokens: newTokens, reusePrefix: false})) {
        if (chunk.tokenId !== null) tokens.push(chunk.tokenId);
      }
      runs.push(tokens);
    }
    return {backend: info.backend, dtype: info.dtype, runs};
  } finally {
    client.terminate();
  }
}
"""


def greedy_in_transformers_js(page, folder, dtype):
    return page.evaluate(GREEDY_IN_TRANSFORMERS_JS, {
        "library": TRANSFORMERS_JS, "wasmPaths": ITS_ONNXRUNTIME_WEB, "modelId": folder.name,
        "dtype": dtype, "prompts": list(PROMPTS), "newTokens": NEW_TOKENS})


def greedy_in_onnxruntime_python(folder, dtype, prompt_ids):
    """Greedy tokens from botpsy_export.runner, stopping at EOS as transformers.js does."""
    manifest = read_manifest(folder)
    specs = [StateSpec(c["input"], c["output"], c["kind"], tuple(c["shape"]), c["seq_axis"])
             for c in manifest["cache"]]
    stepper = OnnxStepper(folder / manifest["dtypes"][dtype]["file"], specs)
    tokens, logits = [], stepper.feed(prompt_ids)
    while len(tokens) < NEW_TOKENS:
        tokens.append(int(np.argmax(logits)))
        if tokens[-1] in manifest["eos_token_ids"]:
            break
        logits = stepper.feed(tokens[-1:])
    return tokens


@pytest.mark.parametrize("model_name", BUILTIN_MODELS)
def test_fp32_greedy_tokens_equal_onnxruntime_python(runtime_page, exported_model, model_name):
    folder = exported_model(model_name)
    result = greedy_in_transformers_js(runtime_page, folder, "fp32")

    assert [run["promptIds"] for run in result["runs"]] == tokenize_prompts(folder, PROMPTS)
    for run in result["runs"]:
        expected = greedy_in_onnxruntime_python(folder, "fp32", run["promptIds"])
        assert run["tokens"] == expected, (result["modelClass"], run["promptIds"])
    assert_not_a_constant_stream(result["runs"])


@pytest.mark.parametrize("model_name", BUILTIN_MODELS)
def test_q8_greedy_tokens_equal_our_runtime(runtime_page, server, exported_model, model_name):
    folder = exported_model(model_name)
    result = greedy_in_transformers_js(runtime_page, folder, "q8")

    ours = runtime_page.evaluate(GREEDY_IN_OUR_RUNTIME, {
        "folderUrl": f"{server}/models/{folder.name}/", "dtype": "q8",
        "prompts": [run["promptIds"] for run in result["runs"]], "newTokens": NEW_TOKENS})
    assert ours["dtype"] == "q8" and ours["backend"] == "wasm"
    assert [run["tokens"] for run in result["runs"]] == ours["runs"], result["modelClass"]
    assert_not_a_constant_stream(result["runs"])


def assert_not_a_constant_stream(runs):
    """Wrong positions or a lost state would show in a run whose tokens vary."""
    assert any(len(set(run["tokens"])) > 1 for run in runs)


def test_qwen_graph_takes_no_position_ids_so_transformers_js_cannot_feed_wrong_ones(exported_model):
    """transformers.js 4.3.2 gives Qwen-VL-family graphs decode positions of past + 2 x prompt
    length; a qwen3_5 graph counts positions from attention_mask instead. Llama keeps [1, seq]."""
    for model_name in BUILTIN_MODELS:
        folder = exported_model(model_name)
        manifest = read_manifest(folder)
        for entry in manifest["dtypes"].values():
            inputs = {i.name: i for i in load_graph_without_weights(folder / entry["file"]).graph.input}
            if manifest["architecture"] == "qwen3_5":
                assert "position_ids" not in inputs and "position_ids" not in manifest["inputs"]
            else:
                assert len(inputs["position_ids"].type.tensor_type.shape.dim) == 2
                assert manifest["inputs"]["position_ids"] == "position_ids"


def _graph_returning_its_last_position(path, position_dims):
    """A stateless graph whose 'logits' [1, seq, 1] are row 0 of position_ids, as floats."""
    from onnx import TensorProto, helper

    rows = position_dims[:-2]
    nodes = [helper.make_node("Gather", ["position_ids", "row"], ["row0"], axis=0)] if rows else []
    nodes += [helper.make_node("Cast", ["row0" if rows else "position_ids"], ["positions"], to=TensorProto.FLOAT),
              helper.make_node("Unsqueeze", ["positions", "last_axis"], ["logits"])]
    graph = helper.make_graph(
        nodes, "positions",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "total_sequence"]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, position_dims)],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "sequence", 1])],
        [helper.make_tensor("row", TensorProto.INT64, [], [0]),
         helper.make_tensor("last_axis", TensorProto.INT64, [1], [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("position_dims", [[1, "sequence"], [3, 1, "sequence"]], ids=["1xseq", "3x1xseq"])
def test_onnxruntime_stepper_feeds_positions_in_the_shape_the_graph_declares(tmp_path, position_dims):
    stepper = OnnxStepper(_graph_returning_its_last_position(tmp_path / "g.onnx", position_dims), [])
    assert stepper.input_feeds([4, 5])["position_ids"].shape == tuple(position_dims[:-1]) + (2,)
    assert stepper.feed([4, 5, 6]) == 2.0
    assert stepper.feed([7]) == 3.0
