// The agent in the page (docs/contracts.md section 3). Python (Pyodide) runs the
// loop, the tools and the safety policy in the agent's own worker
// (agent-worker.js); this class keeps the page's side: the model (a ModelClient),
// confirmations, host tools and the events for the UI.
//
// Why a worker (measured in headless Chromium, tests/agent/test_agent_host_browser.py
// prints the figures): with Pyodide on the page's main thread, loading it and the
// agent blocked the page in one task of 7.4-9.6 s (Python start-up is synchronous);
// in this worker the page saw no task over 50 ms during a 11-18 s cold start. A
// scripted 3-step turn took 64-110 ms on the main thread and 105-283 ms here (a
// message hop per model chunk and store call): nothing next to the model's time.
import {Approvals, canonicalJson} from "./approvals.js";
import {ConfirmedFetches} from "./confirmed-fetch.js";
import {checkHostToolParameters} from "./host-tool-spec.js";
import {RpcChannel} from "./rpc-channel.js";
import {PythonSandbox} from "../sandbox/sandbox-client.js";
import {describeUserFiles} from "./user-files.js";
import {addGenerationStats} from "./turn-stats.js";

const WORKER_URL = new URL("./agent-worker.js", import.meta.url);
export const AGENT_BUNDLE_URL = new URL("../../static/build/agent-py.zip", import.meta.url);

function defaultTimezone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || null; } catch { return null; }
}

async function fetchJson(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot read the model's ${what} (${response.status} for ${url})`);
  return response.json();
}

// A worker script from another origin (the widget) cannot be started directly: start a
// same-origin blob module that imports it.
function startWorkerAt(url) {
  const absolute = new URL(url, location.href);
  if (absolute.origin === location.origin) return new Worker(absolute, {type: "module", name: "botpsy-agent"});
  const shim = new Blob([`import ${JSON.stringify(absolute.href)};`], {type: "text/javascript"});
  return new Worker(URL.createObjectURL(shim), {type: "module", name: "botpsy-agent"});
}

export class AgentHost {
  /**
   * options: model (a loaded ModelClient); modelUrl (its folder, for tokenizer_config.json)
   * or tokenizerConfig (+ manifest) given directly; onEvent(event); confirm(request) -> {approved, arguments};
   * storeName (IndexedDB database), includeBuiltinTools (default true), workerUrl, bundleUrl,
   * timezone (IANA name for the date/time tools; default: the browser's own zone).
   * specialTokens: the tokenizer's added tokens, when there is no modelUrl to read its tokenizer.json from.
   * startWorker: () => a Worker-like object for the agent worker (the widget's framed workers).
   */
  static async create({model, modelUrl, tokenizerConfig, manifest, specialTokens = [], onEvent = () => {}, confirm,
                       storeName = "botpsy-agent", includeBuiltinTools = true, timezone = defaultTimezone(),
                       workerUrl = WORKER_URL, startWorker = () => startWorkerAt(workerUrl),
                       bundleUrl = AGENT_BUNDLE_URL} = {}) {
    if (!model || typeof model.generate !== "function") throw new Error("AgentHost.create needs a loaded model (a ModelClient)");
    const folder = modelUrl ? new URL(modelUrl, location.href) : null;
    if (!tokenizerConfig) {
      if (!folder) throw new Error("AgentHost.create needs modelUrl (the model folder) or tokenizerConfig");
      tokenizerConfig = await fetchJson(new URL("tokenizer_config.json", folder), "tokenizer_config.json");
    }
    manifest ??= model.info?.manifest ?? (folder ? await fetchJson(new URL("manifest.json", folder), "manifest.json") : {});
    const host = new AgentHost(model, onEvent, confirm, startWorker());
    try {
      host.#takeState(await host.worker.call("init", {tokenizerConfig, manifest, storeName, includeBuiltinTools,
                                                      bundleUrl: new URL(bundleUrl, location.href).href, specialTokens,
                                                      tokenizerUrl: folder ? new URL("tokenizer.json", folder).href : null}));
    } catch (error) {
      host.terminate();
      throw error;
    }
    host.setSettings({timezone});
    return host;
  }

  constructor(model, onEvent, confirm, worker) {
    this.model = model;
    this.onEvent = onEvent;
    this.confirmCallback = confirm;
    this.hostTools = new Map();
    this.generations = new Map();
    this.nextGeneration = 1;
    this.lastStats = null;   // the latest generation's
    this.turnStats = null;   // the running (or last) turn's generations added up (turn-stats.js)
    this.running = false;
    this.stopRequested = false;  // cancel() during this turn, possibly before Python began it
    this.toolList = [];
    this.conversation = null;
    this.queued = Promise.resolve();  // settings and tools sent before the next turn
    this.changesSent = 0;   // changes sent to the worker; a reply is taken only from the latest (#queue)
    // Turns and outside agents' calls (WebMCP) run one at a time: a call waits for the turn, a
    // turn for the call in the worker, calls for each other (see callForOutsideAgent).
    this.turnEnded = Promise.resolve();
    this.outsideCalls = Promise.resolve();
    this.activeOutsideCall = null;
    this.nextOutsideCall = 1;
    this.allowNetwork = false;  // the page's own record of the setting: the worker cannot change it
    this.fetches = new ConfirmedFetches();
    this.approvals = new Approvals();  // host tool calls the person approved (approvals.js)
    this.rawWorker = worker;
    this.worker = new RpcChannel(worker, this.#pageHandlers(), (event) => this.onEvent(event));
    worker.onerror = (event) => this.worker.failAll(new Error(`the agent worker failed: ${event.message ?? "script error"}`));
  }

  // What the worker (Python) asks of the page.
  #pageHandlers() {
    return {
      generateStart: ({prompt, options}) => {
        const handle = this.nextGeneration++;
        this.lastStats = null;  // the latest generation's, never an earlier one's (a refused prompt has none)
        const onStats = (stats) => {
          this.lastStats = stats;
          this.turnStats = addGenerationStats(this.turnStats, stats);
        };
        const iterator = this.model.generate(prompt, {...options, onStats});
        this.generations.set(handle, iterator[Symbol.asyncIterator]());
        return handle;
      },
      generateNext: async ({handle}) => {
        const iterator = this.generations.get(handle);
        if (!iterator) return null;
        const {done, value} = await iterator.next();
        if (done) { this.generations.delete(handle); return null; }
        return value.text ?? "";
      },
      // Python left a generation before its end (an error while handling a chunk):
      // leaving the stream cancels it in the model worker.
      generateClose: async ({handle}) => {
        const iterator = this.generations.get(handle);
        this.generations.delete(handle);
        await iterator?.return?.();
        return null;
      },
      confirm: async ({requestJson}) => {
        if (!this.confirmCallback) return JSON.stringify({approved: false});
        const request = JSON.parse(requestJson);
        if (request.caller === "outside_agent" && this.activeOutsideCall) {  // the page's words, not the worker's
          request.description = `An outside assistant (your browser's agent, which may run on someone else's `
            + `servers) asks to run ${request.name}. What it reads may leave this device; allow it only if you asked `
            + "that assistant for this.";
        } else if (request.name === "fetch_url") {  // the page's words, not the worker's: what a yes allows
          request.description = `Fetch ${request.arguments?.url}? Only this address is contacted; `
            + "its text comes back to the assistant as untrusted data.";
        } else if (this.hostTools.has(request.name)) {  // the host's own words for its tool, not the worker's
          request.description = this.hostTools.get(request.name).description;
        }
        const answer = await this.confirmCallback(request);
        const approved = Boolean(answer?.approved);
        const approvedArguments = answer?.arguments ?? request.arguments;
        if (approved && request.name === "fetch_url") this.fetches.approve(approvedArguments?.url);
        if (approved) this.approvals.grant(`${request.name}\n${canonicalJson(approvedArguments ?? {})}`);
        return JSON.stringify({approved, arguments: answer?.arguments ?? null});
      },
      // fetch_url's way out: only a URL the person approved, only with the network on (confirmed-fetch.js).
      fetchUrl: ({url}) => {
        if (!this.allowNetwork) throw new Error("network access is off: enable fetch_url in the settings");
        return this.fetches.fetch(url);
      },
      // run_python's code never runs here or in the agent worker: in a sandbox frame of its
      // own (an opaque origin without network), created on the first call (web/sandbox/).
      runPython: async ({requestJson}) => {
        this.sandbox ??= new PythonSandbox();
        return JSON.stringify(await this.sandbox.run(JSON.parse(requestJson)));
      },
      callHostTool: async ({name, argumentsJson}) => {
        const tool = this.hostTools.get(name);
        if (!tool) throw new Error(`no host tool named ${name}`);
        const args = JSON.parse(argumentsJson);
        // A tool the host wants confirmed runs only as the person approved it, whoever asks.
        if (tool.confirm && !this.approvals.take(`${name}\n${canonicalJson(args)}`)) {
          throw new Error(`the person has not approved ${name} with these arguments`);
        }
        return JSON.stringify((await tool.handler(args)) ?? null);
      },
    };
  }

  #takeState(state) {
    if (state?.tools) this.toolList = state.tools;
    if (state?.conversation) this.conversation = state.conversation;
    return state;
  }

  // Sends a change now; its failure surfaces at the next runTurn. The worker applies changes in
  // order, so the reply to an earlier one is older than what this side already shows (a tool
  // registered since): only the latest change's reply replaces the tool list.
  #queue(name, args) {
    const change = ++this.changesSent;
    const sent = this.worker.call(name, args)
      .then((state) => (change === this.changesSent ? this.#takeState(state) : state));
    this.queued = Promise.all([this.queued, sent]);
    return sent;
  }

  /** A tool from the host page: {name, description, parameters, handler, confirm, sideEffects, untrustedOutput}. */
  registerTool({name, description = "", parameters = {type: "object", properties: {}}, handler,
                confirm = true, sideEffects = true, untrustedOutput = false}) {
    if (typeof name !== "string" || !name) throw new Error("registerTool needs a name");
    if (typeof handler !== "function") throw new Error(`registerTool(${name}): handler must be a function`);
    checkHostToolParameters(name, parameters);  // here, not at the next turn: the page learns which name is wrong
    // Python asks before a side-effecting tool that is not pre-approved: the page then checks for that yes.
    this.hostTools.set(name, {handler, confirm: confirm !== false && sideEffects !== false, description: String(description)});
    this.toolList = [...this.toolList.filter((tool) => tool.name !== name), {name, description, parameters, enabled: true, enabledByDefault: true}];
    return this.#queue("registerTool", {specJson: JSON.stringify({name, description, parameters, confirm,
      side_effects: sideEffects, untrusted_output: untrustedOutput})});
  }

  /** Forgets a host tool (a page's WebMCP tool that went away); built-in tools cannot be removed. */
  unregisterTool(name) {
    this.hostTools.delete(name);
    this.toolList = this.toolList.filter((tool) => tool.name !== name);
    return this.#queue("unregisterTool", {name});
  }

  /** The tools an outside agent (WebMCP) may be offered: the enabled ones, [{name, description, parameters, read_only}]. */
  async offeredTools() {
    await this.queued;
    return this.worker.call("offeredTools");
  }

  /**
   * One call from an outside agent (web/webmcp/), through the model's checks and the page's
   * confirmation (py/botpsy_agent/outside_calls.py); its events carry caller "outside_agent".
   * Resolves to {ok, result}: result is the text that agent gets (an error text when denied).
   */
  async callForOutsideAgent(name, args) {
    const previous = this.outsideCalls;
    let finished;
    this.outsideCalls = new Promise((resolve) => { finished = resolve; });
    try {
      await previous;
      while (this.running) await this.turnEnded;
      const id = `outside_${this.nextOutsideCall++}`;
      const call = this.queued.then(() => this.worker.call("outsideCall",
        {id, name: String(name), argumentsJson: JSON.stringify(args ?? {})}));
      this.activeOutsideCall = call.catch(() => {});
      return await call;
    } finally {
      this.activeOutsideCall = null;
      finished();
    }
  }

  /** Runs one user turn; events go to onEvent; resolves to the final event. */
  async runTurn(userText) {
    if (this.running) throw new Error("a turn is already running; wait for it or cancel it");
    this.running = true;
    this.stopRequested = false;
    this.turnStats = null;
    let ended;
    this.turnEnded = new Promise((resolve) => { ended = resolve; });
    try {
      await this.activeOutsideCall;  // an outside agent's call in the worker ends first
      await this.queued;
      // A Stop while the settings were still on their way must not be lost.
      const {final, ...state} = await this.worker.call("runTurn", {text: String(userText), stopped: this.stopRequested});
      this.#takeState(state);
      return final;
    } finally {
      this.queued = Promise.resolve();
      this.running = false;
      ended();
    }
  }

  /**
   * Runs what the next turn's prompts start with (system prompt, tool schemas, the conversation
   * so far) into the model now, so that the turn computes only the user's message: call it while
   * the person types, and again after changing settings or tools. A turn started meanwhile waits
   * for it and reuses it. Resolves to the model's prefill answer ({promptTokens, reusedTokens,
   * restoredTokens, prefillMs, cancelled, promptState, routedGrammars}), or null for a model without
   * prefill. routedGrammars: how many grammars of first steps routed to one topic were compiled ahead.
   */
  async warmUp() {
    if (typeof this.model.prefill !== "function") return null;
    await this.queued;
    const prompt = await this.worker.call("promptPrefix");
    if (!prompt) return null;
    // Before the first message the prefix is the system prompt and tools alone, the same on the
    // next visit: the runtime keeps its state in the browser and restores it then (prompt-state.js).
    const persist = !this.conversation?.messages?.length;
    // The turn's logits processors too: its tool-call grammar is compiled now, not on its first token.
    const logitsProcessors = await this.worker.call("logitsProcessors");
    const answer = await this.model.prefill(prompt, {persist, logitsProcessors});
    return {...answer, routedGrammars: answer?.cancelled ? 0 : await this.#compileRoutedGrammars()};
  }

  /**
   * A message naming one topic ("my todos") has a first step whose grammar offers that topic's tools
   * (py/botpsy_agent/topic_routing.py): each is compiled now, one per worker message (nothing runs:
   * the model's state is untouched), and none once a turn has started: a turn waits for at most one
   * compile. Resolves to how many were compiled (or found compiled). A compile that fails ends the loop
   * quietly: the prefill is done, and a turn that needs that grammar reports the error itself.
   */
  async #compileRoutedGrammars() {
    if (typeof this.model.prepareLogitsProcessors !== "function") return 0;
    let compiled = 0;
    for (const logitsProcessors of await this.worker.call("routedLogitsProcessors")) {
      if (this.running) break;
      try {
        await this.model.prepareLogitsProcessors(logitsProcessors);
      } catch {
        break;
      }
      compiled++;
    }
    return compiled;
  }

  /** Stops the turn: the current generation ends within a token, a run_python program in
   * flight is stopped, and no further tool runs. */
  cancel() {
    if (this.running) this.stopRequested = true;
    this.worker.call("cancel").catch(() => {});
    this.sandbox?.stop();
    // A generation Python has started but the model worker has not been sent yet would
    // escape model.cancel(): close every open one (leaving a generate cancels it).
    for (const [handle, iterator] of this.generations) {
      this.generations.delete(handle);
      iterator.return?.().catch(() => {});
    }
    return this.model.cancel?.();
  }

  /**
   * {thinking, temperature, enabledTools, allowNetwork, timezone, maxSteps, maxTokens, systemPrompt, toolCalls}.
   * enabledTools: names of registered tools, or null for the default set (see tools()).
   * toolCalls: "auto" (default: calls constrained to the tools' schemas), "required" or a tool's name
   * (the turn's first reply must call one / that one), "none" (no call), "off" (unconstrained).
   */
  setSettings(settings) {
    if ("allowNetwork" in settings) this.allowNetwork = Boolean(settings.allowNetwork);
    return this.#queue("setSettings", {settings});
  }

  /**
   * Every registered tool: [{name, description, parameters, enabled, enabledByDefault}]. `enabled`: the
   * model sees it now; without setSettings({enabledTools}) that is the default set (enabledByDefault:
   * the common built-in tools and every host tool). setSettings({enabledTools: null}) goes back to it.
   */
  tools() { return this.toolList; }

  /** The names of the tools the model sees now. */
  enabledTools() { return this.toolList.filter((tool) => tool.enabled !== false).map((tool) => tool.name); }

  /**
   * Reminders whose time has come: open todos with a due time at or before `now` (a Date, default
   * now), soonest first: [{id, text, due}]. The agent does not run in the background: call this on
   * a timer to notify the user.
   */
  async dueReminders(now = new Date()) {
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new Error("dueReminders(now): now must be a valid Date");
    await this.queued.catch(() => {});  // a failed setting surfaces at the next runTurn, not here
    return this.worker.call("dueReminders", {nowIso: now.toISOString()});
  }

  newChat() {
    this.conversation = {...(this.conversation ?? {}), messages: []};
    return this.#queue("newChat");
  }

  /** The conversation as of the end of the last turn (JSON-ready). */
  exportConversation() { return structuredClone(this.conversation); }

  /** Replaces the conversation; rejects, naming the problem, when `data` is not an export. */
  restoreConversation(data) { return this.#queue("restoreConversation", {dataJson: JSON.stringify(data)}); }

  async addUserFiles(files) {
    await this.#queue("addUserFiles", {filesJson: JSON.stringify(await describeUserFiles(files))});
  }

  terminate() {
    this.sandbox?.dispose();
    this.rawWorker.terminate();
    this.worker.failAll(new Error("the agent worker was terminated"));
  }
}
