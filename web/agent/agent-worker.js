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
    // This worker's policy allows our own origin only: the page fetches what the person approved.
    fetch_text: (url) => page.call("fetchUrl", {url}),
    call_host_tool: (name, argumentsJson) => page.call("callHostTool", {name, argumentsJson}),
    // run_python: the code runs in the page's sandbox frame, never in this worker (web/sandbox/).
    run_python: (requestJson) => page.call("runPython", {requestJson}),
    emit: (eventJson) => page.sendEvent(JSON.parse(eventJson)),
  };
}

// Every added token of the model's tokenizer (tokenizer.json, and tokenizer_config.json's
// added_tokens_decoder): untrusted text may hold none of them (py/botpsy_agent/safety.py).
// The list read online is kept in the agent's store, for an offline start whose tokenizer.json
// is not in any cache (the runtime normally has it).
const TOKEN_LISTS = "_special_tokens";

async function addedTokens(opened, tokenizerUrl, tokenizerConfig, given = []) {
  const tokens = [...given, ...Object.values(tokenizerConfig?.added_tokens_decoder ?? {}).map((token) => token?.content)];
  if (tokenizerUrl) {
    let read = null;
    try {
      const response = await fetch(tokenizerUrl);
      if (response.ok) read = ((await response.json()).added_tokens ?? []).map((token) => token?.content);
    } catch {
      // offline: the list kept from the last online start, if any
    }
    if (read) await opened.put(TOKEN_LISTS, tokenizerUrl, JSON.stringify(read));
    else read = JSON.parse((await opened.get(TOKEN_LISTS, tokenizerUrl)) ?? "null");
    if (!read) {
      throw new Error(`cannot read the model's tokenizer.json (${tokenizerUrl}); the agent needs its `
        + "special tokens to keep them out of untrusted text");
    }
    tokens.push(...read);
  }
  return [...new Set(tokens.filter((token) => typeof token === "string" && token))];
}

function requireSession() {
  if (!session) throw new Error("the agent worker is not initialised yet");
  return session;
}

function state() {
  return {tools: JSON.parse(session.tool_names()), conversation: JSON.parse(session.export_conversation())};
}

const handlers = {
  async init({tokenizerConfig, manifest, storeName, includeBuiltinTools, bundleUrl, tokenizerUrl, specialTokens}) {
    const opening = IndexedDbStore.open(storeName);
    const [pyodide, opened, tokens] = await Promise.all([
      loadAgentPython({bundleUrl}), opening,
      opening.then((opened) => addedTokens(opened, tokenizerUrl, tokenizerConfig, specialTokens))]);
    store = opened;
    pyodide.registerJsModule("botpsy_host", capabilities());
    const sessions = pyodide.pyimport("botpsy_agent.browser_session");
    session = sessions.create_session(undefined, JSON.stringify(tokenizerConfig), JSON.stringify(manifest ?? {}),
                                      includeBuiltinTools, JSON.stringify(tokens));
    return state();
  },
  registerTool({specJson}) { requireSession().register_host_tool(specJson); return state(); },
  unregisterTool({name}) { requireSession().unregister_host_tool(String(name)); return state(); },
  // An outside agent (WebMCP, web/webmcp/): what it is offered, and its calls (py/botpsy_agent/outside_calls.py).
  offeredTools() { return JSON.parse(requireSession().offered_tools()); },
  async outsideCall({id, name, argumentsJson}) {
    return JSON.parse(await requireSession().call_for_outside_agent(String(id), String(name), String(argumentsJson)));
  },
  setSettings({settings}) {
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
  logitsProcessors() { return JSON.parse(requireSession().logits_processors()); },
  routedLogitsProcessors() { return JSON.parse(requireSession().routed_logits_processors()); },
  cancel() { session?.cancel(); },
  newChat() { requireSession().new_chat(); return state(); },
  restoreConversation({dataJson}) { requireSession().restore_conversation(dataJson); return state(); },
  async addUserFiles({filesJson}) { await requireSession().add_user_files(filesJson); },
  async dueReminders({nowIso}) { return JSON.parse(await requireSession().due_reminders(nowIso ?? "")); },
  // `botpsy-web eval`'s multi-turn categories: one BFCL case, its tool environment built here
  // and an agent over it, on this session's model. Only the eval's bundle (agent-eval-py.zip)
  // carries the module; the app's bundle answers with a ModuleNotFoundError.
  async evalMultiTurnCase({caseJson, settingsJson}) {
    const inWorker = (await loadAgentPython()).pyimport("botpsy_eval.multi_turn.in_worker");
    return JSON.parse(await inWorker.run_case(requireSession(), caseJson, settingsJson));
  },
  // `botpsy-web tasks`: one task (docs/tasks.md) on a copy of this session's agent, with a fresh
  // store of its own in this worker's IndexedDB. Only the tasks' bundle (agent-tasks-py.zip) carries it.
  async evalTask({taskJson, optionsJson}) {
    const inWorker = (await loadAgentPython()).pyimport("botpsy_tasks.in_worker");
    return JSON.parse(await inWorker.run_task(requireSession(), taskJson, optionsJson));
  },
};

page = new RpcChannel(self, handlers);
