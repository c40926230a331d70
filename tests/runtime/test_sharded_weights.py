"""A folder whose weights are split into several data files (export/botpsy_export/external_data.py:
at most 1 GiB each, because Chromium cannot store or hash one buffer of 2 GiB or more) loads in
web/runtime as one with a single data file does: the same greedy tokens, every shard downloaded,
checked and stored, and taken from the store on the next load. transformers.js 4.3.2 loads it too,
from the file names and count config.json gives it. The shard limit is lowered so that the tiny
model gets several shards."""

import json

import pytest

from botpsy_export import external_data
from botpsy_export.api import export_model

SHARD_LIMIT = 256 * 2**10
PROMPT = "<|im_start|>user\nName three colours of the sea.<|im_end|>\n<|im_start|>assistant\n"
NEW_TOKENS = 16
TRANSFORMERS_JS = "/node_modules/@huggingface/transformers/dist/transformers.min.js"
ITS_ONNXRUNTIME_WEB = "/node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/"

# Loads a folder into a fresh client (fp32, WASM), generates greedily; returns the tokens and,
# per file, the stages the load went through (download / verify / cached).
LOAD_AND_GENERATE = """
async ({folderUrl, prompt, newTokens}) => {
  const client = new window.botpsyRuntime.ModelClient();
  try {
    const stages = {};
    const info = await client.load(folderUrl, {backend: "wasm", dtype: "fp32", onProgress: (p) => {
      stages[p.file] ??= [];
      if (!stages[p.file].includes(p.stage)) stages[p.file].push(p.stage);
    }});
    const tokens = [];
    for await (const chunk of client.generate(prompt, {maxTokens: newTokens, temperature: 0, stopOnEos: false,
                                                       reusePrefix: false})) {
      if (chunk.tokenId !== null) tokens.push(chunk.tokenId);
    }
    return {backend: info.backend, dtype: info.dtype, stages, tokens};
  } finally {
    client.terminate();
  }
}
"""

# transformers.js, offline, fp32 on WASM: greedy tokens after the prompt's ids (up to and with an EOS).
GREEDY_IN_TRANSFORMERS_JS = """
async ({library, wasmPaths, modelId, prompt, newTokens}) => {
  const {AutoModelForCausalLM, AutoTokenizer, Tensor, env} = await import(library);
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useBrowserCache = false;
  env.localModelPath = "/models/";
  env.backends.onnx.wasm.wasmPaths = wasmPaths;
  const tokenizer = await AutoTokenizer.from_pretrained(modelId);
  const model = await AutoModelForCausalLM.from_pretrained(modelId, {dtype: "fp32", device: "wasm"});
  try {
    const ids = tokenizer.encode(prompt, {add_special_tokens: false});
    const output = await model.generate({
      input_ids: new Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]),
      attention_mask: new Tensor("int64", new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
      max_new_tokens: newTokens, do_sample: false,
    });
    return Array.from(output.data, Number).slice(ids.length);
  } finally {
    await model.dispose();
  }
}
"""


@pytest.fixture(scope="module")
def sharded_folder(models_dir):
    """tiny-qwen3.5's fp32 graph exported with the shard limit lowered to SHARD_LIMIT (the
    export's own tests verify such a folder against PyTorch; not again here)."""
    out = models_dir / "tiny-qwen3.5-sharded"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(external_data, "MAX_SHARD_BYTES", SHARD_LIMIT)
        export_model("tiny-qwen3.5", out, dtypes=("fp32",), verify=False, progress=False)
    shards = json.loads((out / "manifest.json").read_text())["dtypes"]["fp32"]["files"][1:]
    assert len(shards) >= 3, shards
    return out


def _load(page, server, folder):
    return page.evaluate(LOAD_AND_GENERATE, {"folderUrl": f"{server}/models/{folder.name}/", "prompt": PROMPT,
                                             "newTokens": NEW_TOKENS})


def test_a_sharded_folder_gives_the_tokens_of_one_data_file_and_is_stored(runtime_page, server, exported_model,
                                                                          sharded_folder):
    whole = exported_model("tiny-qwen3.5")
    assert len(json.loads((whole / "manifest.json").read_text())["dtypes"]["fp32"]["files"]) == 2
    shards = json.loads((sharded_folder / "manifest.json").read_text())["dtypes"]["fp32"]["files"][1:]

    expected = _load(runtime_page, server, whole)
    first = _load(runtime_page, server, sharded_folder)
    again = _load(runtime_page, server, sharded_folder)  # a new client in the same page: the store

    assert (first["backend"], first["dtype"]) == ("wasm", "fp32")
    assert len(set(expected["tokens"])) > 1  # not a constant stream, which any wrong weights could give too
    assert first["tokens"] == expected["tokens"] == again["tokens"]
    for shard in shards:
        assert first["stages"][shard] == ["download", "verify"], (shard, first["stages"][shard])
        assert again["stages"][shard][-1] == "cached" and "download" not in again["stages"][shard], shard


def test_transformers_js_loads_the_shards_config_json_names(runtime_page, server, sharded_folder):
    config = json.loads((sharded_folder / "config.json").read_text())
    shards = json.loads((sharded_folder / "manifest.json").read_text())["dtypes"]["fp32"]["files"][1:]
    assert config["transformers.js_config"]["use_external_data_format"] == {"model.onnx": len(shards)}

    tokens = runtime_page.evaluate(GREEDY_IN_TRANSFORMERS_JS, {
        "library": TRANSFORMERS_JS, "wasmPaths": ITS_ONNXRUNTIME_WEB, "modelId": sharded_folder.name,
        "prompt": PROMPT, "newTokens": NEW_TOKENS})
    ours = _load(runtime_page, server, sharded_folder)["tokens"]
    eos = json.loads((sharded_folder / "manifest.json").read_text())["eos_token_ids"]
    assert tokens == ours[:len(tokens)]  # ours does not stop at EOS (stopOnEos false)
    assert len(tokens) == NEW_TOKENS or tokens[-1] in eos
