// The generation loop: resume from the longest reusable prefix, prefill the
// rest of the prompt (one graph call per chunk, not per token), then decode
// token by token until EOS, a stop string, maxTokens or cancel. Greedy decoding
// checks guessed tokens several per call where the graph allows (draft-feeder.js).
import {StopReasons, GENERATE_OPTION_KEYS} from "../protocol.js";
import {applyRepetitionPenalty, createRng, sampleToken, validateSamplingOptions} from "./sampling.js";
import {createLogitsProcessors, disposeLogitsProcessors} from "./logits-processors.js";
import {StreamingDetokenizer} from "../model/tokenizer.js";
import {StopStringFilter} from "./stop-strings.js";
import {PhaseTimes} from "./phase-times.js";
import {DraftFeeder} from "./draft-feeder.js";
import {attentionHeads, prefillChunks} from "./prefill-plan.js";
import {checkPromptFits, hasRoom} from "./context-window.js";

export function normalizeGenerateOptions(options = {}, manifest) {
  const unknown = Object.keys(options).filter((key) => !GENERATE_OPTION_KEYS.includes(key));
  if (unknown.length) {
    throw new TypeError(`unknown generate option(s): ${unknown.join(", ")}; known: ${GENERATE_OPTION_KEYS.join(", ")}`);
  }
  const normalized = {
    maxTokens: 256, temperature: 0, topK: 0, topP: 1, repetitionPenalty: 1, seed: undefined,
    stopOnEos: true, returnLogits: false, reusePrefix: true, logitsProcessors: [], draftTokens: 8,
    ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined && value !== null)),
  };
  if (!Number.isInteger(normalized.maxTokens) || normalized.maxTokens < 1) {
    throw new RangeError(`maxTokens must be an integer >= 1, got ${options.maxTokens}`);
  }
  validateSamplingOptions(normalized);
  if (!Number.isInteger(normalized.draftTokens) || normalized.draftTokens < 0) {
    throw new RangeError(`draftTokens must be an integer >= 0 (0 = one token per model call), got ${options.draftTokens}`);
  }
  const extraStops = normalized.stopStrings ?? [];
  if (!Array.isArray(extraStops) || extraStops.some((s) => typeof s !== "string" || !s)) {
    throw new TypeError("stopStrings must be an array of non-empty strings");
  }
  normalized.stopStrings = [...new Set([...(manifest.stop_strings ?? []), ...extraStops])];
  return normalized;
}

function checkPromptIds(promptIds, manifest) {
  if (!Array.isArray(promptIds) || !promptIds.length) throw new Error("the prompt is empty: give text or token ids");
  const vocab = manifest.vocab_size;
  const bad = promptIds.find((id) => !Number.isInteger(id) || id < 0 || (vocab && id >= vocab));
  if (bad !== undefined) throw new RangeError(`prompt token id ${bad} is not in the vocabulary (0..${vocab - 1})`);
  checkPromptFits(promptIds.length, manifest);
}

// Puts the prompt into the state: resume from the longest reusable prefix (in memory, or
// stored on an earlier visit: prompt-state.js), then the rest in chunks, with snapshots
// where the prefix cache wants them. `wholePrompt`: no logits needed (prefill).
async function runPrompt({runner, prefix, promptState, manifest}, promptIds, reusePrefix, hooks, wholePrompt = false) {
  const prefillTimes = new PhaseTimes();
  if (!reusePrefix) prefix.clear();
  const fromMemory = await prefix.resumeFor(promptIds);
  const reusedTokens = reusePrefix && promptState ? await promptState.resumeFor(promptIds, fromMemory, {wholePrompt}) : fromMemory;
  const restoredTokens = reusedTokens > fromMemory ? reusedTokens : 0;
  const snapshotPoints = reusePrefix ? prefix.snapshotPoints(promptIds, reusedTokens) : [];
  prefillTimes.mark("resume");
  let logits = null;
  for (const [start, end, snapshotAfter] of prefillChunks(promptIds.length, reusedTokens, snapshotPoints, attentionHeads(manifest))) {
    if (hooks.isCancelled()) break;
    logits = await runner.step(promptIds.slice(start, end), prefillTimes);
    if (snapshotAfter) prefix.take();
    prefillTimes.mark("snapshot");
    await hooks.yieldToEvents();
    prefillTimes.mark("yield");
  }
  if (reusePrefix) prefix.take();  // end of prompt
  prefillTimes.mark("snapshot");
  return {reusedTokens, restoredTokens, logits, prefillTimes};
}

/**
 * Runs a prompt into the reusable state without generating: a later prompt that
 * starts with it computes only what follows (the agent does this with the
 * system prompt and tool schemas while a person types). `persist`: also store the state for
 * later page loads (prompt-state.js). Returns {promptTokens, reusedTokens, restoredTokens
 * (of reusedTokens, those from a stored state), prefillMs, cancelled, promptState (a PromptStateReport, or null)}.
 */
export async function prefill(loaded, promptIds, hooks, {persist = false, logitsProcessors = []} = {}) {
  const {runner, manifest, promptState} = loaded;
  checkPromptIds(promptIds, manifest);
  const started = performance.now();
  // The next generation's processors, made now and dropped: a grammar is then compiled
  // (and cached) before the first token is asked for.
  await prepare(loaded, logitsProcessors);
  const {reusedTokens, restoredTokens} = await runPrompt(loaded, promptIds, true, hooks, true);
  const cancelled = runner.processedIds.length < promptIds.length;
  if (persist && !cancelled) await promptState?.save(promptIds);
  return {promptTokens: promptIds.length, reusedTokens, restoredTokens, prefillMs: performance.now() - started, cancelled,
          promptState: promptState ? {...promptState.report} : null};
}

/** Makes logits processors and drops them, running nothing: their setup (a grammar's compile) is then
 * cached for a later generate that names them. */
export async function prepare(loaded, logitsProcessors = []) {
  const started = performance.now();
  disposeLogitsProcessors(await createLogitsProcessors(logitsProcessors, processorContext(loaded)));
  return {prepareMs: performance.now() - started};
}

/**
 * Runs one generation. `hooks`: {isCancelled(), yieldToEvents(), onToken({tokenId, text, logits})}.
 * Returns the stats object of the contract.
 */
export async function generate(loaded, promptIds, rawOptions, hooks) {
  checkPromptIds(promptIds, loaded.manifest);
  const options = normalizeGenerateOptions(rawOptions, loaded.manifest);
  // greedy: the pick is the best token after the processors (a grammar may then skip its mask)
  const greedy = options.temperature === 0 && options.repetitionPenalty === 1;
  const processors = await createLogitsProcessors(options.logitsProcessors, {...processorContext(loaded), greedy});
  try {
    return await runGeneration(loaded, promptIds, options, processors, hooks);
  } finally {
    disposeLogitsProcessors(processors);
  }
}

function processorContext({tokenizer, manifest}) {
  return {tokenizer, manifest, vocabSize: manifest.vocab_size};
}

async function runGeneration(loaded, promptIds, options, processors, hooks) {
  const {runner, prefix, tokenizer, manifest} = loaded;
  const rng = createRng(options.seed);
  const eos = new Set(options.stopOnEos ? manifest.eos_token_ids ?? [] : []);

  const started = performance.now();
  const sessionMsBefore = runner.sessionMs;
  const prompt = await runPrompt({runner, prefix, manifest, promptState: loaded.promptState}, promptIds, options.reusePrefix, hooks);
  const {reusedTokens, restoredTokens, prefillTimes} = prompt;
  let {logits} = prompt;
  const prefillMs = performance.now() - started;

  if (runner.processedIds.length < promptIds.length) {  // cancelled before the prompt was processed
    return {promptTokens: promptIds.length, reusedTokens, generatedTokens: 0, prefillMs, decodeMs: 0,
            tokensPerSecond: 0, stopReason: StopReasons.CANCELLED, modelMs: runner.sessionMs - sessionMsBefore};
  }
  // Guessed tokens are only usable when the choice is deterministic (greedy).
  const feeder = new DraftFeeder(runner, options.temperature === 0 ? options.draftTokens : 0, draftTrimmer(processors));
  const detokenizer = new StreamingDetokenizer(tokenizer);
  const stops = new StopStringFilter(options.stopStrings);
  const seen = promptIds.slice();
  const greedyOptions = {...options, temperature: 0};  // where a processor asks for it (a tool call's tokens)
  let generatedTokens = 0;
  let stopReason = StopReasons.MAX_TOKENS;
  const decodeStarted = performance.now();
  const times = new PhaseTimes();
  await hooks.yieldToEvents();
  times.mark("yield");
  for (;;) {
    if (hooks.isCancelled()) { stopReason = StopReasons.CANCELLED; break; }
    const rawLogits = options.returnLogits ? logits.slice() : undefined;
    for (const processor of processors) {
      const pending = processor.process(logits, seen);
      if (pending) await pending;  // only processors that need it (a grammar's mask) cost an await
    }
    applyRepetitionPenalty(logits, seen, options.repetitionPenalty);
    const picking = processors.some((processor) => processor.greedyNext) ? greedyOptions : options;
    let tokenId = sampleToken(logits, picking, rng);
    while (!(await acceptedByAll(processors, tokenId))) {
      logits[tokenId] = -Infinity;  // a processor took it back (it would lead its grammar nowhere)
      tokenId = sampleToken(logits, picking, rng);
    }
    generatedTokens++;
    times.mark("sample");
    if (eos.has(tokenId)) {
      stopReason = StopReasons.EOS;
      hooks.onToken({tokenId, text: stops.finish(detokenizer.flush()), logits: rawLogits, special: true});
      break;
    }
    seen.push(tokenId);
    const {text, stopped} = stops.push(detokenizer.push(tokenId));
    times.mark("detokenize");
    hooks.onToken({tokenId, text, logits: rawLogits});
    times.mark("emit");
    if (stopped) { stopReason = StopReasons.STOP_STRING; break; }
    if (generatedTokens >= options.maxTokens) break;
    if (!hasRoom(promptIds.length + generatedTokens, manifest)) { stopReason = StopReasons.CONTEXT_FULL; break; }
    logits = await feeder.next(tokenId, seen, times);
    await hooks.yieldToEvents();
    times.mark("yield");
  }
  await feeder.settle();
  if (stopReason !== StopReasons.EOS && stopReason !== StopReasons.STOP_STRING) {
    const rest = stops.finish(detokenizer.flush());
    if (rest) hooks.onToken({tokenId: null, text: rest});
  }
  const decodeMs = performance.now() - decodeStarted;
  return {
    promptTokens: promptIds.length,
    reusedTokens,  // from memory or from a state stored on an earlier visit (restoredTokens of them)
    restoredTokens,
    generatedTokens,
    prefillMs,
    decodeMs,
    tokensPerSecond: generatedTokens > 1 ? (generatedTokens - 1) / (decodeMs / 1000) : 0,
    stopReason,
    modelMs: runner.sessionMs - sessionMsBefore,  // of prefillMs + decodeMs, the time inside onnxruntime
    prefillPhaseMs: prefillTimes.toJSON(),  // prefillMs split the same way
    cacheLocations: runner.cache.locations(),  // where the state lives now: {"gpu-buffer": n} on WebGPU
    cacheMode: runner.cacheMode,  // "appending" (KV buffers with room, only new positions come back) or "standard"
    cacheCapacity: runner.cache.capacity,  // KV positions the buffers have room for (standard: exactly the processed ones)
    gpuTensorsDisposed: runner.refs.gpuTensorsDisposed,  // replaced GPU state tensors freed so far (running total)
    decodePhaseMs: times.toJSON(),  // decodeMs split by phase: run (inside onnxruntime), feeds, outputs, sample, ...
    ...feeder.stats,  // decode's modelCalls, draftedTokens (guessed from the context), acceptedDraftTokens
    ...Object.assign({}, ...processors.map((processor) => processor.stats)),  // e.g. grammarCompileMs, grammarMaskMs
  };
}

// Tells every processor the chosen token; false when one refuses it (the others take it back).
// Awaits only processors whose accept returns a promise.
async function acceptedByAll(processors, tokenId) {
  for (let i = 0; i < processors.length; i++) {
    let verdict = processors[i].accept(tokenId);
    if (verdict instanceof Promise) verdict = await verdict;
    if (verdict === false) {
      for (let j = 0; j < i; j++) processors[j].unaccept?.();
      return false;
    }
  }
  return true;
}

// Guesses only as far as every processor allows (a grammar refuses what cannot follow).
function draftTrimmer(processors) {
  const trimming = processors.filter((processor) => processor.trimDraft);
  if (!trimming.length) return null;
  return (draft) => trimming.reduce((kept, processor) => processor.trimDraft(draft.slice(0, kept)), draft.length);
}
