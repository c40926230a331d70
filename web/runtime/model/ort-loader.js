// Imports the onnxruntime-web bundle a backend needs, from the locally served
// node_modules (never a CDN). WASM alone uses the plain threaded build; WebGPU
// needs the build that carries both the WebGPU and WASM execution providers.

// Resolved against this module, not the page: the widget's worker runs from a
// blob URL on the host page's origin but imports everything from ours.
const ORT_DIST = new URL("../../../node_modules/onnxruntime-web/dist/", import.meta.url).href;
const BUNDLES = {
  wasm: "ort.wasm.min.mjs",
  webgpu: "ort.webgpu.min.mjs",
};

const loaded = new Map();

export async function loadOrt(backend, {threads = 1} = {}) {
  const file = BUNDLES[backend];
  if (!file) throw new Error(`no onnxruntime-web bundle for backend "${backend}"`);
  if (!loaded.has(backend)) loaded.set(backend, import(ORT_DIST + file));
  const ort = await loaded.get(backend);
  ort.env.wasm.wasmPaths = ORT_DIST;
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = "error";
  return ort;
}
