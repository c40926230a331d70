// <botpsy-chat>: the assistant as a custom element any page can embed.
//
//   <script type="module" src="https://botpsy.example/web/widget.js"></script>
//   <botpsy-chat model="models/smollm2-135m/" mode="floating" tools="calculator,datetime_now"></botpsy-chat>
//
//   el.registerTool({name, description, parameters, handler, confirm})
//   el.start(); el.ask(text); el.newChat()
//   events: botpsy-ready, botpsy-message, botpsy-toolcall, botpsy-error
//   The page's own WebMCP tools (document.modelContext) are offered too, unless webmcp="off".
//
// See web/WIDGET.md for what the host page must serve and set.
import { AssistantSession, describeError } from "./ui/assistant-session.js";
import { ChatView } from "./ui/chat-view.js";
import { ConfirmDialog } from "./ui/confirm-dialog.js";
import { checkHostToolParameters } from "./agent/host-tool-spec.js";
import { describeBackend, formatBytes, formatPercent, formatRate } from "./ui/format.js";
import { storageNotice } from "./ui/storage-notice.js";
import { WorkerFrame } from "./widget/framed-workers.js";
import { buildWidgetDom } from "./widget/template.js";
import { workerUrlFor } from "./widget/worker-bootstrap.js";
import { PageTools } from "./webmcp/page-tools.js";

const APP_ROOT = new URL("../", import.meta.url);
const CSS_BASE = new URL("static/css/", APP_ROOT);
const MODEL_WORKER_URL = new URL("runtime/model-worker.js", import.meta.url);
const AGENT_WORKER_URL = new URL("agent/agent-worker.js", import.meta.url);

export class BotpsyChat extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({ mode: "open" });
    this.hostToolNames = [];
    this.started = null;
  }

  connectedCallback() {
    if (this.parts) return;
    const floating = this.getAttribute("mode") === "floating";
    const heading = this.getAttribute("heading") || "Assistant";
    this.parts = buildWidgetDom(this.shadowRoot, { cssBase: CSS_BASE, heading, floating });
    this.view = new ChatView(this.parts.log);
    this.session = new AssistantSession({
      view: this.view,
      confirmDialog: new ConfirmDialog(this.shadowRoot),
      modelClientOptions: { startWorker: () => this.#startWorker(MODEL_WORKER_URL, "botpsy-model") },
      agentOptions: {
        storeName: this.getAttribute("store") || "botpsy-widget",
        startWorker: () => this.#startWorker(AGENT_WORKER_URL, "botpsy-agent"),
      },
    });
    this.session.setSettings({
      thinking: this.hasAttribute("thinking"),
      temperature: Number(this.getAttribute("temperature") ?? 0.7),
    });
    // The tools this page registered with WebMCP, beside those given to registerTool (which win a
    // name both have): read once the model is loaded, kept current as the page changes them.
    this.pageTools = this.getAttribute("webmcp") === "off" ? null : new PageTools({
      session: this.session,
      skip: () => new Set(this.hostToolNames),
      onChange: () => { if (this.session.ready) this.#applyToolPolicy(); },
    });
    this.#wire(floating);
    if (this.hasAttribute("autostart")) this.start();
  }

  /** Adds a tool backed by the host page: {name, description, parameters, handler, confirm}. */
  registerTool(tool) {
    if (!tool || typeof tool.name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tool.name)) {
      throw new TypeError("registerTool: `name` must be an identifier such as product_search");
    }
    if (typeof tool.handler !== "function") throw new TypeError(`registerTool(${tool.name}): \`handler\` must be a function`);
    // checked now: before start() the tool waits for the agent, and its error would surface only at a later turn
    if (tool.parameters !== undefined) checkHostToolParameters(tool.name, tool.parameters);
    const confirm = tool.confirm ?? true;
    this.session.registerTool({ ...tool, confirm, sideEffects: tool.sideEffects ?? confirm });
    this.hostToolNames.push(tool.name);
    if (this.session.ready) {
      this.pageTools?.refresh(); // a WebMCP tool of the same name now gives way to this one
      this.#applyToolPolicy();
    }
  }

  /** Loads the model and the agent (once); resolves to the runtime's load info. */
  start() {
    this.started ??= this.#start().catch((error) => {
      this.started = null;
      throw error;
    });
    return this.started;
  }

  async ask(text) {
    await this.start();
    return this.session.ask(String(text));
  }

  newChat() {
    this.session.newChat();
  }

  get backendInfo() {
    return this.session?.info ?? null;
  }

  async #start() {
    const { parts } = this;
    const model = this.getAttribute("model");
    if (!model) {
      const message = "No model given: set the model attribute, e.g. model=\"models/smollm2-135m/\".";
      this.#fail(message);
      throw new Error(message);
    }
    parts.start.disabled = true;
    parts.progress.hidden = false;
    parts.badge.textContent = "Loading…";
    // A worker the page's policy forbids fails with a bare "script error": the violation says why.
    const violations = new Set();
    const onViolation = (event) => violations.add(event.effectiveDirective);
    document.addEventListener("securitypolicyviolation", onViolation);
    try {
      await this.#openWorkerFrame();
      const info = await this.session.loadModel(new URL(model, APP_ROOT).href, {
        backend: this.getAttribute("backend") || "auto",
        dtype: this.getAttribute("dtype") || undefined,
        onProgress: (event) => this.#showProgress(event),
      });
      this.#applyToolPolicy();
      await this.pageTools?.start();
      parts.starter.hidden = true;
      parts.badge.dataset.state = "ready";
      parts.badge.textContent = describeBackend(info);
      parts.badge.title = info.reason || "";
      if (this.frameProblem) {
        this.view.addNotice("Running under this page's own security policy, not BotPsy's.",
          { hint: `${this.frameProblem}. See WIDGET.md: allow frame-src ${APP_ROOT.origin}.` });
      }
      const notKept = storageNotice(info.storage);
      if (notKept) this.view.addNotice(notKept.text, { hint: notKept.hint });
      if (!globalThis.crossOriginIsolated) {
        this.view.addNotice("Running single-threaded (slower).",
          { hint: "This page is not cross-origin isolated; see WIDGET.md to enable threads." });
      }
      parts.input.disabled = false;
      parts.send.disabled = false;
      parts.input.placeholder = "Ask something…";
      this.dispatchEvent(new CustomEvent("botpsy-ready", { detail: info }));
      return info;
    } catch (error) {
      const blocked = [...violations].filter((directive) => directive !== "frame-src");
      this.#fail(`Could not start the assistant: ${describeError(error)}${blocked.length || blockedByPolicy(error)
        ? `. This page's Content-Security-Policy blocks its workers (${blocked.join(", ") || "worker-src"}): `
          + `allow frame-src ${APP_ROOT.origin} (or worker-src blob: with script-src and connect-src `
          + `${APP_ROOT.origin}); see WIDGET.md` : ""}`);
      parts.start.disabled = false;
      throw error;
    } finally {
      document.removeEventListener("securitypolicyviolation", onViolation);
    }
  }

  // On another origin, the workers run in a frame of ours, under BotPsy's policy (framed-workers.js);
  // if this page's policy forbids the frame, they run from blob: URLs under this page's policy.
  async #openWorkerFrame() {
    if (MODEL_WORKER_URL.origin === location.origin || this.workerFrame || this.frameProblem) return;
    try {
      this.workerFrame = await WorkerFrame.open();
    } catch (error) {
      this.frameProblem = describeError(error);
      console.warn(`botpsy-chat: ${this.frameProblem}; its workers run under this page's policy instead`);
    }
  }

  #startWorker(url, name) {
    if (this.workerFrame) return this.workerFrame.start(url.href, name);
    return new Worker(workerUrlFor(url.href), { type: "module", name });
  }

  // Host tools (and the page's WebMCP tools) always; built-in tools only those the `tools` attribute
  // allows ("all" for every one).
  #applyToolPolicy() {
    const allowed = (this.getAttribute("tools") || "").split(",").map((name) => name.trim()).filter(Boolean);
    const everything = allowed.includes("all");
    const fromPage = new Set(this.pageTools?.names() ?? []);
    const enabledTools = this.session.tools().map((tool) => tool.name)
      .filter((name) => this.hostToolNames.includes(name) || fromPage.has(name) || everything || allowed.includes(name));
    this.session.setSettings({ enabledTools, allowNetwork: false });
  }

  #showProgress(event) {
    const { progress, progressText } = this.parts;
    const fraction = Number.isFinite(event.percent) ? event.percent / 100 : event.total ? event.loaded / event.total : null;
    if (fraction === null) progress.removeAttribute("value");
    else progress.value = fraction;
    progressText.textContent = event.stage === "download" && event.total
      ? `Downloading ${formatBytes(event.loaded)} of ${formatBytes(event.total)} (${formatPercent(fraction)})`
      : `${event.stage}…`;
  }

  #fail(message) {
    this.parts.badge.dataset.state = "error";
    this.parts.badge.textContent = "Not running";
    this.parts.progressText.textContent = message;
    this.dispatchEvent(new CustomEvent("botpsy-error", { detail: { message } }));
  }

  #wire(floating) {
    const { parts, session } = this;
    parts.start.addEventListener("click", () => this.start().catch(() => {}));
    parts.newChat.addEventListener("click", () => this.newChat());
    parts.form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = parts.input.value.trim();
      if (!text || session.busy || !session.ready) return;
      parts.input.value = "";
      session.ask(text).catch((error) => this.view.addNotice(describeError(error), { kind: "error" }));
    });
    parts.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        parts.form.requestSubmit();
      }
    });
    parts.stop.addEventListener("click", () => session.stop());
    session.addEventListener("status", ({ detail: { busy } }) => {
      parts.send.hidden = busy;
      parts.stop.hidden = !busy;
    });
    session.addEventListener("stats", ({ detail }) => {
      if (parts.badge.dataset.state === "ready") {
        parts.badge.textContent = `${describeBackend(session.info)} · ${formatRate(detail.tokensPerSecond)}`;
      }
    });
    session.addEventListener("message", ({ detail }) =>
      this.dispatchEvent(new CustomEvent("botpsy-message", { detail })));
    session.addEventListener("toolcall", ({ detail }) =>
      this.dispatchEvent(new CustomEvent("botpsy-toolcall", { detail })));
    if (floating) {
      const toggle = (open) => {
        parts.panel.hidden = !open;
        parts.launcher.setAttribute("aria-expanded", String(open));
        if (open) (parts.input.disabled ? parts.start : parts.input).focus();
        else parts.launcher.focus();
      };
      parts.launcher.addEventListener("click", () => toggle(parts.panel.hidden));
      parts.close.addEventListener("click", () => toggle(false));
      parts.panel.addEventListener("keydown", (event) => { if (event.key === "Escape") toggle(false); });
    }
  }
}

function blockedByPolicy(error) {
  return error?.name === "SecurityError" || /Content Security Policy/i.test(String(error?.message));
}

if (!customElements.get("botpsy-chat")) customElements.define("botpsy-chat", BotpsyChat);
