// Decode and prefill speed of each dtype of an exported folder in onnxruntime-web (WASM, Node).
// The figures behind manifest.recommended_dtype.wasm. Not a test.
//   node bench/export_dtype_speed.mjs /tmp/botpsy-models/smollm2-135m [prefillTokens=64] [decodeTokens=16]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(repo, "node_modules/onnxruntime-web/dist/");
const ort = await import(path.join(dist, "ort.wasm.min.mjs"));
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = dist;

const [folder, prefillArg = "64", decodeArg = "16"] = process.argv.slice(2);
const prefillTokens = Number(prefillArg), decodeTokens = Number(decodeArg);
const manifest = JSON.parse(fs.readFileSync(path.join(folder, "manifest.json"), "utf8"));

const int64 = (values) => new ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), [1, values.length]);
const range = (start, count) => Array.from({ length: count }, (_, i) => start + i);

async function step(session, state, ids) {
  const feeds = { input_ids: int64(ids), attention_mask: int64(range(0, state.length + ids.length).map(() => 1)) };
  // Only graphs that declare it take position_ids (qwen3_5 graphs count the attention mask).
  if (session.inputNames.includes("position_ids")) feeds.position_ids = int64(range(state.length, ids.length));
  manifest.cache.forEach((entry, i) => { feeds[entry.input] = state.tensors[i]; });
  const out = await session.run(feeds);
  const logits = out.logits.data;
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return { next: best, state: { length: state.length + ids.length, tensors: manifest.cache.map((e) => out[e.output]) } };
}

console.log(`${manifest.name}: prefill ${prefillTokens} tokens in one call, then ${decodeTokens} decode steps (1 thread)`);
console.log("dtype  size_MB  load_s  prefill_tok/s  decode_tok/s");
for (const [dtype, entry] of Object.entries(manifest.dtypes)) {
  const size = entry.files.reduce((sum, f) => sum + manifest.files[f].size, 0) / 2 ** 20;
  let started = performance.now();
  const externalData = entry.files.filter((f) => f !== entry.file)
    .map((f) => ({path: path.basename(f), data: fs.readFileSync(path.join(folder, f))}));
  const session = await ort.InferenceSession.create(fs.readFileSync(path.join(folder, entry.file)), {externalData});
  const loadSeconds = (performance.now() - started) / 1000;
  let state = { length: 0, tensors: manifest.cache.map((e) => new ort.Tensor("float32", new Float32Array(e.shape.reduce((a, b) => a * b, 1)), e.shape)) };
  started = performance.now();
  let result = await step(session, state, range(100, prefillTokens));
  const prefillSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  for (let i = 0; i < decodeTokens; i++) result = await step(session, result.state, [result.next]);
  const decodeSeconds = (performance.now() - started) / 1000;
  console.log(`${dtype.padEnd(6)} ${size.toFixed(1).padStart(7)}  ${loadSeconds.toFixed(1).padStart(6)}  ` +
              `${(prefillTokens / prefillSeconds).toFixed(1).padStart(13)}  ${(decodeTokens / decodeSeconds).toFixed(2).padStart(12)}`);
  await session.release();
}
