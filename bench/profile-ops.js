// Per-op profile of one model folder's graph in onnxruntime-web (WASM), for bench/profile_ops.py:
// the graph the runtime runs on WASM (the dtype's appending graph when it has one), one prefill
// chunk of `chunk` tokens from an empty cache, then `decodeSteps` one-token steps after `past`
// positions (cache contents are zeros: timing does not depend on them). With profile on,
// onnxruntime's profiler writes its events to the console, which the Python side collects.
// Also times chunk sizes: a prompt of `prompt` tokens cut into chunks of each of `chunks`.
import {loadOrt} from "/web/runtime/model/ort-loader.js";

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

export async function profile({folderUrl, dtype, threads, chunk, past, decodeSteps, prompt, chunks, profile: on,
                               sessionOptions = {}}) {
  const manifest = await (await fetch(folderUrl + "manifest.json")).json();
  const entry = manifest.dtypes[dtype];
  const graph = entry.appending_file ?? entry.file;
  const ort = await loadOrt("wasm", {threads});
  if (on) ort.env.logLevel = "verbose";
  const externalData = [];
  for (const file of entry.files.filter((name) => name !== entry.file)) {
    externalData.push({path: file.split("/").pop(), data: await fetchBytes(folderUrl + file)});
  }
  const session = await ort.InferenceSession.create(await fetchBytes(folderUrl + graph), {
    executionProviders: ["wasm"], graphOptimizationLevel: "all", externalData, enableProfiling: Boolean(on),
    ...sessionOptions});
  const appending = Boolean(entry.appending_file);
  const names = manifest.inputs;
  const feeds = (count, processed) => {
    const ids = new BigInt64Array(count).fill(1000n);
    const f = {[names.input_ids]: new ort.Tensor("int64", ids, [1, count]),
               [names.attention_mask]: new ort.Tensor("int64", new BigInt64Array(processed + count).fill(1n), [1, processed + count])};
    if (names.position_ids) {
      const positions = BigInt64Array.from({length: count}, (_, i) => BigInt(processed + i));
      f[names.position_ids] = new ort.Tensor("int64", positions, [1, count]);
    }
    if (appending) f[manifest.appending_inputs.num_logits] = new ort.Tensor("int64", BigInt64Array.of(1n), [1]);
    for (const c of manifest.cache) {
      const shape = c.shape.map((size, axis) => (axis === c.seq_axis ? processed : size));
      f[c.input] = new ort.Tensor("float32", new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
    }
    return f;
  };
  const run = async (count, processed) => {
    const f = feeds(count, processed);
    const started = performance.now();
    const out = await session.run(f);
    const ms = performance.now() - started;
    for (const tensor of Object.values(out)) tensor.dispose?.();
    return ms;
  };
  await run(8, 0);  // first call compiles kernels and sizes arenas
  const marks = {};
  console.log("PROFILE-MARK prefill-start");
  marks.prefillMs = await run(chunk, 0);
  console.log("PROFILE-MARK decode-start");
  marks.decodeMs = [];
  for (let step = 0; step < decodeSteps; step++) marks.decodeMs.push(await run(1, past + step));
  console.log("PROFILE-MARK end");
  if (on) session.endProfiling();
  marks.chunks = {};
  for (const size of chunks ?? []) {
    let total = 0;
    for (let start = 0; start < prompt; start += size) total += await run(Math.min(size, prompt - start), start);
    marks.chunks[size] = total;
  }
  await session.release();
  return {graph, threads, ...marks};
}
