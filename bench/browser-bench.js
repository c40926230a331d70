// What `botpsy-web bench` drives: one engine per page (ours or transformers.js), with the
// same small API, plus probes for WebGPU and memory. The scenarios live in the driver.

const ENGINE_MODULES = {
  "botpsy": ["./engine-botpsy.js", "createBotpsyEngine"],
  "transformers.js": ["./engine-transformersjs.js", "createTransformersJsEngine"],
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

/** Bytes used by this page and its workers (needs cross-origin isolation), or null. */
async function memoryBytes() {
  if (!performance.measureUserAgentSpecificMemory || !crossOriginIsolated) return null;
  const result = await performance.measureUserAgentSpecificMemory();
  return result.bytes;
}

window.bench = {
  useEngine,
  webGpuAdapter,
  memoryBytes,
  crossOriginIsolated: () => crossOriginIsolated,
  clearCache: (folderUrl) => current().clearCache(folderUrl),
  load: (options) => current().load(options),
  generate: (promptIds, options) => current().generate(promptIds, options),
  unload: () => current().unload(),
};
window.benchReady = true;
