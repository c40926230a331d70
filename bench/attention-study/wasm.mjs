// onnxruntime-web (WASM) in Node: exactness + speed of A and B.
import * as ort from "onnxruntime-web";
import fs from "node:fs";

const threads = Number(process.env.THREADS ?? 2);
ort.env.wasm.numThreads = threads;
const H = 14, KV = 2, D = 64, N = 1024;
const Q = new Float32Array(fs.readFileSync("q.bin").buffer.slice(0));
const K = new Float32Array(fs.readFileSync("k.bin").buffer.slice(0));
const V = new Float32Array(fs.readFileSync("v.bin").buffer.slice(0));

const tok = (x, w, a, b) => x.slice(a * w, b * w);
function cache(x, a, b) { // tokens a..b-1 -> [1, KV, b-a, D]
  const n = b - a, out = new Float32Array(KV * n * D);
  for (let t = 0; t < n; t++) for (let h = 0; h < KV; h++) for (let d = 0; d < D; d++)
    out[(h * n + t) * D + d] = x[(a + t) * KV * D + h * D + d];
  return new ort.Tensor("float32", out, [1, KV, n, D]);
}
async function run(s, start, T, pk, pv) {
  if (!pk) { pk = cache(K, 0, start); pv = cache(V, 0, start); }
  const feeds = {
    query: new ort.Tensor("float32", tok(Q, H * D, start, start + T), [1, T, H * D]),
    key: new ort.Tensor("float32", tok(K, KV * D, start, start + T), [1, T, KV * D]),
    value: new ort.Tensor("float32", tok(V, KV * D, start, start + T), [1, T, KV * D]),
    past_key: pk, past_value: pv,
    attention_mask: new ort.Tensor("int64", new BigInt64Array(start + T).fill(1n), [1, start + T]),
  };
  const r = await s.run(feeds);
  return [r.output.data, r.present_key, r.present_value];
}
function maxdiff(a, b) { let m = 0; for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i])); if (a.length !== b.length) return NaN; return m; }
const concat = (arrs) => { const o = new Float32Array(arrs.reduce((n, a) => n + a.length, 0)); let p = 0; for (const a of arrs) { o.set(a, p); p += a.length; } return o; };
const row = (o, i) => o.slice(i * H * D, (i + 1) * H * D);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const res = { threads, ortVersion: ort.env.versions };
for (const name of (process.env.MODELS ?? "A,B").split(",")) {
  const s = await ort.InferenceSession.create(`${name}.onnx`, { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
  const r = {};
  // smoke: chunked prefill, T>1 with P>0
  const [sm] = await run(s, 5, 3);
  r.smoke_T3_P5_outlen = sm.length;
  const [full, fk, fv] = await run(s, 0, N);
  // (1) 4 chunks of 256, carrying present -> past
  let pk = cache(K, 0, 0), pv = cache(V, 0, 0); const outs = [];
  for (let c = 0; c < 4; c++) { let o; [o, pk, pv] = await run(s, c * 256, 256, pk, pv); outs.push(o); }
  r.chunked4x256_vs_onecall_output = maxdiff(concat(outs), full);
  r.chunked4x256_vs_onecall_present = Math.max(maxdiff(pk.data, fk.data), maxdiff(pv.data, fv.data));
  pk = cache(K, 0, 0); pv = cache(V, 0, 0); outs.length = 0; let pos = 0;
  for (const T of [300, 1, 3, 720]) { let o; [o, pk, pv] = await run(s, pos, T, pk, pv); outs.push(o); pos += T; }
  r.chunked_300_1_3_720_vs_onecall_output = maxdiff(concat(outs), full);
  // (2) decode at 700..703 vs same rows of a 4-token call from 700 and of the 1024 one call
  const [four] = await run(s, 700, 4);
  const dec = []; for (let p = 700; p < 704; p++) dec.push((await run(s, p, 1))[0]);
  r.decode700_vs_4tok_row0 = maxdiff(dec[0], row(four, 0));
  r["decode700..703_vs_4tok_rows"] = Math.max(...dec.map((d, i) => maxdiff(d, row(four, i))));
  r.decode700_vs_onecall1024_row700 = maxdiff(dec[0], row(full, 700));
  r["4tok_vs_onecall1024_rows700..703"] = maxdiff(four, full.slice(700 * H * D, 704 * H * D));
  // speed (feeds built outside the timed region)
  const mk = (start, T, pkk, pvv) => ({
    query: new ort.Tensor("float32", tok(Q, H * D, start, start + T), [1, T, H * D]),
    key: new ort.Tensor("float32", tok(K, KV * D, start, start + T), [1, T, KV * D]),
    value: new ort.Tensor("float32", tok(V, KV * D, start, start + T), [1, T, KV * D]),
    past_key: pkk, past_value: pvv,
    attention_mask: new ort.Tensor("int64", new BigInt64Array(start + T).fill(1n), [1, start + T]) });
  const pre = mk(0, N, cache(K, 0, 0), cache(V, 0, 0));
  const dq = { ...mk(N - 1, 1, cache(K, 0, N - 1), cache(V, 0, N - 1)) }; // T=1 after P=1023 -> total 1024
  // exactly P=1024: reuse token 1023 as the new one after a 1024 cache
  const dfe = { ...dq, past_key: cache(K, 0, N), past_value: cache(V, 0, N),
    attention_mask: new ort.Tensor("int64", new BigInt64Array(N + 1).fill(1n), [1, N + 1]) };
  const time = async (feeds, reps) => { await s.run(feeds); await s.run(feeds); const ts = [];
    for (let i = 0; i < reps; i++) { const t = performance.now(); await s.run(feeds); ts.push(performance.now() - t); }
    return [median(ts), ts.map((x) => +x.toFixed(3))]; };
  r.prefill_T1024_ms = await time(pre, 5);
  r.decode_T1_P1024_ms = await time(dfe, 51);
  res[name] = r;
  await s.release();
}
console.log(JSON.stringify(res, null, 1));
