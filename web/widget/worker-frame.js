// Inside the widget's worker frame (worker-frame.html, on the BotPsy origin). A worker takes its
// Content-Security-Policy from its own script's response, but a worker a host page starts from a
// blob: gets the HOST's policy (or none). Started here, from our own URL, the model and agent
// workers get ours: connections to the BotPsy origin only, whatever the host page allows.
//
// Parent -> frame: {type: "botpsy-start-worker", id, path, name} (path below the app's root,
// "web/runtime/model-worker.js", wherever the site is served) with a MessagePort that then
// carries the worker's own messages both ways; {type: "botpsy-terminate-worker", id}.
// Frame -> parent: {type: "botpsy-worker-frame-ready"}, {type: "botpsy-worker-error", id, message}.
const APP_ROOT = new URL("../../", location.href);  // this page is web/widget/worker-frame.html
const STARTABLE = new Set(["web/runtime/model-worker.js", "web/agent/agent-worker.js"]);
const workers = new Map();

addEventListener("message", (event) => {
  if (event.source !== parent) return;
  const {type, id, path, name} = event.data ?? {};
  if (type === "botpsy-terminate-worker") {
    workers.get(id)?.terminate();
    workers.delete(id);
    return;
  }
  if (type !== "botpsy-start-worker") return;
  const [port] = event.ports;
  const reportError = (message) => parent.postMessage({type: "botpsy-worker-error", id, message}, "*");
  if (!port || !STARTABLE.has(path)) {
    reportError(`the BotPsy worker frame starts only its own workers, not ${JSON.stringify(path)}`);
    return;
  }
  const worker = new Worker(new URL(path, APP_ROOT), {type: "module", name});
  workers.set(id, worker);
  worker.onmessage = ({data}) => port.postMessage(data);
  worker.onerror = (error) => reportError(error.message || "script error");
  port.onmessage = ({data}) => worker.postMessage(data);
});

parent.postMessage({type: "botpsy-worker-frame-ready"}, "*");
