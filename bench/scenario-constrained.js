// The "constrained decoding" scenario of `botpsy-web bench` (py/botpsy_web/bench_constrained.py):
// the agent's prompt with its default tools, decoded greedily with the tool-call grammar
// ("required": a call, then free text as the answer) and without it, on the same model worker,
// runs alternating. Also the grammar's cost on a fresh worker: the tokenizer table once per
// load, then compiling the tools' grammar, which the agent's warm-up prefill does before the
// first token.
import {ModelClient} from "/web/runtime/model-client.js";

let client = null;

async function run(prompt, options) {
  let stats = null;
  const tokens = [], pieces = [];
  for await (const chunk of client.generate(prompt, {...options, onStats: (s) => { stats = s; }})) {
    if (chunk.tokenId === null || chunk.tokenId === undefined) continue;
    tokens.push(chunk.tokenId);
    pieces.push(chunk.text);
  }
  return {tokens: tokens.length, tokenIds: tokens, text: pieces.join(""), stats};
}

/**
 * Loads the folder in a fresh worker and warms up as the agent does (prefill with the grammar),
 * after the same prefill without it (the state is reset between, and neither starts from a state
 * stored by an earlier scenario): the difference is what the
 * grammar adds to warm-up (library, the vocabulary's table, compiling). Then a first token.
 */
export async function start({folderUrl, backend, dtype, prefix, spec}) {
  client?.terminate();
  client = new ModelClient();
  await client.load(folderUrl, {backend, dtype});
  let plain = await client.prefill(prefix);
  await client.resetPrefix();
  if (plain.restoredTokens) {  // a state stored on an earlier visit (prompt-state.js) is restored once per load:
    plain = await client.prefill(prefix);  // compute both warm-ups from an empty state
    await client.resetPrefix();
  }
  const started = performance.now();
  await client.prefill(prefix, {logitsProcessors: [spec]});
  const warmUpMs = performance.now() - started;
  const first = await run(prefix, {maxTokens: 1, logitsProcessors: [spec]});
  return {warmUpMs, warmUpMsWithoutGrammar: plain.prefillMs, compileMsOnFirstToken: first.stats.grammarCompileMs,
          engineSetupMs: first.stats.grammarEngineSetupMs};
}

/** One run of maxTokens tokens, constrained (spec) or free (spec null): greedy, or sampled at
 * `temperature` from `seed`; draftTokens as in generate. */
export async function decode({prompt, spec, maxTokens, draftTokens, temperature = 0, seed}) {
  const {tokens, tokenIds, text, stats} = await run(prompt, {
    maxTokens, temperature, seed, stopOnEos: false, reusePrefix: true, draftTokens, logitsProcessors: spec ? [spec] : []});
  return {tokens, tokenIds, text, decodeMs: stats.decodeMs, tokensPerSecond: stats.tokensPerSecond,
          maskMs: stats.grammarMaskMs ?? 0, masks: stats.grammarMasks ?? 0, masksSkipped: stats.grammarMasksSkipped ?? 0, draftedTokens: stats.draftedTokens,
          acceptedDraftTokens: stats.acceptedDraftTokens, decodePhaseMs: stats.decodePhaseMs};
}

/** Compile time of a grammar the worker has not compiled yet. */
export async function compileOnly({prompt, spec}) {
  const result = await run(prompt, {maxTokens: 1, logitsProcessors: [spec]});
  return result.stats.grammarCompileMs;
}

export async function stop() {
  if (!client) return;
  await client.unload().catch(() => {});
  client.terminate();
  client = null;
}
