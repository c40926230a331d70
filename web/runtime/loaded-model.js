// Loading a model folder in the worker: manifest, backend choice, verified
// files, tokenizer, ONNX session. Returns what generation needs plus the
// info object load() answers with.
import {fetchManifest, loadModelFiles} from "./model-files.js";
import {chooseBackend} from "./backend-selection.js";
import {loadOrt} from "./ort-loader.js";
import {ModelRunner} from "./model-runner.js";
import {PrefixCache} from "./prefix-cache.js";
import {TextTokenizer} from "./tokenizer.js";

const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];

function basename(path) {
  return path.slice(path.lastIndexOf("/") + 1);
}

export async function loadModel(folderUrl, {backend = "auto", dtype} = {}, onProgress = () => {}) {
  const manifest = await fetchManifest(folderUrl);
  if (!Array.isArray(manifest.cache) || !manifest.dtypes) {
    throw new Error(`${folderUrl}: manifest.json has no "cache" or "dtypes": was it written by botpsy-web export?`);
  }
  const choice = await chooseBackend(manifest, {backend, dtype});
  const spec = manifest.dtypes[choice.dtype];
  const wanted = [...TOKENIZER_FILES.filter((path) => manifest.files[path]), ...spec.files];
  const files = await loadModelFiles(folderUrl, manifest, wanted, {onProgress});

  const tokenizer = TextTokenizer.fromBytes(files.get("tokenizer.json"), files.get("tokenizer_config.json"));
  onProgress({stage: "compile", file: spec.file, loaded: 0, total: 1, percent: 0, etaSeconds: null});
  const externalData = spec.files.filter((path) => path !== spec.file)
    .map((path) => ({path: basename(path), data: files.get(path)}));
  let runner;
  try {
    const ort = await loadOrt(choice.backend, {threads: choice.threads});
    runner = await ModelRunner.create(ort, files.get(spec.file), manifest, choice.backend, externalData);
  } catch (error) {
    // A WebGPU adapter exists but cannot run this graph: "auto" carries on with WASM.
    if (choice.backend !== "webgpu" || backend !== "auto") throw error;
    const fallback = await chooseBackend(manifest, {backend: "wasm", dtype: choice.dtype});
    fallback.reason = `WebGPU could not run the model (${error.message}): ${fallback.reason.replace(/^WASM requested: /, "")}`;
    Object.assign(choice, fallback);
    const ort = await loadOrt("wasm", {threads: choice.threads});
    runner = await ModelRunner.create(ort, files.get(spec.file), manifest, "wasm", externalData);
  }
  files.clear();
  onProgress({stage: "ready", file: spec.file, loaded: 1, total: 1, percent: 100, etaSeconds: 0});

  const prefix = new PrefixCache(runner);
  return {
    manifest,
    tokenizer,
    runner,
    prefix,
    info: {
      ...choice,
      architecture: manifest.architecture,
      manifest,
      eosTokenIds: manifest.eos_token_ids ?? [],
      toolCallFormat: manifest.tool_call_format ?? null,
    },
    async release() {
      prefix.clear();
      await runner.release();
    },
  };
}
