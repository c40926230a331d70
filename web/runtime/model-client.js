// The page-side API of the model runtime (docs/contracts.md section 2). The
// model lives in a module Web Worker; this class turns protocol messages into
// promises and async iterators.
import {Events, Verbs, deserializeError, isEvent, isReply, request} from "./protocol.js";

const WORKER_URL = new URL("./model-worker.js", import.meta.url);

export class ModelClient {
  /** startWorker: () => a Worker-like object, instead of a Worker of workerUrl (the widget's framed workers). */
  constructor({workerUrl = WORKER_URL, startWorker = null} = {}) {
    this.worker = startWorker ? startWorker() : new Worker(workerUrl, {type: "module", name: "botpsy-model"});
    this.nextId = 1;
    this.pending = new Map();  // id -> {resolve, reject, onEvent}
    this.info = null;
    this.worker.onmessage = ({data}) => this.#dispatch(data);
    this.worker.onerror = (error) => this.#failAll(new Error(`the model worker failed: ${error.message ?? "script error"}`));
  }

  #dispatch(message) {
    const entry = this.pending.get(message.id);
    if (!entry) return;
    if (isEvent(message)) { entry.onEvent?.(message.event, message.data); return; }
    if (!isReply(message)) return;
    this.pending.delete(message.id);
    if (message.error) entry.reject(deserializeError(message.error));
    else entry.resolve(message.result);
  }

  #failAll(error) {
    for (const entry of this.pending.values()) entry.reject(error);
    this.pending.clear();
  }

  #call(verb, args = {}, onEvent) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {resolve, reject, onEvent});
      this.worker.postMessage(request(id, verb, args));
    });
  }

  /**
   * Loads a model folder; resolves to {backend, dtype, threads, reason, cacheMode, architecture, manifest,
   * eosTokenIds, toolCallFormat, storage}. cacheMode: "appending" (WASM, the folder has appending graphs) or "standard".
   * storage: {kept, notKept, reason} (StorageReport, storage/model-files.js): kept is false when some files could
   * not be stored on this device, so the next load downloads them again and the model does not work offline.
   */
  async load(folderUrl, {backend = "auto", dtype, onProgress} = {}) {
    const absolute = new URL(folderUrl, globalThis.location?.href).href;
    this.info = await this.#call(Verbs.LOAD, {folderUrl: absolute, backend, dtype},
      (name, data) => { if (name === Events.PROGRESS) onProgress?.(data); });
    return this.info;
  }

  /**
   * Streams {text, tokenId} chunks for a prompt (text, or an array of token ids).
   * Options: maxTokens, temperature, topK, topP, repetitionPenalty, seed, stopStrings,
   * stopOnEos, logitsProcessors, returnLogits, reusePrefix, onStats.
   * Leaving the loop early cancels the generation.
   */
  async *generate(prompt, {onStats, ...options} = {}) {
    const queue = [];
    let wake = null;
    let finished = false;
    const notify = () => { wake?.(); wake = null; };
    const done = this.#call(Verbs.GENERATE, {prompt, options}, (name, data) => {
      if (name === Events.TOKEN) { queue.push(data); notify(); }
    });
    done.then(() => { finished = true; notify(); }, () => { finished = true; notify(); });
    let completed = false;
    try {
      for (;;) {
        while (queue.length) yield queue.shift();
        if (finished) break;
        await new Promise((resolve) => { wake = resolve; });
      }
      const stats = await done;  // rethrows the worker's error
      completed = true;
      onStats?.(stats);
    } finally {
      if (!completed) { this.cancel(); await done.catch(() => {}); }
    }
  }

  /**
   * Runs `prompt` (text or token ids) into the model's reusable state without generating, so
   * that a later prompt starting with it computes only the rest. Queued like generate; cancel()
   * stops it too. `persist`: also store the state in the browser, so that a later page load starts
   * from it instead of computing it (for a prompt start that stays the same across visits: system
   * prompt and tools). Resolves to {promptTokens, reusedTokens, restoredTokens (of reusedTokens, those
   * from a stored state), prefillMs, cancelled, promptState: {restoredTokens, restoreMs, storedBytes, rejected}}.
   * `logitsProcessors`: those of the coming generate, made once now so that their setup (compiling a
   * tool-call grammar) is done and cached before its first token.
   */
  prefill(prompt, {persist = false, logitsProcessors = []} = {}) {
    return this.#call(Verbs.PREFILL, {prompt, options: {persist, logitsProcessors}});
  }

  /**
   * Makes `logitsProcessors` and drops them, running nothing: a grammar is compiled and cached for a later
   * generate that may name it (the agent's warm-up: the grammars of turns routed to one topic). Queued
   * like generate. Resolves to {prepareMs}.
   */
  prepareLogitsProcessors(logitsProcessors) {
    return this.#call(Verbs.PREPARE, {logitsProcessors});
  }

  /** Stops the running generate within a token (its stats say stopReason "cancelled"). */
  cancel() {
    return this.#call(Verbs.CANCEL);
  }

  tokenize(text) { return this.#call(Verbs.TOKENIZE, {text}); }
  detokenize(ids) { return this.#call(Verbs.DETOKENIZE, {ids}); }
  /** Forgets the reusable prefix state (the next prompt runs from scratch). */
  resetPrefix() { return this.#call(Verbs.RESET); }
  storageUsage() { return this.#call(Verbs.STORAGE_USAGE); }
  deleteModel(folderUrl) {
    return this.#call(Verbs.DELETE_MODEL, {folderUrl: new URL(folderUrl, globalThis.location?.href).href});
  }

  async unload() {
    await this.#call(Verbs.UNLOAD);
    this.info = null;
  }

  /** Ends the worker (and with it every model it held). */
  terminate() {
    this.worker.terminate();
    this.#failAll(new Error("the model worker was terminated"));
  }
}
