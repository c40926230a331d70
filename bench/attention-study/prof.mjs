import * as ort from "onnxruntime-web";
ort.env.wasm.numThreads = 1;
const s = await ort.InferenceSession.create(`${process.env.M}.onnx`, { executionProviders: ["wasm"], enableProfiling: true });
const T = Number(process.env.T ?? 1024), f = (n) => new Float32Array(n).map(() => Math.random());
const feeds = { query: new ort.Tensor("float32", f(T * 896), [1, T, 896]), key: new ort.Tensor("float32", f(T * 128), [1, T, 128]),
  value: new ort.Tensor("float32", f(T * 128), [1, T, 128]), past_key: new ort.Tensor("float32", new Float32Array(0), [1, 2, 0, 64]),
  past_value: new ort.Tensor("float32", new Float32Array(0), [1, 2, 0, 64]), attention_mask: new ort.Tensor("int64", new BigInt64Array(T).fill(1n), [1, T]) };
await s.run(feeds); await s.run(feeds);
s.endProfiling();
