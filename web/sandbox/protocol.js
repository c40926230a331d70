// The messages of run_python's sandbox, page <-> frame <-> worker, in one place.
//
//   page (our app, or a widget's host page)
//     | window.postMessage, checked by event.source
//   frame  web/sandbox/sandbox.html: <iframe sandbox="allow-scripts">, an opaque origin,
//     |    its own CSP (no connections); it never runs the model's code itself
//     | Worker.postMessage
//   worker (a blob: classic worker started by the frame, one per call): Pyodide runs the code
//
// Start: the frame's boot says "loaded"; the page posts "boot" (the frame's module sources);
// the frame's module says "ready" (or the boot "failed"); the page posts "init" (Pyodide's files).
//
// Only text crosses back: every reply is rebuilt field by field from strings, so a worker
// (the model's code) that posts anything else gets a SandboxError, not a path into the page.

export const PROTOCOL = "botpsy-sandbox-1";

/**
 * What the page hands the frame once: Pyodide's files and the worker's own source, as
 * ArrayBuffers (transferred), because the frame may not fetch anything.
 * @typedef {{type: "init", protocol: string, files: Object<string, ArrayBuffer>, memoryLimitBytes: number}} InitMessage
 */

/**
 * One call. `runner` is the Python source of the harness (py/botpsy_agent/tools/sandbox_runner.py)
 * that runs `code` in a fresh namespace; limits are in seconds and characters.
 * @typedef {{code: string, runner: string, timeLimitSeconds: number, outputLimitChars: number}} RunRequest
 * @typedef {{type: "run", protocol: string, id: number, request: RunRequest}} RunMessage
 */

/**
 * The answer of a call, as the model reads it. `output` holds what the program printed
 * (stdout and stderr), `result` the repr of its last expression, `error` "Type: message".
 * @typedef {{output: string, result?: string, error?: string, truncated?: boolean}} SandboxResult
 * @typedef {{type: "result", protocol: string, id: number, result: SandboxResult}} ResultMessage
 */

/** @typedef {{type: "loaded", protocol: string}} LoadedMessage  the frame's boot script runs and listens */
/**
 * The frame's modules as [file name, source text], each importing only ones before it
 * (FRAME_MODULES' order): the frame may load no URL of ours, so the page posts them.
 * @typedef {{type: "boot", protocol: string, modules: Array<[string, string]>}} BootMessage
 */
/** @typedef {{type: "failed", protocol: string, message: string}} FailedMessage  the boot could not start the frame's modules */
/** @typedef {{type: "ready", protocol: string}} ReadyMessage  the frame's script (or a worker) has started */
/** @typedef {{type: "alive", protocol: string}} AliveMessage  the frame, every 2 s while it has a call: its process lives */

export const FILE_NAMES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                           "pyodide-lock.json", "sandbox-worker.js"];

// The frame's own modules (web/sandbox/), in the order the boot links them: the frame last.
export const FRAME_MODULES = ["protocol.js", "wasm-memory-cap.js", "sandbox-frame.js"];

export const message = {
  /** @returns {BootMessage} */
  boot: (modules) => ({type: "boot", protocol: PROTOCOL, modules}),
  ready: () => ({type: "ready", protocol: PROTOCOL}),
  alive: () => ({type: "alive", protocol: PROTOCOL}),
  /** @returns {InitMessage} */
  init: (files, memoryLimitBytes) => ({type: "init", protocol: PROTOCOL, files, memoryLimitBytes}),
  /** @returns {RunMessage} */
  run: (id, request) => ({type: "run", protocol: PROTOCOL, id, request}),
  /** @returns {ResultMessage} */
  result: (id, result) => ({type: "result", protocol: PROTOCOL, id, result}),
};

/** True when `data` is a message of this protocol of the given type. */
export function isMessage(data, type) {
  return data !== null && typeof data === "object" && data.protocol === PROTOCOL && data.type === type;
}

/** A RunRequest from untrusted input, or an Error naming the bad field. */
export function checkRunRequest(request) {
  if (request === null || typeof request !== "object") throw new Error("a run request must be an object");
  const {code, runner, timeLimitSeconds, outputLimitChars} = request;
  if (typeof code !== "string") throw new Error("run request: code must be a string");
  if (typeof runner !== "string" || !runner) throw new Error("run request: runner must be the harness's Python source");
  if (!(timeLimitSeconds > 0 && timeLimitSeconds <= 600)) throw new Error("run request: timeLimitSeconds must be in (0, 600]");
  if (!(Number.isInteger(outputLimitChars) && outputLimitChars > 0)) throw new Error("run request: outputLimitChars must be a positive integer");
  return {code, runner, timeLimitSeconds, outputLimitChars};
}

/**
 * A SandboxResult rebuilt from whatever the other side posted: only strings (clipped to
 * `limit` characters) and a boolean survive; anything else is an error result.
 * @returns {SandboxResult}
 */
export function cleanResult(raw, limit) {
  if (raw === null || typeof raw !== "object" || typeof raw.output !== "string") {
    return sandboxError("the sandbox answered with something that is not a result");
  }
  const clip = (text) => text.slice(0, limit);
  /** @type {SandboxResult} */
  const result = {output: clip(raw.output)};
  for (const key of ["result", "error"]) {
    if (raw[key] === undefined || raw[key] === null) continue;
    if (typeof raw[key] !== "string") return sandboxError(`the sandbox's ${key} was not text`);
    result[key] = clip(raw[key]);
  }
  if (raw.truncated === true || raw.output.length > limit) result.truncated = true;
  return result;
}

/** @returns {SandboxResult} */
export function sandboxError(text) {
  return {output: "", error: `SandboxError: ${text}`};
}
