// One run_python call, inside the sandbox frame's opaque origin (web/sandbox/protocol.js).
//
// The frame starts this file as a blob: (classic) worker, so it takes the frame's
// Content-Security-Policy: no connections, scripts only from blob: URLs. It cannot fetch
// Pyodide, so the frame posts the files it was handed and a fetch stand-in serves them
// from memory. Then it runs the harness (sandbox_runner.py) on the code and posts the text
// answer; the frame terminates it after one call (or when the time is up), so nothing the
// code leaves behind (patched globals, Python modules) reaches a later call.
//
// Messages from the frame (the only sender a dedicated worker has):
//   {type: "start", protocol, urls: {"pyodide.mjs", "pyodide.asm.mjs"}, bytes: {name: ArrayBuffer}}
//   {type: "run", protocol, id, request: RunRequest}
// Messages to the frame: {type: "ready", protocol} once Pyodide is up, {type: "failed", protocol, message}
// when it could not start, {type: "result", protocol, id, result}.
// This file imports nothing: a blob: worker has no base URL to resolve our modules against.

const INDEX_URL = "https://sandbox.invalid/pyodide/";  // a name only: every load is served from memory
let protocol = null;
let pyodide = null;

function serveFromMemory(bytes) {
  const types = {".wasm": "application/wasm", ".json": "application/json", ".zip": "application/zip"};
  return async (input) => {
    const name = String(input?.url ?? input).split("?")[0].split("/").pop();
    if (!(name in bytes)) throw new TypeError(`the sandbox has no network (asked for ${name})`);
    const type = types[name.slice(name.lastIndexOf("."))] ?? "application/octet-stream";
    return new Response(bytes[name].slice(0), {status: 200, headers: {"Content-Type": type}});
  };
}

async function start({urls, bytes}) {
  const networkFetch = self.fetch;
  self.fetch = serveFromMemory(bytes);
  try {
    const [{loadPyodide}, asm] = await Promise.all([import(urls["pyodide.mjs"]), import(urls["pyodide.asm.mjs"])]);
    pyodide = await loadPyodide({
      indexURL: INDEX_URL,
      createPyodideModule: asm.default,
      lockFileContents: new TextDecoder().decode(bytes["pyodide-lock.json"]),
      stdout: () => {}, stderr: () => {},   // start-up chatter; the harness captures the program's output
    });
  } finally {
    // The program meets the browser's own fetch, which the frame's policy blocks.
    self.fetch = networkFetch;
  }
}

async function run({code, runner, outputLimitChars}) {
  const namespace = pyodide.globals.get("dict")();
  pyodide.runPython(runner, {globals: namespace, filename: "sandbox_runner.py"});
  // callPromising: the program may wait on a JavaScript promise (pyodide.ffi.run_sync).
  return JSON.parse(await namespace.get("run_json").callPromising(code, outputLimitChars));
}

self.onmessage = async ({data}) => {
  if (data?.type === "start") {
    protocol = data.protocol;
    try {
      await start(data);
      postMessage({type: "ready", protocol});
    } catch (error) {
      postMessage({type: "failed", protocol, message: String(error?.message ?? error)});
    }
  } else if (data?.type === "run" && pyodide) {
    let result;
    try {
      result = await run(data.request);
    } catch (error) {
      result = {output: "", error: `SandboxError: the harness failed: ${error?.message ?? error}`};
    }
    postMessage({type: "result", protocol, id: data.id, result});
  }
};
