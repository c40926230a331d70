// A scripted model worker for the agent's browser tests: it speaks the real
// page<->worker protocol (web/runtime/protocol.js) behind the real ModelClient,
// but replays prepared outputs instead of running a network.
// load(folderUrl): folderUrl points at a JSON script {outputs: [...], manifest: {...}}.
// Each generate streams the next output in 4-character token events.
// With {entries: [{match, outputs}]} instead of outputs, the output is chosen from the prompt:
// the entry whose `match` is in the last user message, its step = the assistant messages since
// (so one loaded model serves test cases in any order); stats then carry the prompt it saw.
import {Events, Verbs, errorReply, event, reply} from "/web/runtime/protocol.js";

let script = null;
let next = 0;

async function handle({id, verb, args}) {
  if (verb === Verbs.LOAD) {
    script = await (await fetch(args.folderUrl)).json();
    next = 0;
    return {backend: "scripted", dtype: "none", threads: 1, reason: "scripted test model",
            architecture: "scripted", manifest: script.manifest ?? {}, eosTokenIds: [], toolCallFormat: script.manifest?.tool_call_format ?? null};
  }
  if (verb === Verbs.GENERATE && script?.entries) return generateForPrompt(id, String(args.prompt));
  if (verb === Verbs.GENERATE) {
    if (!script) throw new Error("the scripted model was not loaded");
    if (next >= script.outputs.length) throw new Error(`the scripted model has only ${script.outputs.length} outputs`);
    const output = script.outputs[next++];
    for (let start = 0; start < output.length; start += 4) {
      postMessage(event(id, Events.TOKEN, {tokenId: -1, text: output.slice(start, start + 4)}));
    }
    return {promptTokens: args.prompt.length, reusedTokens: 0, generatedTokens: output.length,
            prefillMs: 0, decodeMs: 0, tokensPerSecond: 0, stopReason: "eos"};
  }
  if (verb === Verbs.CANCEL || verb === Verbs.RESET || verb === Verbs.UNLOAD) return null;
  throw new Error(`the scripted model does not support ${verb}`);
}

self.onmessage = async ({data}) => {
  try {
    postMessage(reply(data.id, await handle(data)));
  } catch (error) {
    postMessage(errorReply(data.id, error));
  }
};

// The person's last message: not a block of tool results, nor the agent's own line that follows
// them (AgentOptions.after_results).
function lastUserTurn(prompt) {
  const segments = prompt.split("<|im_start|>");
  const results = (segment) => segment?.startsWith("user\n<tool_response>");
  const user = segments.findLastIndex((segment, index) => segment.startsWith("user\n") && !results(segment) &&
                                      !results(segments[index - 1]));
  if (user < 0) return {text: "", step: 0};
  const step = segments.slice(user + 1).filter((segment) => segment.startsWith("assistant\n")).length - 1;
  return {text: segments[user].slice("user\n".length).split("<|im_end|>")[0], step: Math.max(step, 0)};
}

function generateForPrompt(id, prompt) {
  const {text, step} = lastUserTurn(prompt);
  const entry = script.entries.find((candidate) => text.includes(candidate.match));
  const output = entry ? entry.outputs[Math.min(step, entry.outputs.length - 1)] : `(scripted model: no entry for "${text}")`;
  for (let start = 0; start < output.length; start += 4) {
    postMessage(event(id, Events.TOKEN, {tokenId: -1, text: output.slice(start, start + 4)}));
  }
  return {promptTokens: prompt.length, reusedTokens: 0, generatedTokens: output.length, prefillMs: 0, decodeMs: 0,
          tokensPerSecond: 0, stopReason: "eos", scriptedPrompt: prompt};
}
