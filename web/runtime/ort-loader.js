// Imports the onnxruntime-web bundle a backend needs, from the locally served
// node_modules (never a CDN). WASM alone uses the plain threaded build; WebGPU
// needs the build that carries both the WebGPU and WASM execution providers.

const ORT_DIST = "/node_modules/onnxruntime-web/dist/";
const BUNDLES = {
  wasm: "ort.wasm.min.mjs",
  webgpu: "ort.webgpu.min.mjs",
};

const loaded = new Map();

export async function loadOrt(backend, {threads = 1} = {}) {
  const file = BUNDLES[backend];
  if (!file) throw new Error(`no onnxruntime-web bundle for backend "${backend}"`);
  if (!loaded.has(backend)) loaded.set(backend, import(new URL(ORT_DIST + file, self.location.origin).href));
  const ort = await loaded.get(backend);
  ort.env.wasm.wasmPaths = new URL(ORT_DIST, self.location.origin).href;
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = "error";
  return ort;
}
