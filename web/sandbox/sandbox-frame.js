// The sandbox frame (web/sandbox/sandbox.html): keeps the Pyodide files the page handed
// over and runs each call in a fresh blob: worker, which it terminates when the call
// ends or its time is up. It runs none of the model's code itself, and answers only its
// parent window, only with text rebuilt by cleanResult (web/sandbox/protocol.js).
// The frame's boot runs this module from a blob: URL, its imports linked to the blob: URLs of
// the sources the page posted (FRAME_MODULES): no script of this frame or its workers comes
// from a URL of ours (the frame's policy allows blob: scripts only), so the model's code
// cannot even request one of our files (importScripts, import()).
import {PROTOCOL, FILE_NAMES, checkRunRequest, cleanResult, isMessage, message, sandboxError} from "./protocol.js";
import {capWasmMemory} from "./wasm-memory-cap.js";

const START_TIMEOUT_MS = 120_000;  // Pyodide's start-up (seconds on a slow machine), not counted in the call's limit

let files = null;       // {urls: {name: blob URL}, bytes: {name: ArrayBuffer}, workerUrl}
let queue = Promise.resolve();

function prepare({files: given, memoryLimitBytes}) {
  for (const name of FILE_NAMES) {
    if (!(given?.[name] instanceof ArrayBuffer)) throw new Error(`the sandbox was not given ${name}`);
  }
  const url = (name, type) => URL.createObjectURL(new Blob([given[name]], {type}));
  files = {
    workerUrl: url("sandbox-worker.js", "text/javascript"),
    urls: {"pyodide.mjs": url("pyodide.mjs", "text/javascript"), "pyodide.asm.mjs": url("pyodide.asm.mjs", "text/javascript")},
    bytes: {"pyodide.asm.wasm": capWasmMemory(given["pyodide.asm.wasm"], memoryLimitBytes),
            "python_stdlib.zip": given["python_stdlib.zip"], "pyodide-lock.json": given["pyodide-lock.json"]},
  };
}

/** Resolves to the first message of `worker` that passes `accept`, or to `onTimeout()` after `ms`. */
function nextMessage(worker, accept, ms, onTimeout) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(onTimeout()), ms);
    const done = (value) => { clearTimeout(timer); resolve(value); };
    worker.onmessage = ({data}) => { const value = accept(data); if (value !== undefined) done(value); };
    worker.onerror = (event) => { event.preventDefault?.(); done(sandboxError(`the sandbox worker failed: ${event.message ?? "script error"}`)); };
    worker.onmessageerror = () => done(sandboxError("the sandbox worker sent something that cannot be read"));
  });
}

/**
 * A worker with Python loaded and waiting for its one call: {worker, started} where
 * `started` resolves to null when it is ready, or to an error result.
 */
function startWorker() {
  // A classic worker: Chromium refuses a module worker from an opaque origin's blob: URL
  // (import() inside a classic one works).
  const worker = new Worker(files.workerUrl, {name: "botpsy-python-sandbox"});
  worker.postMessage({type: "start", protocol: PROTOCOL, urls: files.urls, bytes: files.bytes});
  const started = nextMessage(worker, (data) => {
    if (isMessage(data, "ready")) return null;
    if (isMessage(data, "failed")) return sandboxError(`Python did not start: ${String(data.message)}`);
    return undefined;
  }, START_TIMEOUT_MS, () => sandboxError("Python did not start in time"));
  return {worker, started};
}

// The next call's worker, started as soon as the previous call ended, so that a call waits
// for Python's start-up (seconds) only the first time.
let spare = null;

/** @returns {Promise<import("./protocol.js").SandboxResult>} */
async function runOnce(id, request) {
  const {worker, started} = spare ?? startWorker();
  spare = null;
  try {
    const failed = await started;
    if (failed) return failed;
    worker.postMessage(message.run(id, request));
    const seconds = request.timeLimitSeconds;
    return await nextMessage(worker, (data) => (isMessage(data, "result") && data.id === id
                                                  ? cleanResult(data.result, request.outputLimitChars) : undefined),
                             seconds * 1000, () => ({output: "", error: `TimeLimitExceeded: stopped after ${seconds} seconds`}));
  } finally {
    worker.terminate();  // one call per worker: nothing the code changed outlives it
    spare = startWorker();
  }
}

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const {data} = event;
  if (isMessage(data, "init")) {
    try { prepare(data); } catch (error) { files = null; console.error(error); }
  } else if (isMessage(data, "run")) {
    calls += 1;
    queue = queue.then(async () => {
      let result;
      try {
        if (!files) throw new Error("the sandbox has no Python files (init failed)");
        result = await runOnce(data.id, checkRunRequest(data.request));
      } catch (error) {
        result = sandboxError(error?.message ?? String(error));
      }
      window.parent.postMessage(message.result(data.id, result), "*");
      calls -= 1;
    });
  }
});

// While calls are waiting, a sign of life: the page cannot see this frame's process die
// (out of memory, a crash) any other way.
let calls = 0;
setInterval(() => { if (calls > 0) window.parent.postMessage(message.alive(), "*"); }, 2000);

window.parent.postMessage(message.ready(), "*");
