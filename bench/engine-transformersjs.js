// The bench's reference: transformers.js 4.3.2 loading the same exported folder, fully
// offline (its own nested onnxruntime-web build, served from node_modules).
import {AutoModelForCausalLM, Tensor, env} from "/node_modules/@huggingface/transformers/dist/transformers.min.js";

const ORT_DIST = "/node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/";

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.useBrowserCache = true;
env.backends.onnx.wasm.wasmPaths = ORT_DIST;

/** "/models/smollm2-135m/" -> {localModelPath: "/models/", modelId: "smollm2-135m"} */
function splitFolderUrl(folderUrl) {
  const path = new URL(folderUrl, location.href).pathname.replace(/\/+$/, "");
  const cut = path.lastIndexOf("/");
  return {localModelPath: path.slice(0, cut + 1), modelId: path.slice(cut + 1)};
}

// Times every session.run of a loaded model (for the "where the time goes" profile).
function timeSessionRuns(session, runMs) {
  const run = session.run.bind(session);
  session.run = async (...args) => {
    const started = performance.now();
    try { return await run(...args); } finally { runMs.push(performance.now() - started); }
  };
}

export function createTransformersJsEngine() {
  let model = null;
  const runMs = [];  // durations of the session.run calls of the current generate
  return {
    name: "transformers.js",

    async clearCache() {
      await caches.delete(env.cacheKey);
    },

    async load({folderUrl, backend, dtype, threads}) {
      const {localModelPath, modelId} = splitFolderUrl(folderUrl);
      env.localModelPath = localModelPath;
      env.backends.onnx.wasm.numThreads = threads;  // same thread count as ours, for a fair figure
      const started = performance.now();
      model = await AutoModelForCausalLM.from_pretrained(modelId, {dtype, device: backend});
      timeSessionRuns(model.sessions.model, runMs);
      return {loadMs: performance.now() - started, backend, dtype, threads, reason: "transformers.js 4.3.2"};
    },

    /** Greedy generation of exactly maxTokens tokens; transformers.js has no prefix reuse. */
    async generate(promptIds, {maxTokens}) {
      const ids = BigInt64Array.from(promptIds, (id) => BigInt(id));
      const inputIds = new Tensor("int64", ids, [1, ids.length]);
      const attentionMask = new Tensor("int64", new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
      let firstTokenAt = null;
      let calls = 0;
      const streamer = {
        put() {
          calls += 1;
          if (calls === 2) firstTokenAt = performance.now();  // call 1 carries the prompt
        },
        end() {},
      };
      runMs.length = 0;
      const started = performance.now();
      const output = await model.generate({
        input_ids: inputIds, attention_mask: attentionMask, max_new_tokens: maxTokens,
        min_new_tokens: maxTokens, do_sample: false, streamer,
      });
      const totalMs = performance.now() - started;
      const all = Array.from(output.data ?? output.sequences?.data ?? [], Number);
      return {tokens: all.slice(promptIds.length), ttftMs: firstTokenAt - started, totalMs, reusedTokens: 0,
              prefillMs: null, runMs: runMs.slice()};
    },

    async unload() {
      await model?.dispose();
      model = null;
    },
  };
}
