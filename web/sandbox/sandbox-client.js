// The page's side of run_python's sandbox (web/sandbox/protocol.js): a hidden
// <iframe sandbox="allow-scripts"> from our own server, created on the first call.
//
// Which boundary protects what: the frame's opaque origin keeps the app's IndexedDB,
// Cache Storage and cookies out of reach; its Content-Security-Policy (sent by
// `botpsy-web serve`, inherited by its blob: workers) allows no connections; terminating
// the worker enforces the time limit; the capped WebAssembly memory the memory limit.
// Workers cannot create frames, so this runs on the page; the agent worker asks for it
// through the agent host (web/agent/agent-host.js).
import {FILE_NAMES, checkRunRequest, cleanResult, isMessage, message, sandboxError} from "./protocol.js";

export const SANDBOX_PAGE_URL = new URL("./sandbox.html", import.meta.url);
const FILE_URLS = Object.fromEntries(FILE_NAMES.map((name) => [name, name === "sandbox-worker.js"
  ? new URL("./sandbox-worker.js", import.meta.url) : new URL(`../../node_modules/pyodide/${name}`, import.meta.url)]));
export const MEMORY_LIMIT_BYTES = 512 * 2 ** 20;
// The frame signs of life every 2 s while it has calls: this long without one, its process
// is gone (a crash, out of memory) and the page builds a new frame for the next call.
const SILENT_MS = 15_000;

async function fetchFiles() {
  const entries = await Promise.all(Object.entries(FILE_URLS).map(async ([name, url]) => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`the Python sandbox cannot load ${name} (${response.status} for ${url})`);
    return [name, await response.arrayBuffer()];
  }));
  return Object.fromEntries(entries);
}

export class PythonSandbox {
  constructor({pageUrl = SANDBOX_PAGE_URL, memoryLimitBytes = MEMORY_LIMIT_BYTES, container = null} = {}) {
    this.pageUrl = new URL(pageUrl, location.href);
    this.memoryLimitBytes = memoryLimitBytes;
    this.container = container;
    this.frame = null;       // the iframe, once created
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
      // A sandboxed frame's own loads bypass the service worker (an opaque origin has none), so
      // a new frame needs the server; one created while online keeps working offline.
      if (navigator.onLine === false) throw new Error("run_python's sandbox cannot start while offline (its page comes from the server)");
      const files = fetchFiles();
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
      const silent = new Error(`the Python sandbox page did not start (${this.pageUrl}): offline, or blocked`);
      const ready = new Promise((resolve, reject) => {
        this.frameReady = resolve;
        // The embedding page's own policy may forbid the frame (a widget's host page): say so at once.
        this.onViolation = (event) => {
          if (event.effectiveDirective === "frame-src" && event.blockedURI.startsWith(this.pageUrl.origin)) reject(blocked);
        };
        document.addEventListener("securitypolicyviolation", this.onViolation);
        setTimeout(() => reject(silent), 30_000);
      });
      window.addEventListener("message", this.onMessage);
      frame.src = this.pageUrl.href;
      (this.container ?? document.body).append(frame);
      const [given] = await Promise.all([files, ready]);
      frame.contentWindow.postMessage(message.init(given, this.memoryLimitBytes), "*", Object.values(given));
    })();
    return this.connected;
  }

  // Only the frame's own window, only replies to a call still waiting, only text.
  #receive(event) {
    if (!this.frame || event.source !== this.frame.contentWindow) return;
    const {data} = event;
    if (isMessage(data, "ready")) { this.frameReady?.(); return; }
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
    this.connected = null;
    for (const call of this.pending.values()) call.resolve(sandboxError(reason));
    this.pending.clear();
  }

  dispose() { this.#discardFrame(); }
}
