// What `botpsy-web bench` drives: one engine per page (ours, transformers.js or wllama), with
// the same small API, plus probes for WebGPU and memory. The scenarios live in the driver.

const ENGINE_MODULES = {
  "botpsy": ["./engine-botpsy.js", "createBotpsyEngine"],
  "transformers.js": ["./engine-transformersjs.js", "createTransformersJsEngine"],
  "wllama": ["./engine-wllama.js", "createWllamaEngine"],
};

let engine = null;

async function useEngine(name) {
  const entry = ENGINE_MODULES[name];
  if (!entry) throw new Error(`unknown engine "${name}"; known: ${Object.keys(ENGINE_MODULES).join(", ")}`);
  const [path, factory] = entry;
  const module = await import(path);
  engine = module[factory]();
  return engine.name;
}

function current() {
  if (!engine) throw new Error("call bench.useEngine(name) first");
  return engine;
}

/** {available, fallback, name} of the WebGPU adapter, if any. */
async function webGpuAdapter() {
  if (!navigator.gpu) return {available: false, fallback: false, name: "navigator.gpu is missing"};
  const adapter = await navigator.gpu.requestAdapter().catch(() => null);
  if (!adapter) return {available: false, fallback: false, name: "no adapter"};
  const info = adapter.info ?? {};
  return {
    available: true,
    fallback: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter),
    name: [info.vendor, info.architecture, info.description].filter(Boolean).join(" ") || "unknown",
  };
}

/**
 * Memory of this page and its dedicated workers, as Chromium's
 * performance.measureUserAgentSpecificMemory() attributes it (JS heaps, and the WebAssembly
 * memories and ArrayBuffers they hold; needs cross-origin isolation): {bytes, workerBytes}, or null.
 */
async function memory() {
  if (!performance.measureUserAgentSpecificMemory || !crossOriginIsolated) return null;
  const result = await performance.measureUserAgentSpecificMemory();
  const inWorkers = (entry) => entry.attribution.some((a) => a.scope === "DedicatedWorkerGlobalScope");
  const workerBytes = result.breakdown.filter(inWorkers).reduce((sum, entry) => sum + entry.bytes, 0);
  return {bytes: result.bytes, workerBytes};
}

// Chromium answers a measurement only once every worker has, or after 60 s for one blocked in
// Atomics.wait, where onnxruntime-web's threads sit between runs: so the bench starts every page's
// measurement before it awaits any (one wait, not one a page).
let memoryMeasured = null;
const startMemory = () => { memoryMeasured = memory(); };
const memoryResult = async () => (await memoryMeasured) ?? null;

window.bench = {
  useEngine,
  webGpuAdapter,
  startMemory,
  memoryResult,
  crossOriginIsolated: () => crossOriginIsolated,
  clearCache: (folderUrl, options) => current().clearCache(folderUrl, options),
  load: (options) => current().load(options),
  generate: (promptIds, options) => current().generate(promptIds, options),
  unload: () => current().unload(),
};
window.benchReady = true;
