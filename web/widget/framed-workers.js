// The widget's workers, as strict as the browser allows on someone else's page.
//
// A worker's policy comes from its own script response, except that a blob: worker (the only
// kind a page can start from another origin's script) inherits the page's. So the widget starts
// its workers inside a hidden frame on the BotPsy origin (worker-frame.html): they run under
// BotPsy's policy (connections to the BotPsy origin only), their storage is BotPsy's (partitioned
// for this site by the browser), and they talk to the widget through MessagePorts.
// When the host page's policy forbids that frame (frame-src), the widget falls back to blob:
// workers under the host's policy and says so; when it forbids those too, the error names what to allow.

const FRAME_URL = new URL("./worker-frame.html", import.meta.url);
const APP_ROOT = new URL("../../", import.meta.url);

/** Why the widget cannot use its worker frame on this page (a host policy, a timeout). */
export class WorkerFrameUnavailable extends Error {}

export class WorkerFrame {
  /** Resolves to a ready frame, or rejects with WorkerFrameUnavailable within timeoutMs. */
  static open({frameUrl = FRAME_URL, timeoutMs = 15_000} = {}) {
    const url = new URL(frameUrl);
    const frame = document.createElement("iframe");
    frame.hidden = true;
    frame.title = "BotPsy workers";
    frame.allow = "cross-origin-isolated";  // WASM threads, when the host page is isolated too
    frame.src = url.href;
    return new Promise((resolve, reject) => {
      const cleanUp = () => {
        clearTimeout(timer);
        removeEventListener("message", onMessage);
        document.removeEventListener("securitypolicyviolation", onViolation);
      };
      const fail = (message) => { cleanUp(); frame.remove(); reject(new WorkerFrameUnavailable(message)); };
      const onMessage = (event) => {
        if (event.source !== frame.contentWindow || event.origin !== url.origin) return;
        if (event.data?.type === "botpsy-worker-frame-ready") { cleanUp(); resolve(new WorkerFrame(frame, url.origin)); }
      };
      const onViolation = (event) => {
        if (event.blockedURI?.startsWith(url.origin)) {
          fail(`this page's Content-Security-Policy does not allow frames from ${url.origin} (${event.effectiveDirective})`);
        }
      };
      const timer = setTimeout(() => fail(`the BotPsy worker frame (${url.href}) did not start within ${timeoutMs / 1000} s`), timeoutMs);
      addEventListener("message", onMessage);
      document.addEventListener("securitypolicyviolation", onViolation);
      document.body.append(frame);
    });
  }

  constructor(frame, origin) {
    this.frame = frame;
    this.origin = origin;
    this.nextId = 1;
    this.workers = new Map();
    addEventListener("message", (event) => {
      if (event.source !== frame.contentWindow || event.data?.type !== "botpsy-worker-error") return;
      this.workers.get(event.data.id)?.onerror?.({message: event.data.message});
    });
  }

  /** A Worker-like object (postMessage, onmessage, onerror, terminate) for one of our worker scripts. */
  start(scriptUrl, name) {
    const id = this.nextId++;
    const channel = new MessageChannel();
    const worker = new FramedWorker(channel.port1, () => {
      this.workers.delete(id);
      this.frame.contentWindow?.postMessage({type: "botpsy-terminate-worker", id}, this.origin);
    });
    this.workers.set(id, worker);
    this.frame.contentWindow.postMessage({type: "botpsy-start-worker", id, path: pathBelowAppRoot(scriptUrl), name},
                                         this.origin, [channel.port2]);
    return worker;
  }
}

/** "web/runtime/model-worker.js" for the app's own scripts, wherever the app is served; the URL otherwise. */
function pathBelowAppRoot(scriptUrl) {
  const url = new URL(scriptUrl);
  return url.href.startsWith(APP_ROOT.href) ? url.href.slice(APP_ROOT.href.length) : url.href;
}

class FramedWorker {
  constructor(port, onTerminate) {
    this.port = port;
    this.onTerminate = onTerminate;
    this.onmessage = null;
    this.onerror = null;
    port.onmessage = (event) => this.onmessage?.(event);
  }

  postMessage(data, transfer = []) { this.port.postMessage(data, transfer); }

  terminate() {
    this.onTerminate();
    this.port.close();
  }
}
