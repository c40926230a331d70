// The agent in the page (docs/contracts.md section 3). Python (Pyodide) runs
// the loop, tools and safety policy; this class hands it the page's
// capabilities as the registered module `botpsy_host` (see py/botpsy_agent/bridge.py)
// and forwards the agent's events to the page.
//
// Pyodide runs on the page's main thread, not in a worker of its own: the model
// already has its worker, the agent's Python work per step is parsing and
// templating, and confirmations, host tools, files and IndexedDB are page things
// that a second worker would have to proxy message by message. Measured in
// headless Chromium (tests/agent/test_agent_host_browser.py prints it): a
// 3-step scripted turn took 116 ms with no main-thread task over 50 ms; loading
// Pyodide + the bundle blocked the main thread in 3 tasks, longest 487 ms
// (975 ms in all) of a 15.7 s cold start. Long-running Python (run_python) is
// the one thing that would freeze the page; that tool bounds its own time.
import {IndexedDbStore} from "./indexeddb-store.js";
import {loadAgentPython} from "./python-runtime.js";
import {describeUserFiles} from "./user-files.js";

const HOST_MODULE = "botpsy_host";

function defaultTimezone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || null; } catch { return null; }
}

async function fetchJson(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot read the model's ${what} (${response.status} for ${url})`);
  return response.json();
}

export class AgentHost {
  /**
   * options: model (a ModelClient, loaded), modelUrl (its folder; for tokenizer_config.json),
   * or tokenizerConfig/manifest given directly; onEvent(event); confirm(request) -> {approved, arguments};
   * storeName (IndexedDB database), includeBuiltinTools (default true), bundleUrl.
   */
  static async create({model, modelUrl, tokenizerConfig, manifest, onEvent = () => {}, confirm,
                       storeName = "botpsy-agent", includeBuiltinTools = true, bundleUrl} = {}) {
    if (!model || typeof model.generate !== "function") throw new Error("AgentHost.create needs a loaded model (a ModelClient)");
    if (!tokenizerConfig) {
      if (!modelUrl) throw new Error("AgentHost.create needs modelUrl (the model folder) or tokenizerConfig");
      tokenizerConfig = await fetchJson(new URL("tokenizer_config.json", new URL(modelUrl, location.href)), "tokenizer_config.json");
    }
    manifest ??= model.info?.manifest ?? (modelUrl ? await fetchJson(new URL("manifest.json", new URL(modelUrl, location.href)), "manifest.json") : {});
    const [pyodide, store] = await Promise.all([loadAgentPython({bundleUrl}), IndexedDbStore.open(storeName)]);
    const host = new AgentHost(model, store, onEvent, confirm);
    pyodide.registerJsModule(HOST_MODULE, host.#capabilities());
    const sessions = pyodide.pyimport("botpsy_agent.browser_session");
    host.session = sessions.create_session(undefined, JSON.stringify(tokenizerConfig), JSON.stringify(manifest), includeBuiltinTools);
    host.setSettings({timezone: defaultTimezone()});
    return host;
  }

  constructor(model, store, onEvent, confirm) {
    this.model = model;
    this.store = store;
    this.onEvent = onEvent;
    this.confirmCallback = confirm;
    this.hostTools = new Map();
    this.generations = new Map();
    this.nextGeneration = 1;
    this.settings = {allowNetwork: false};
    this.lastStats = null;
    this.running = null;
  }

  // What Python may call. Only strings, numbers, booleans and null cross.
  #capabilities() {
    return {
      generate_start: (prompt, optionsJson) => {
        const handle = this.nextGeneration++;
        const options = {...JSON.parse(optionsJson), onStats: (stats) => { this.lastStats = stats; }};
        this.generations.set(handle, this.model.generate(prompt, options)[Symbol.asyncIterator]());
        return handle;
      },
      generate_next: async (handle) => {
        const iterator = this.generations.get(handle);
        if (!iterator) return undefined;
        const {done, value} = await iterator.next();
        if (done) { this.generations.delete(handle); return undefined; }
        return value.text ?? "";
      },
      store_get: (collection, key) => this.store.get(collection, key),
      store_put: (collection, key, json) => this.store.put(collection, key, json),
      store_delete: (collection, key) => this.store.delete(collection, key),
      store_items: (collection) => this.store.items(collection),
      confirm: async (requestJson) => {
        if (!this.confirmCallback) return JSON.stringify({approved: false});
        const answer = await this.confirmCallback(JSON.parse(requestJson));
        return JSON.stringify({approved: Boolean(answer?.approved), arguments: answer?.arguments ?? null});
      },
      fetch_text: async (url) => {
        if (!this.settings.allowNetwork) throw new Error("network access is off: enable fetch_url in the settings");
        const response = await fetch(url);
        if (!response.ok) throw new Error(`fetching ${url} failed with HTTP ${response.status}`);
        return response.text();
      },
      call_host_tool: async (name, argumentsJson) => {
        const tool = this.hostTools.get(name);
        if (!tool) throw new Error(`no host tool named ${name}`);
        return JSON.stringify((await tool.handler(JSON.parse(argumentsJson))) ?? null);
      },
      emit: (eventJson) => { this.onEvent(JSON.parse(eventJson)); },
    };
  }

  /** A tool from the host page: {name, description, parameters, handler, confirm, sideEffects, untrustedOutput}. */
  registerTool({name, description = "", parameters = {type: "object", properties: {}}, handler,
                confirm = true, sideEffects = true, untrustedOutput = false}) {
    if (typeof handler !== "function") throw new Error(`registerTool(${name}): handler must be a function`);
    this.session.register_host_tool(JSON.stringify({name, description, parameters, confirm,
      side_effects: sideEffects, untrusted_output: untrustedOutput}));
    this.hostTools.set(name, {handler});
  }

  /** Runs one user turn; events go to onEvent; resolves to the final event. */
  async runTurn(userText) {
    if (this.running) throw new Error("a turn is already running; wait for it or cancel it");
    this.running = this.session.run_turn(String(userText));
    try {
      return JSON.parse(await this.running);
    } finally {
      this.running = null;
    }
  }

  /** Stops the turn: the current generation ends within a token and no further tool runs. */
  cancel() {
    this.session.cancel();
    return this.model.cancel?.();
  }

  /** {thinking, temperature, enabledTools, allowNetwork, timezone, maxSteps, maxTokens, systemPrompt}. */
  setSettings(settings) {
    if ("allowNetwork" in settings) this.settings.allowNetwork = Boolean(settings.allowNetwork);
    this.session.set_settings(JSON.stringify(settings));
  }

  /** The tools the model can see: [{name, description, parameters}]. */
  tools() { return JSON.parse(this.session.tool_names()); }

  newChat() { this.session.new_chat(); }
  exportConversation() { return JSON.parse(this.session.export_conversation()); }
  restoreConversation(data) { this.session.restore_conversation(JSON.stringify(data)); }

  async addUserFiles(files) {
    this.session.add_user_files(JSON.stringify(await describeUserFiles(files)));
  }
}
