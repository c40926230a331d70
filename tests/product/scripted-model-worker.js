// A SCRIPTED model worker for the product tests, named as such: it speaks the real
// page<->worker protocol (web/runtime/protocol.js) behind the real ModelClient, reads the
// real exported folder's manifest, and reports load progress like the runtime does, but
// instead of running a network it replays outputs chosen from the prompt.
//
// The test serves this file in place of web/runtime/model-worker.js, prefixed with
//   const SCRIPT = [{match: "words in the user's message", outputs: ["step 1", "step 2", ...],
//                    stopReason: "max_tokens"}];  (optional: how every step ends, "eos" if absent)
//   const MANIFEST = {...} or null;  (the folder's manifest, so loading needs no network)
// The step is the number of assistant messages since that user message, so the choice
// depends only on the prompt (it survives reloads and new workers). A step's output may be a list:
// its first item the first time that prompt is asked, the next when the agent asks the very same
// prompt again (it sent the words back: py/botpsy_agent/worked_numbers.py), and so on.
import {Events, Verbs, errorReply, event, reply} from "/web/runtime/protocol.js";

let manifest = null;
let cancelled = false;

// The person's last message: not a block of tool results, nor the agent's own line that follows
// them (AgentOptions.after_results).
function lastUserTurn(prompt) {
  const segments = prompt.split("<|im_start|>");
  const results = (segment) => segment?.startsWith("user\n<tool_response>");
  let userIndex = -1;
  segments.forEach((segment, index) => {
    if (segment.startsWith("user\n") && !results(segment) && !results(segments[index - 1])) userIndex = index;
  });
  if (userIndex < 0) return {text: "", step: 0};
  const text = segments[userIndex].slice("user\n".length).split("<|im_end|>")[0];
  const step = segments.slice(userIndex + 1).filter((s) => s.startsWith("assistant\n") && s.includes("<|im_end|>")).length;
  return {text, step};
}

const timesAsked = new Map();

function scriptedOutput(prompt) {
  const {text, step} = lastUserTurn(prompt);
  const entry = SCRIPT.find((candidate) => text.includes(candidate.match));
  if (!entry) return {output: `(scripted model: no script for "${text}")`, stopReason: "eos"};
  const chosen = entry.outputs[Math.min(step, entry.outputs.length - 1)];
  const before = timesAsked.get(prompt) ?? 0;
  timesAsked.set(prompt, before + 1);
  const output = Array.isArray(chosen) ? chosen[Math.min(before, chosen.length - 1)] : chosen;
  return {output, stopReason: entry.stopReason ?? "eos"};
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function load(id, {folderUrl}) {
  manifest = MANIFEST ?? await (await fetch(new URL("manifest.json", folderUrl))).json();
  const total = Object.values(manifest.files).reduce((sum, f) => sum + f.size, 0);
  for (let part = 1; part <= 4; part += 1) {
    const loaded = Math.round((total * part) / 4);
    postMessage(event(id, Events.PROGRESS, {stage: "download", file: "onnx/model.onnx", loaded, total,
      percent: (100 * loaded) / total, etaSeconds: 4 - part}));
    await pause(30);
  }
  for (const stage of ["verify", "compile", "ready"]) {
    postMessage(event(id, Events.PROGRESS, {stage, file: null, loaded: total, total, percent: 100, etaSeconds: 0}));
    await pause(30);
  }
  return {backend: "wasm", dtype: "scripted", threads: self.crossOriginIsolated ? 2 : 1,
    reason: "scripted test model", architecture: manifest.architecture, manifest,
    eosTokenIds: manifest.eos_token_ids, toolCallFormat: manifest.tool_call_format};
}

async function generate(id, {prompt}) {
  if (!manifest) throw new Error("the scripted model was not loaded");
  cancelled = false;
  const {output, stopReason} = scriptedOutput(String(prompt));
  let generated = 0;
  for (let start = 0; start < output.length && !cancelled; start += 4) {
    postMessage(event(id, Events.TOKEN, {tokenId: -1, text: output.slice(start, start + 4)}));
    generated += 1;
    await pause(8);
  }
  return {promptTokens: prompt.length, reusedTokens: 0, generatedTokens: generated, prefillMs: 1,
    decodeMs: generated * 8, tokensPerSecond: 125, stopReason: cancelled ? "cancelled" : stopReason};
}

const handlers = {
  [Verbs.LOAD]: load,
  [Verbs.GENERATE]: generate,
  [Verbs.PREFILL]: (id, {prompt}) => ({promptTokens: prompt.length, reusedTokens: 0, prefillMs: 0, cancelled: false}),
  [Verbs.PREPARE]: () => ({prepareMs: 0}),
  [Verbs.CANCEL]: () => { cancelled = true; return true; },
  [Verbs.RESET]: () => true,
  [Verbs.UNLOAD]: () => { manifest = null; return true; },
  [Verbs.STORAGE_USAGE]: () => ({usedBytes: null, quotaBytes: null, models: []}),
  [Verbs.DELETE_MODEL]: () => false,
};

self.onmessage = async ({data: {id, verb, args = {}}}) => {
  try {
    if (!handlers[verb]) throw new Error(`the scripted model does not support ${verb}`);
    postMessage(reply(id, await handlers[verb](id, args)));
  } catch (error) {
    postMessage(errorReply(id, error));
  }
};
