// Which onnxruntime-web backend and dtype to use, and why, in words a person
// can read ("WebGPU unavailable: using WASM, 2 threads").

const BACKENDS = ["auto", "webgpu", "wasm"];

/** Probes WebGPU: {available, shaderF16, reason}. Never throws. */
export async function probeWebGpu() {
  if (typeof navigator === "undefined" || !navigator.gpu) {
    return {available: false, shaderF16: false, reason: "this browser has no WebGPU (navigator.gpu is missing)"};
  }
  try {
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) return {available: false, shaderF16: false, reason: "no WebGPU adapter was found"};
    const info = adapter.info ?? {};
    return {
      available: true,
      shaderF16: adapter.features.has("shader-f16"),
      isFallbackAdapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter),
      adapterName: [info.vendor, info.architecture, info.description].filter(Boolean).join(" ") || "unknown adapter",
      reason: "",
    };
  } catch (error) {
    return {available: false, shaderF16: false, reason: `requesting a WebGPU adapter failed (${error.message})`};
  }
}

// Threads need SharedArrayBuffer, i.e. a cross-origin-isolated page. Half the
// cores (2 to 4) leaves the page and the agent's worker room to run.
export function wasmThreadCount() {
  const isolated = typeof crossOriginIsolated !== "undefined" && crossOriginIsolated;
  if (!isolated) return 1;
  const cores = (typeof navigator !== "undefined" && navigator.hardwareConcurrency) || 2;
  return Math.min(4, Math.max(2, Math.ceil(cores / 2)));
}

function dtypeNeeds(manifest, dtype) {
  const spec = manifest.dtypes?.[dtype];
  if (!spec) {
    throw new Error(`dtype "${dtype}" is not in this model folder; it has: ${Object.keys(manifest.dtypes ?? {}).join(", ")}`);
  }
  return spec.requires ?? [];
}

// `withShaderF16`: the WebGPU adapter has shader-f16, so the manifest's
// recommended_dtype_shader_f16 (an fp16 dtype) comes first when the folder has it.
function pickDtype(manifest, backend, requestedDtype, withShaderF16 = false) {
  if (requestedDtype) return requestedDtype;
  const f16Choice = withShaderF16 ? manifest.recommended_dtype_shader_f16?.[backend] : undefined;
  if (f16Choice && manifest.dtypes?.[f16Choice]) return f16Choice;
  const recommended = manifest.recommended_dtype?.[backend];
  if (recommended && manifest.dtypes?.[recommended]) return recommended;
  if (manifest.dtypes?.fp32) return "fp32";
  return Object.keys(manifest.dtypes ?? {})[0];
}

/**
 * Decides {backend, dtype, threads, reason} for a manifest.
 * backend "auto" prefers WebGPU when an adapter exists and supports what the dtype needs.
 * An explicit "webgpu" that cannot work is an error that says why.
 */
export async function chooseBackend(manifest, {backend = "auto", dtype} = {}, probe = probeWebGpu) {
  if (!BACKENDS.includes(backend)) throw new Error(`backend must be one of ${BACKENDS.join(", ")}, got "${backend}"`);
  if (dtype !== undefined && dtype !== null) dtypeNeeds(manifest, dtype);

  const wasmChoice = (why) => {
    const threads = wasmThreadCount();
    const chosenDtype = pickDtype(manifest, "wasm", dtype);
    dtypeNeeds(manifest, chosenDtype);
    const threadWords = threads === 1 ? "1 thread (page is not cross-origin isolated)" : `${threads} threads`;
    return {backend: "wasm", dtype: chosenDtype, threads, reason: `${why}using WASM, ${threadWords}`};
  };

  if (backend === "wasm") return wasmChoice("WASM requested: ");

  const gpu = await probe();
  const gpuDtype = pickDtype(manifest, "webgpu", dtype, gpu.available && gpu.shaderF16);
  const needsF16 = dtypeNeeds(manifest, gpuDtype).includes("shader-f16");
  let unusable = "";
  if (!gpu.available) unusable = `WebGPU unavailable (${gpu.reason})`;
  else if (needsF16 && !gpu.shaderF16) unusable = `WebGPU adapter lacks shader-f16, which dtype ${gpuDtype} needs`;

  if (!unusable) {
    const adapter = gpu.isFallbackAdapter ? `${gpu.adapterName}, a software fallback adapter` : gpu.adapterName;
    return {backend: "webgpu", dtype: gpuDtype, threads: 1, reason: `using WebGPU (${adapter})`};
  }
  if (backend === "webgpu") throw new Error(`${unusable}; load with backend "wasm" or "auto" instead`);
  return wasmChoice(`${unusable}: `);
}
