// Loading a model folder in the worker: manifest, backend choice, verified
// files, tokenizer, ONNX session (on WASM the dtype's appending graph when the
// folder has one, else the standard graph). Returns what generation needs plus
// the info object load() answers with (its `storage`: whether this device kept the files).
import {fetchManifest, loadModelFiles, storageReport} from "../storage/model-files.js";
import {chooseBackend} from "./backend-selection.js";
import {loadOrt} from "./ort-loader.js";
import {ModelRunner} from "./model-runner.js";
import {dtypeGraphs} from "./dtype-graphs.js";
import {PrefixCache} from "../state/prefix-cache.js";
import {PersistedPromptState, promptStateIdentity} from "../state/prompt-state.js";
import {TextTokenizer} from "./tokenizer.js";
import {releaseGrammarEngine} from "../grammar/xgrammar-engine.js";
import {attentionHeads} from "../decode/prefill-plan.js";
import {contextLength} from "../decode/context-window.js";

const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];

function basename(path) {
  return path.slice(path.lastIndexOf("/") + 1);
}

export async function loadModel(folderUrl, {backend = "auto", dtype} = {}, onProgress = () => {}) {
  const notKept = [];  // files no store would take: the next load downloads them again
  const onNotKept = (failure) => notKept.push(failure);
  const manifest = await fetchManifest(folderUrl, {onNotKept});
  if (!Array.isArray(manifest.cache) || !manifest.dtypes) {
    throw new Error(`${folderUrl}: manifest.json has no "cache" or "dtypes": was it written by botpsy-web export?`);
  }
  attentionHeads(manifest);  // a bad attention_heads or context_length fails the load, not the first long prompt
  contextLength(manifest);
  const choice = await chooseBackend(manifest, {backend, dtype});
  const graphs = dtypeGraphs(manifest, choice.dtype);
  // WASM runs the appending graph when the folder has it, WebGPU the standard one. Both graphs
  // are stored (they are small next to the weights they share), so a browser that switches
  // backend later, or falls back to WASM, still runs offline.
  const firstMode = choice.backend === "wasm" && graphs.appending ? "appending" : "standard";
  const otherGraphs = [graphs.standard, graphs.appending].filter((path) => path && path !== graphs[firstMode]);
  const wanted = [...TOKENIZER_FILES.filter((path) => manifest.files[path]), ...graphs.externalData,
                  graphs[firstMode], ...otherGraphs];
  const files = await loadModelFiles(folderUrl, manifest, wanted, {onProgress, onNotKept});

  const tokenizer = TextTokenizer.fromBytes(files.get("tokenizer.json"), files.get("tokenizer_config.json"));
  onProgress({stage: "compile", file: graphs[firstMode], loaded: 0, total: 1, percent: 0, etaSeconds: null});
  const runner = await startRunner(manifest, choice, graphs, files, backend);
  files.clear();
  onProgress({stage: "ready", file: graphs[runner.cacheMode], loaded: 1, total: 1, percent: 100, etaSeconds: 0});
  return loadedModel(manifest, tokenizer, runner, choice, folderUrl, storageReport(notKept));
}

// The session is made here, apart from loadModel and loadedModel: V8 keeps one scope object
// per function call for all the closures made in it, so the weights handed to onnxruntime
// (copied into its heap) would stay alive as long as any closure of the loaded model did.
async function startRunner(manifest, choice, graphs, files, requestedBackend) {
  const externalData = graphs.externalData.map((path) => ({path: basename(path), data: files.get(path)}));
  const start = async (backendName, mode) => {
    const ort = await loadOrt(backendName, {threads: choice.threads});
    return ModelRunner.create(ort, files.get(graphs[mode]), manifest, backendName, externalData, mode);
  };
  const startWasm = async () => {
    if (!graphs.appending) return start("wasm", "standard");
    try {
      return await start("wasm", "appending");
    } catch (error) {
      console.warn(`botpsy: the appending graph ${graphs.appending} could not be loaded (${error.message}); ` +
        `using the standard graph ${graphs.standard} (decode slows down more on long contexts).`);
      return start("wasm", "standard");
    }
  };
  try {
    return choice.backend === "wasm" ? await startWasm() : await start(choice.backend, "standard");
  } catch (error) {
    // A WebGPU adapter exists but cannot run this graph: "auto" carries on with WASM.
    if (choice.backend !== "webgpu" || requestedBackend !== "auto") throw error;
    const fallback = await chooseBackend(manifest, {backend: "wasm", dtype: choice.dtype});
    fallback.reason = `WebGPU could not run the model (${error.message}): ${fallback.reason.replace(/^WASM requested: /, "")}`;
    Object.assign(choice, fallback);
    return startWasm();
  }
}

function loadedModel(manifest, tokenizer, runner, choice, folderUrl, storage) {
  const prefix = new PrefixCache(runner);
  const identity = promptStateIdentity(manifest, {dtype: choice.dtype, runner, threads: choice.threads});
  const promptState = new PersistedPromptState({folderUrl, runner, prefix, identity});
  return {
    manifest,
    tokenizer,
    runner,
    prefix,
    promptState,  // states stored on earlier visits (prompt-state.js)
    info: {
      ...choice,
      cacheMode: runner.cacheMode,  // "appending" (WASM, the folder has appending graphs) or "standard"
      architecture: manifest.architecture,
      manifest,
      eosTokenIds: manifest.eos_token_ids ?? [],
      toolCallFormat: manifest.tool_call_format ?? null,
      storage,  // StorageReport (storage/model-files.js): {kept, notKept, reason}
    },
    async release() {
      await promptState.settled();
      prefix.clear();
      await runner.release();
      await releaseGrammarEngine(tokenizer);  // tool-call grammars' WebAssembly memory, if any were used
    },
  };
}
