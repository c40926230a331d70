// Interleaved A/B decode timing (T=1 after P=1024) to cancel out background-load drift.
import * as ort from "onnxruntime-web";
ort.env.wasm.numThreads = Number(process.env.THREADS ?? 1);
const f = (n) => new Float32Array(n).map(() => Math.random() - 0.5), P = 1024;
const feeds = { query: new ort.Tensor("float32", f(896), [1, 1, 896]), key: new ort.Tensor("float32", f(128), [1, 1, 128]),
  value: new ort.Tensor("float32", f(128), [1, 1, 128]), past_key: new ort.Tensor("float32", f(2 * P * 64), [1, 2, P, 64]),
  past_value: new ort.Tensor("float32", f(2 * P * 64), [1, 2, P, 64]), attention_mask: new ort.Tensor("int64", new BigInt64Array(P + 1).fill(1n), [1, P + 1]) };
const s = { A: await ort.InferenceSession.create("A.onnx"), B: await ort.InferenceSession.create("B.onnx") };
const ts = { A: [], B: [] };
for (let i = 0; i < 205; i++) for (const m of ["A", "B"]) { const t = performance.now(); await s[m].run(feeds); if (i >= 5) ts[m].push(performance.now() - t); }
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)];
for (const m of ["A", "B"]) console.log(m, "threads", ort.env.wasm.numThreads, "decode ms: p10", q(ts[m], 0.1).toFixed(3), "median", q(ts[m], 0.5).toFixed(3), "n", ts[m].length);
