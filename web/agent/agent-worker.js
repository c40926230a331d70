// The agent's own module worker: Pyodide, the agent's Python and the IndexedDB
// store live here, so loading Python (seconds of synchronous work) never freezes
// the page. The model, confirmations and host tools stay on the page; Python
// reaches them through `botpsy_host` (py/botpsy_agent/bridge.py), whose calls
// this worker forwards over the RpcChannel.
import {IndexedDbStore} from "./indexeddb-store.js";
import {loadAgentPython} from "./python-runtime.js";
import {RpcChannel} from "./rpc-channel.js";

let session = null;
let store = null;
let allowNetwork = false;
let page = null;

function capabilities() {
  return {
    generate_start: (prompt, optionsJson) => page.call("generateStart", {prompt, options: JSON.parse(optionsJson)}),
    generate_next: async (handle) => (await page.call("generateNext", {handle})) ?? undefined,
    generate_close: (handle) => page.call("generateClose", {handle}),
    store_get: (collection, key) => store.get(collection, key),
    store_put: (collection, key, json) => store.put(collection, key, json),
    store_delete: (collection, key) => store.delete(collection, key),
    store_items: (collection) => store.items(collection),
    confirm: (requestJson) => page.call("confirm", {requestJson}),
    fetch_text: async (url) => {
      if (!allowNetwork) throw new Error("network access is off: enable fetch_url in the settings");
      const response = await fetch(url);
      if (!response.ok) throw new Error(`fetching ${url} failed with HTTP ${response.status}`);
      return response.text();
    },
    call_host_tool: (name, argumentsJson) => page.call("callHostTool", {name, argumentsJson}),
    // run_python: the code runs in the page's sandbox frame, never in this worker (web/sandbox/).
    run_python: (requestJson) => page.call("runPython", {requestJson}),
    emit: (eventJson) => page.sendEvent(JSON.parse(eventJson)),
  };
}

function requireSession() {
  if (!session) throw new Error("the agent worker is not initialised yet");
  return session;
}

function state() {
  return {tools: JSON.parse(session.tool_names()), conversation: JSON.parse(session.export_conversation())};
}

const handlers = {
  async init({tokenizerConfig, manifest, storeName, includeBuiltinTools, bundleUrl}) {
    const [pyodide, opened] = await Promise.all([loadAgentPython({bundleUrl}), IndexedDbStore.open(storeName)]);
    store = opened;
    pyodide.registerJsModule("botpsy_host", capabilities());
    const sessions = pyodide.pyimport("botpsy_agent.browser_session");
    session = sessions.create_session(undefined, JSON.stringify(tokenizerConfig), JSON.stringify(manifest ?? {}),
                                      includeBuiltinTools);
    return state();
  },
  registerTool({specJson}) { requireSession().register_host_tool(specJson); return state(); },
  setSettings({settings}) {
    if ("allowNetwork" in settings) allowNetwork = Boolean(settings.allowNetwork);
    requireSession().set_settings(JSON.stringify(settings));
    return {tools: JSON.parse(session.tool_names())};  // which tools are enabled may have changed
  },
  async runTurn({text, stopped = false}) {
    // begin_turn runs now, before any later "cancel" message: a Stop is never lost.
    requireSession().begin_turn(Boolean(stopped));
    const final = JSON.parse(await session.run_turn(text));
    return {final, ...state()};
  },
  promptPrefix() { return requireSession().prompt_prefix(); },
  cancel() { session?.cancel(); },
  newChat() { requireSession().new_chat(); return state(); },
  restoreConversation({dataJson}) { requireSession().restore_conversation(dataJson); return state(); },
  async addUserFiles({filesJson}) { await requireSession().add_user_files(filesJson); },
  async dueReminders({nowIso}) { return JSON.parse(await requireSession().due_reminders(nowIso ?? "")); },
};

page = new RpcChannel(self, handlers);
