// Connects the model runtime and the agent to a ChatView: loads a model, runs turns,
// turns agent events into text, thinking and tool cards, asks before side effects.
// Used by the demo page and by the <botpsy-chat> widget; it knows nothing of their layout.

import { untrustedReadsOf } from "./chat-view.js";

const RUNTIME_URL = new URL("../runtime/model-client.js", import.meta.url).href;
const AGENT_URL = new URL("../agent/agent-host.js", import.meta.url).href;

export class AssistantSession extends EventTarget {
  /**
   * view: a ChatView. confirmDialog: a ConfirmDialog.
   * Emits "status" ({detail: {busy}}), "stats" ({detail: {tokensPerSecond, live}}),
   * "message" ({detail: transcript record}), "toolcall" ({detail: tool record}) and "warmup"
   * ({detail: the model's prefill answer}: the prompt start is ready, maybe stored for the next visit).
   */
  constructor({ view, confirmDialog, modelClientOptions = {}, agentOptions = {} }) {
    super();
    this.agentOptions = agentOptions; // e.g. {includeBuiltinTools: false, storeName}
    this.modelClientOptions = modelClientOptions; // e.g. {workerUrl} for the widget on another origin
    this.view = view;
    this.confirmDialog = confirmDialog;
    this.model = null;
    this.agent = null;
    this.info = null;
    this.busy = false;
    this.pendingTools = [];
    this.settings = {};
    this.turn = null;
  }

  /** Loads (or switches to) a model folder; onProgress gets the runtime's progress events. */
  async loadModel(folderUrl, { backend = "auto", dtype, onProgress } = {}) {
    const [{ ModelClient }, { AgentHost }] = await Promise.all([
      importPart(RUNTIME_URL, "the model runtime"),
      importPart(AGENT_URL, "the agent"),
    ]);
    if (this.model) await this.unload();
    this.model = new ModelClient(this.modelClientOptions);
    this.info = await this.model.load(folderUrl, { backend, dtype, onProgress });
    onProgress?.({ stage: "agent", percent: null });
    this.agent = await AgentHost.create({
      model: this.model,
      modelUrl: folderUrl,
      ...this.agentOptions,
      onEvent: (event) => this.#onAgentEvent(event),
      confirm: (request) => this.#confirm(request),
    });
    for (const tool of this.pendingTools) this.agent.registerTool(tool);
    this.agent.setSettings(this.settings);
    this.folderUrl = folderUrl;
    this.#warmUp();
    return this.info;
  }

  async unload() {
    clearTimeout(this.warmUpTimer);
    const model = this.model;
    this.agent?.terminate?.();
    this.model = null;
    this.agent = null;
    this.info = null;
    if (model) {
      await model.unload().catch(() => {});
      model.terminate?.();
    }
  }

  get ready() {
    return Boolean(this.agent);
  }

  /** The tools the model can see: [{name, description, parameters}]. */
  tools() {
    return this.agent?.tools() ?? [];
  }

  registerTool(tool) {
    this.pendingTools = [...this.pendingTools.filter((pending) => pending.name !== tool.name), tool];
    this.agent?.registerTool(tool);
    this.#warmUp();
  }

  /** Removes a host tool registered with registerTool (a page's WebMCP tool that went away). */
  unregisterTool(name) {
    this.pendingTools = this.pendingTools.filter((tool) => tool.name !== name);
    this.agent?.unregisterTool(name);
    this.#warmUp();
  }

  /** What an outside agent (WebMCP) may be offered: [{name, description, parameters, read_only}]. */
  async offeredTools() {
    return this.agent ? this.agent.offeredTools() : [];
  }

  /** A call from an outside agent (web/webmcp/offer.js): shown as its own card; resolves to {ok, result}. */
  async callForOutsideAgent(name, args) {
    if (!this.agent) throw new Error("BotPsy has no model loaded, so its tools are not available right now");
    return this.agent.callForOutsideAgent(name, args);
  }

  setSettings(settings) {
    this.settings = { ...this.settings, ...settings };
    this.agent?.setSettings(this.settings);
    this.#warmUp();
  }

  // The system prompt and tool schemas go into the model while the person types, so that
  // the next answer starts sooner (the prompt's long shared start is already computed).
  // Several changes in a row (a page registering its tools) make one warm-up.
  #warmUp() {
    clearTimeout(this.warmUpTimer);
    this.warmUpTimer = setTimeout(() => {
      if (!this.agent || this.busy) return;
      this.agent.warmUp()
        .then((result) => { this.lastWarmUp = result; this.#emit("warmup", result); })
        .catch((error) => console.info(`botpsy: could not prepare the prompt ahead (${error.message})`));
    }, 200);
  }

  addUserFiles(files) {
    if (!this.agent) throw new Error("Load a model first, then add files.");
    return this.agent.addUserFiles(files);
  }

  /** Runs one user turn to the end (or until stopped). */
  async ask(text, { files = [] } = {}) {
    if (!this.agent) throw new Error("No model is loaded yet. Pick a model and press Load.");
    if (this.busy) throw new Error("The assistant is still answering. Wait, or press Stop.");
    this.view.addUserMessage(text, { files });
    this.#emit("message", this.view.transcript.at(-1));
    const turn = this.view.startAssistantTurn();
    this.turn = turn;
    this.stopped = false;
    this.#setBusy(true);
    this.rate = { started: performance.now(), pieces: 0, finalStats: null };
    try {
      await this.agent.runTurn(text);
      this.#takeStats(this.agent.turnStats);
    } catch (error) {
      if (!this.stopped) turn.showError(describeError(error), "Try again, or start a new chat.");
    } finally {
      const elapsedMs = performance.now() - this.rate.started;
      const stopReason = this.rate.agentStopReason ?? this.rate.finalStats?.stopReason;
      turn.finish({ stats: { ...(this.rate.finalStats || {}), elapsedMs, stopReason }, stopped: this.stopped });
      this.turn = null;
      this.#setBusy(false);
      this.#emit("message", turn.record);
      this.#warmUp();
    }
  }

  stop() {
    if (!this.busy) return;
    this.stopped = true;
    this.model?.cancel();
    this.agent?.cancel?.();
  }

  newChat() {
    this.stop();
    this.agent?.newChat();
    this.view.clear();
    this.#warmUp();
  }

  exportConversation() {
    try {
      return this.agent?.exportConversation() ?? null;
    } catch {
      return null;
    }
  }

  async storageUsage() {
    if (this.model) return this.model.storageUsage();
    const { ModelClient } = await importPart(RUNTIME_URL, "the model runtime");
    const client = new ModelClient(this.modelClientOptions);
    try {
      return await client.storageUsage();
    } finally {
      client.terminate();
    }
  }

  async deleteModel(folderUrl) {
    if (this.folderUrl === folderUrl) {
      await this.unload();
      this.folderUrl = null;
    }
    const { ModelClient } = await importPart(RUNTIME_URL, "the model runtime");
    const client = new ModelClient(this.modelClientOptions);
    try {
      return await client.deleteModel(folderUrl);
    } finally {
      client.terminate();
    }
  }

  // --- agent events ---------------------------------------------------------
  #onAgentEvent(event) {
    if (event.caller === "outside_agent") {
      this.#onOutsideAgentEvent(event);
      return;
    }
    const turn = this.turn;
    if (!turn) return;
    switch (event.type) {
      case "text":
        this.#countPiece();
        turn.appendText(event.text ?? event.delta ?? "");
        break;
      case "thinking":
        this.#countPiece();
        turn.appendThinking(event.text ?? event.delta ?? "");
        break;
      case "tool_call_delta":
        this.#countPiece();
        if (event.name) turn.showFormingCall(event.index ?? 0, event.name);
        break;
      case "tool_call": {
        const card = turn.addToolCall({ id: event.id, name: event.name, arguments: event.arguments, index: event.index,
          namedByPerson: event.named_by_person === true, saidWhen: event.said_when ?? null });
        if (event.error) card.setResult({ error: event.error });
        this.#emit("toolcall", card.record);
        break;
      }
      case "numbers_unsourced":  // the words stated figures nobody gave: the model is asked for a call
        turn.withdrawStreamedWords();
        break;
      case "confirmation":
        turn.findCard(event.id, event.name)?.setStatus("awaiting");
        break;
      case "tool_result": {
        const card = turn.findCard(event.id, event.name);
        if (card) {
          card.setResult(cardResult(event));
          this.#emit("toolcall", card.record);
        }
        break;
      }
      case "final":
        if (!event.cancelled) turn.showFinalAnswer(event.text);
        // the agent stopped a generation that kept repeating itself (py/botpsy_agent/repetition.py)
        if (event.stopped_repeating) this.rate.agentStopReason = "repeating";
        turn.markUntrustedReads(untrustedReadsOf(event));
        break;
      case "error":
        turn.showError(event.message || "The assistant hit an error.", event.hint || "Try again, or start a new chat.");
        break;
      default:
        break;
    }
  }

  // An outside agent's call (web/webmcp/) is not part of a turn: its card stands alone in the log.
  #onOutsideAgentEvent(event) {
    this.outsideCards ??= new Map();
    if (event.type === "tool_call") {
      const card = this.view.addOutsideToolCall({ id: event.id, name: event.name, arguments: event.arguments });
      this.outsideCards.set(event.id, card);
      this.#emit("toolcall", card.record);
    } else if (event.type === "confirmation") {
      this.outsideCards.get(event.id)?.setStatus("awaiting");
    } else if (event.type === "tool_result") {
      const card = this.outsideCards.get(event.id);
      this.outsideCards.delete(event.id);
      if (card) {
        card.setResult(cardResult(event));
        this.#emit("toolcall", card.record);
      }
    }
  }

  async #confirm(request) {
    const card = request.caller === "outside_agent" ? this.outsideCards?.get(request.id)
      : this.turn?.findCard(request.id, request.name);
    card?.setStatus("awaiting");
    const answer = await this.confirmDialog.ask(request);
    if (card) {
      card.setStatus(answer.approved ? "approved" : "denied");
      if (answer.approved) card.setArguments(answer.arguments);
    }
    return answer;
  }

  #countPiece() {
    this.rate.pieces += 1;
    if (this.rate.finalStats) return;
    const seconds = (performance.now() - this.rate.started) / 1000;
    if (seconds > 0.25) this.#emit("stats", { tokensPerSecond: this.rate.pieces / seconds, live: true });
  }

  /** The turn's figures: every generation of it added up (agent-host.js, turn-stats.js). */
  #takeStats(stats) {
    if (!stats) return;
    this.rate.finalStats = stats;
    this.#emit("stats", { tokensPerSecond: stats.tokensPerSecond, live: false });
  }

  #setBusy(busy) {
    this.busy = busy;
    this.#emit("status", { busy });
  }

  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}

/** What a tool card shows of a tool_result event. */
function cardResult(event) {
  const failed = event.ok === false;
  return {
    result: failed ? null : event.result,
    error: failed ? String(event.result ?? event.error ?? "failed") : event.error,
    durationMs: event.duration_ms ?? event.durationMs,
    untrusted: Boolean(event.untrusted),
    untrustedSource: event.untrusted_source ?? null,
    storedMarked: event.stored_marked ?? null,
  };
}

async function importPart(url, what) {
  try {
    return await import(url);
  } catch (error) {
    throw new Error(`Could not load ${what} (${url}): ${describeError(error)}. Reload the page; if it persists, the app files are incomplete.`);
  }
}

export function describeError(error) {
  if (!error) return "Unknown error";
  if (typeof error === "string") return error;
  return error.message || String(error);
}
