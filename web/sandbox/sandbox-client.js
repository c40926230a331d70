// The page's side of run_python's sandbox (web/sandbox/protocol.js): a hidden
// <iframe sandbox="allow-scripts">, created on the first call.
//
// Which boundary protects what: the frame's opaque origin keeps the app's IndexedDB,
// Cache Storage and cookies out of reach; its Content-Security-Policy (web/sandbox/sandbox.html's
// meta tag, py/botpsy_web/sandbox_policy.py; inherited by its blob: workers) allows no
// connections; terminating the worker enforces the time limit; the capped WebAssembly memory
// the memory limit. Workers cannot create frames, so this runs on the page; the agent worker
// asks for it through the agent host (web/agent/agent-host.js).
//
// Where the frame comes from: on a page of the sandbox's own origin (the app), from local
// bytes: the page fetches sandbox.html itself (so the service worker answers offline) and
// puts it in the frame's srcdoc. A sandboxed frame's own loads would bypass the service
// worker (an opaque origin has none), so a frame loaded by URL cannot start offline. On
// another site (the widget) the frame is loaded from the BotPsy host by URL: a srcdoc there
// would run under the host's policy, which need not allow the frame's boot script.
// Either way the frame loads no script from a URL: the page posts the sources of its
// modules (FRAME_MODULES), and then Pyodide's files.
import {FILE_NAMES, FRAME_MODULES, checkRunRequest, cleanResult, isMessage, message, sandboxError} from "./protocol.js";

export const SANDBOX_PAGE_URL = new URL("./sandbox.html", import.meta.url);
const FILE_URLS = Object.fromEntries(FILE_NAMES.map((name) => [name, name === "sandbox-worker.js"
  ? new URL("./sandbox-worker.js", import.meta.url) : new URL(`../../node_modules/pyodide/${name}`, import.meta.url)]));
export const MEMORY_LIMIT_BYTES = 512 * 2 ** 20;
// The frame signs of life every 2 s while it has calls: this long without one, its process
// is gone (a crash, out of memory) and the page builds a new frame for the next call.
const SILENT_MS = 15_000;

// The frame's boot says it listens within this long of the frame's load event, or it never will
// (blocked by the page's policy, or not loaded at all).
const BOOT_MS = 5_000;

async function fetchFile(name, url, read) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the Python sandbox cannot load ${name} (${response.status} for ${url})`);
  return read(response);
}

function fetchFiles() {
  return Promise.all(Object.entries(FILE_URLS).map(async ([name, url]) => [name, await fetchFile(name, url, (r) => r.arrayBuffer())]))
    .then(Object.fromEntries);
}

/** @returns {Promise<Array<[string, string]>>} the boot message's modules, next to the sandbox page */
function fetchFrameModules(pageUrl) {
  return Promise.all(FRAME_MODULES.map(async (name) => [name, await fetchFile(name, new URL(name, pageUrl), (r) => r.text())]));
}

export class PythonSandbox {
  constructor({pageUrl = SANDBOX_PAGE_URL, memoryLimitBytes = MEMORY_LIMIT_BYTES, container = null} = {}) {
    this.pageUrl = new URL(pageUrl, location.href);
    this.memoryLimitBytes = memoryLimitBytes;
    this.container = container;
    this.frame = null;       // the iframe, once created
    this.starting = null;    // while the frame starts: {modules, resolve, reject, loaded}
    this.connected = null;   // resolves when the frame has its files
    this.pending = new Map();  // call id -> {resolve, limit}
    this.nextId = 1;
    this.onMessage = (event) => this.#receive(event);
  }

  /**
   * Runs one program; resolves to its text answer (never rejects for the program's own
   * failures: a timeout, a crash, bad output all come back as `error`).
   * @param {import("./protocol.js").RunRequest} request
   * @returns {Promise<import("./protocol.js").SandboxResult>}
   */
  async run(request) {
    request = checkRunRequest(request);
    try {
      await this.#connect();
    } catch (error) {
      this.#discardFrame();
      return sandboxError(error?.message ?? String(error));
    }
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, {resolve, limit: request.outputLimitChars});
      this.lastHeard = performance.now();
      this.watchdog ??= setInterval(() => this.#checkAlive(), 1000);
      this.frame.contentWindow.postMessage(message.run(id, request), "*");
    });
  }

  #checkAlive() {
    // A hidden page's timers are throttled (to once a minute): silence there proves nothing,
    // so the count starts again once it is visible.
    if (document.visibilityState === "hidden") { this.lastHeard = performance.now(); return; }
    if (performance.now() - this.lastHeard < SILENT_MS) return;
    this.#discardFrame("the sandbox stopped answering (its process crashed or ran out of memory); " +
                       "a new one starts with the next call");
  }

  #connect() {
    this.connected ??= (async () => {
      const local = this.pageUrl.origin === location.origin;
      // By URL, the frame's page needs the server (see above): say so at once.
      if (!local && navigator.onLine === false) {
        throw new Error(`run_python's sandbox cannot start while offline (its page comes from ${this.pageUrl.origin})`);
      }
      const [html, modules, files] = await Promise.all([
        local ? fetchFile("sandbox.html", this.pageUrl, (r) => r.text()) : null, fetchFrameModules(this.pageUrl), fetchFiles()]);
      const frame = document.createElement("iframe");
      frame.setAttribute("sandbox", "allow-scripts");   // no allow-same-origin: an opaque origin
      frame.setAttribute("aria-hidden", "true");
      frame.tabIndex = -1;
      frame.hidden = true;
      frame.style.setProperty("display", "none", "important");   // a host page's iframe rules cannot show it
      frame.title = "Python sandbox";
      this.frame = frame;
      const blocked = new Error(`this page's Content-Security-Policy does not allow the Python sandbox's frame ` +
        `(frame-src ${this.pageUrl.origin})`);
      const silent = new Error(local
        ? "the Python sandbox's boot script did not run (this page's Content-Security-Policy must allow its hash " +
          "and blob: in script-src, see py/botpsy_web/sandbox_policy.py)"
        : `the Python sandbox page did not start (${this.pageUrl}): offline, or blocked`);
      const started = new Promise((resolve, reject) => {
        // #receive answers "loaded" with the modules, resolves on "ready", rejects on "failed".
        this.starting = {modules, resolve, reject, loaded: false};
        // The embedding page's own policy may forbid the frame (a widget's host page): say so at once.
        this.onViolation = (event) => {
          if (event.effectiveDirective === "frame-src" && event.blockedURI.startsWith(this.pageUrl.origin)) reject(blocked);
        };
        document.addEventListener("securitypolicyviolation", this.onViolation);
        frame.addEventListener("load", () => setTimeout(() => { if (!this.starting?.loaded) reject(silent); }, BOOT_MS), {once: true});
        setTimeout(() => reject(new Error("the Python sandbox did not start in time")), 60_000);
      });
      window.addEventListener("message", this.onMessage);
      if (local) frame.srcdoc = html;
      else frame.src = this.pageUrl.href;
      (this.container ?? document.body).append(frame);
      await started;
      this.starting = null;
      frame.contentWindow.postMessage(message.init(files, this.memoryLimitBytes), "*", Object.values(files));
    })();
    return this.connected;
  }

  // Only the frame's own window, only replies to a call still waiting, only text.
  #receive(event) {
    if (!this.frame || event.source !== this.frame.contentWindow) return;
    const {data} = event;
    if (this.starting) {
      if (isMessage(data, "loaded") && !this.starting.loaded) {
        this.starting.loaded = true;
        this.frame.contentWindow.postMessage(message.boot(this.starting.modules), "*");
      } else if (isMessage(data, "failed")) {
        this.starting.reject(new Error(`the Python sandbox did not start: ${String(data.message)}`));
      } else if (isMessage(data, "ready")) {
        this.starting.resolve();
      }
      return;
    }
    if (isMessage(data, "alive")) { this.lastHeard = performance.now(); return; }
    if (!isMessage(data, "result")) return;
    const call = this.pending.get(data.id);
    if (!call) return;
    this.lastHeard = performance.now();
    this.pending.delete(data.id);
    if (this.pending.size === 0) this.#stopWatchdog();
    call.resolve(cleanResult(data.result, call.limit));
  }

  #stopWatchdog() {
    clearInterval(this.watchdog);
    this.watchdog = null;
  }

  #discardFrame(reason = "the sandbox was restarted") {
    this.#stopWatchdog();
    window.removeEventListener("message", this.onMessage);
    if (this.onViolation) document.removeEventListener("securitypolicyviolation", this.onViolation);
    this.frame?.remove();
    this.frame = null;
    this.starting = null;
    this.connected = null;
    for (const call of this.pending.values()) call.resolve(sandboxError(reason));
    this.pending.clear();
  }

  /**
   * The person pressed Stop: every call in flight answers at once (its program is not left to
   * run to the time limit), and the frame goes with its workers; the next call starts a new one.
   */
  stop() {
    if (!this.pending.size) return;
    this.#discardFrame("the person stopped the turn before the program finished");
  }

  dispose() { this.#discardFrame(); }
}
