// The one definition of the messages between the page (model-client.js) and
// the worker that owns the model (model-worker.js).
//
//   page -> worker   request  {id, verb, args}
//   worker -> page   reply    {id, result}            the request finished
//                             {id, error: {name, message}}
//                    event    {id, event, data}       while the request runs
//
// Events belong to the request whose id they carry: "progress" during load,
// "token" and "stats" during generate.

export const Verbs = Object.freeze({
  LOAD: "load",             // args: {folderUrl, backend, dtype}          -> LoadInfo (model-client.js load()),
                            //   its `storage`: whether this device kept the files (StorageReport, storage/model-files.js)
  GENERATE: "generate",     // args: {prompt, options}                    -> stats
  PREFILL: "prefill",       // args: {prompt, options: {persist, logitsProcessors}}  runs the prompt into the reusable state,
                            // generates nothing; persist: also stores it for later page loads (prompt-state.js);
                            // logitsProcessors: made (a grammar compiled and cached) for the coming generate
                            //   -> {promptTokens, reusedTokens, restoredTokens, prefillMs, cancelled, promptState}
  PREPARE: "prepare",       // args: {logitsProcessors}  makes them (a grammar compiled and cached) and drops them, running
                            //   nothing: for a later generate that may use them  -> {prepareMs}
  CANCEL: "cancel",         // args: {}  stops the running generate within a token
  TOKENIZE: "tokenize",     // args: {text}                               -> number[]
  DETOKENIZE: "detokenize", // args: {ids}                                -> string
  RESET: "reset",           // args: {}  forgets the reusable prefix state
  UNLOAD: "unload",         // args: {}
  STORAGE_USAGE: "storageUsage",  // args: {}                             -> usage
  DELETE_MODEL: "deleteModel",    // args: {folderUrl}
});

export const Events = Object.freeze({
  PROGRESS: "progress",  // {stage: "download"|"verify"|"compile"|"ready", file, loaded, total, percent, etaSeconds}
  TOKEN: "token",        // {tokenId, text, logits?}   text may be "" while a UTF-8 character is incomplete
  STATS: "stats",        // {promptTokens, reusedTokens, restoredTokens, generatedTokens, prefillMs, decodeMs, tokensPerSecond, stopReason}
                         // + diagnostics: modelMs, prefillPhaseMs / decodePhaseMs ({phase: ms}), cacheLocations, gpuTensorsDisposed,
                         //   cacheMode ("appending" | "standard"), cacheCapacity,
                         //   modelCalls, draftedTokens, acceptedDraftTokens (decode's calls and guessed tokens)
});

// Generate options understood by the worker. Unknown keys are an error, so a
// typo does not silently fall back to a default.
export const GENERATE_OPTION_KEYS = Object.freeze([
  "maxTokens",          // default 256
  "temperature",        // 0 (default) = greedy
  "topK",               // 0 = off
  "topP",               // 1 = off
  "repetitionPenalty",  // 1 = off
  "seed",               // integer; the sampler's RNG is seeded per call
  "stopStrings",        // added to the manifest's stop_strings
  "stopOnEos",          // default true; false generates exactly maxTokens
  "logitsProcessors",   // [{name, args}] run in order on the logits before sampling (see logits-processors.js)
  "returnLogits",       // attach the raw logits (Float32Array) to each token event (verification)
  "reusePrefix",        // default true; false runs from an empty state (and keeps no snapshots)
  "draftTokens",        // default 8: greedy decoding checks up to this many tokens guessed from the context
                        // in one model call (prompt lookup, draft-feeder.js); 0 = one token per call
]);

export const StopReasons = Object.freeze({
  EOS: "eos",
  STOP_STRING: "stop_string",
  MAX_TOKENS: "max_tokens",
  CONTEXT_FULL: "context_full",  // the prompt and the generated tokens fill the manifest's context_length
  CANCELLED: "cancelled",
});

export function request(id, verb, args = {}) {
  return {id, verb, args};
}

export function reply(id, result) {
  return {id, result};
}

export function errorReply(id, error) {
  return {id, error: serializeError(error)};
}

export function event(id, name, data) {
  return {id, event: name, data};
}

export function serializeError(error) {
  if (error instanceof Error) return {name: error.name, message: error.message};
  return {name: "Error", message: String(error)};
}

export function deserializeError({name, message}) {
  const error = new Error(message);
  error.name = name || "Error";
  return error;
}

export function isReply(message) {
  return message && "id" in message && ("result" in message || "error" in message);
}

export function isEvent(message) {
  return message && "id" in message && "event" in message;
}
