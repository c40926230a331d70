// Run one exported graph with onnxruntime-web's WASM build under Node, the engine the page uses.
// Usage: node run_in_ort_web.mjs <graph.onnx> <feeds.json> [external data file...];
// prints {"name": {"dims": [...], "data": [...]}} as JSON. Data files are given to the session
// under their file names, as the graph refers to them (the page does the same).
// feeds.json: {"name": {"type": "int64"|"float32", "dims": [...], "data": [...]}}
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dist = path.join(repo, "node_modules/onnxruntime-web/dist/");
const ort = await import(path.join(dist, "ort.wasm.min.mjs"));
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = dist;

const [graphPath, feedsPath, ...dataPaths] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(feedsPath, "utf8"));
const feeds = {};
for (const [name, { type, dims, data }] of Object.entries(spec)) {
  const values = type === "int64" ? BigInt64Array.from(data.map(BigInt)) : Float32Array.from(data);
  feeds[name] = new ort.Tensor(type, values, dims);
}
const externalData = dataPaths.map((file) => ({ path: path.basename(file), data: fs.readFileSync(file) }));
const session = await ort.InferenceSession.create(fs.readFileSync(graphPath), { externalData });
const results = await session.run(feeds);
const out = {};
for (const name of session.outputNames) out[name] = { dims: results[name].dims, data: Array.from(results[name].data) };
process.stdout.write(JSON.stringify(out));
