// The bench's GGUF peer: wllama 3.13 (llama.cpp compiled to WASM, with llama-server's
// completion API inside its worker), loading the GGUF the folder was exported from. Fully
// offline: its module and WASM come from node_modules, the GGUF from this server's
// /bench-gguf/ route (py/botpsy_web/bench_wllama.py), cached by wllama in OPFS.
//
// Its completion takes a prompt as text only (a token array is refused), so the bench's token
// ids are turned back into text with the folder's tokenizer (special tokens as written, which
// llama.cpp parses back into the same ids) before the clock starts; each reply reports how
// many tokens llama.cpp saw in the prompt (promptTokens), for the driver to check.
import {Wllama} from "/node_modules/@wllama/wllama/esm/index.js";
import {TextTokenizer} from "/web/runtime/model/tokenizer.js";

const WASM_PATHS = {default: "/node_modules/@wllama/wllama/esm/wasm/wllama.wasm"};
const QUIET_LOGGER = {debug() {}, log() {}, warn: console.warn, error: console.error};

function newWllama() {
  return new Wllama(WASM_PATHS, {logger: QUIET_LOGGER, suppressNativeLog: true});
}

function absolute(url) {
  return new URL(url, location.href).href;  // wllama's cache is keyed by the URL as given
}

async function folderTokenizer(folderUrl) {
  const read = async (name) => {
    const response = await fetch(new URL(name, new URL(folderUrl, location.href)));
    if (!response.ok) throw new Error(`${folderUrl}${name}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  };
  return TextTokenizer.fromBytes(await read("tokenizer.json"), await read("tokenizer_config.json"));
}

export function createWllamaEngine() {
  let wllama = null;
  let tokenizer = null;  // only to write the prompt ids as text; not part of wllama's load time
  return {
    name: "wllama",

    async clearCache(folderUrl, {ggufUrl} = {}) {
      if (!ggufUrl) throw new Error("wllama needs the GGUF's URL (ggufUrl) to clear its cache");
      await newWllama().cacheManager.delete(absolute(ggufUrl));
    },

    /** contextTokens: the KV cache's size, n_ctx (the bench passes what its longest prompt needs). */
    async load({folderUrl, backend, threads, ggufUrl, contextTokens}) {
      if (!ggufUrl) throw new Error("wllama needs the GGUF's URL: load({ggufUrl, ...})");
      tokenizer ??= await folderTokenizer(folderUrl);
      wllama = newWllama();
      const started = performance.now();
      await wllama.loadModelFromUrl(absolute(ggufUrl), {
        n_ctx: contextTokens, n_threads: threads,
        // Its WebGPU build would otherwise take SwiftShader's adapter in a WASM comparison.
        n_gpu_layers: backend === "webgpu" ? undefined : 0,
        n_parallel: 1,  // one conversation, like the other engines: one KV cache to reuse
      });
      const info = wllama.getLoadedContextInfo();
      return {loadMs: performance.now() - started, backend, dtype: "gguf", threads: wllama.getNumThreads(),
              contextTokens: info.n_ctx, reason: "wllama 3.13 (llama.cpp WASM)"};
    },

    /**
     * Greedy generation of exactly maxTokens tokens (ignore_eos) from token ids. reusePrefix is
     * llama-server's cache_prompt: the KV cache of the previous request's common prefix is kept.
     * The reply comes back as text (its completion gives no token ids) with its token count.
     */
    async generate(promptIds, {maxTokens, reusePrefix = false}) {
      const prompt = tokenizer.decode(promptIds);
      let firstTokenAt = null;
      let last = null;
      let text = "";
      const started = performance.now();
      await wllama.createCompletion({
        prompt, max_tokens: maxTokens, temperature: 0, top_k: 1, ignore_eos: true,
        cache_prompt: reusePrefix, stream: true,
        onData(chunk) {
          last = chunk;
          const piece = chunk.choices?.[0]?.text ?? "";
          firstTokenAt ??= performance.now();  // a chunk per token (text may be "" mid-character)
          text += piece;
        },
      });
      const totalMs = performance.now() - started;
      const timings = last?.timings ?? {};
      return {tokens: null, tokenCount: last?.usage?.completion_tokens ?? null, text,
              promptTokens: last?.usage?.prompt_tokens ?? null, ttftMs: firstTokenAt - started, totalMs,
              reusedTokens: timings.cache_n ?? 0, prefillMs: timings.prompt_ms ?? null,
              decodeMs: timings.predicted_ms ?? null};
    },

    async unload() {
      await wllama?.exit();  // ends its worker (and the threads' workers)
      wllama = null;
    },
  };
}
