// Prompt state kept across page loads. The agent's prompts all start with the same long
// text (system prompt + tool schemas); prefilling it takes seconds to tens of seconds on
// WASM, every visit. A prefill marked `persist` stores the state it leaves (every cache
// tensor, the token ids) in the model-files store, beside the model (model-files.js derived
// data: counted in the Storage panel, removed with the model). The first prompts of a
// later visit that start with those tokens restore it instead of computing them.
//
// A state is used only where it gives exactly the bits a fresh prefill gives: same model
// files, dtype, graph kind, backend, threads and onnxruntime version (its identity, part of
// the file and of its name), intact (checksum), the same tokens. KV caches can be cut back
// to a shorter common start; conv/recurrent state only resumes at the stored end.
// One state per model folder: a new one replaces the last (a few to ~100 MB each).
//
// A first visit has none stored: the state shipped with the model folder for the page's default
// prompt (shipped-prompt-state.js) is restored instead when the prompt starts with its tokens;
// of the two, the one that covers more of the prompt is used.
import {DERIVED_DIRECTORY, listDerived, normalizeFolderUrl, readDerived, removeDerived, writeDerived} from "../storage/model-files.js";
import {dtypeGraphs} from "../model/dtype-graphs.js";
import {canonicalJson, decodePromptState, encodePromptState, sealPromptState} from "./prompt-state-format.js";
import {sha256Hex} from "../storage/sha256.js";
import {ENCODING, ShippedPromptStates, packPromptState} from "./shipped-prompt-state.js";
import {readPromptStateHeader} from "./prompt-state-format.js";

const STATE_DIRECTORY = `${DERIVED_DIRECTORY}prompt-state/`;

/**
 * @typedef {object} PromptStateReport   what prefill answers under `promptState`
 * @property {number} restoredTokens     prompt tokens taken from a stored state on this load (0: none)
 * @property {number|null} restoreMs     reading, checking and installing it
 * @property {number|null} storedBytes   size of the state this prefill stored (null: none stored)
 * @property {string|null} rejected      why a stored state was not used (null: none was rejected)
 * @property {string|null} source        where the restored state came from: "stored" (an earlier visit's),
 *                                       "shipped" (the model folder's, shipped-prompt-state.js) or null
 */

/** What a state depends on, from the manifest and the running session. */
export function promptStateIdentity(manifest, {dtype, runner, threads}) {
  const graphs = dtypeGraphs(manifest, dtype);
  const files = [graphs[runner.cacheMode], ...graphs.externalData];
  return {
    model: manifest.name ?? null,
    modelFiles: Object.fromEntries(files.map((path) => [path, manifest.files?.[path]?.sha256 ?? null])),
    dtype,
    graph: runner.cacheMode,
    backend: runner.backend,
    threads: threads ?? 1,
    onnxruntime: runner.ort.env?.versions?.web ?? runner.ort.env?.versions?.common ?? null,
    cache: runner.cache.entries.map(({input, kind, dtype: type, shape, seq_axis: seqAxis}) => ({input, kind, type, shape, seqAxis})),
  };
}

function commonPrefixLength(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

const sameIds = (a, b) => a.length === b.length && commonPrefixLength(a, b) === a.length;

export class PersistedPromptState {
  /** folderUrl: the model folder; runner, prefix: the loaded model's; identity: promptStateIdentity(). */
  constructor({folderUrl, runner, prefix, identity}) {
    this.folderUrl = folderUrl;
    this.runner = runner;
    this.prefix = prefix;
    this.identity = identity;
    this.path = null;          // named after the identity's hash (#statePath)
    this.known = undefined;    // what is stored: undefined = not looked yet, null = nothing usable, {ids, bytes}
    this.restored = false;     // once restored, the in-memory prefix cache holds it: no second look
    this.pending = Promise.resolve();  // the background write
    this.shipped = new ShippedPromptStates({folderUrl, identity, entries: runner.cache.entries});
    this.shippedIds = null;    // the tokens of the shipped state restored on this load
    /** @type {PromptStateReport} */
    this.report = {restoredTokens: 0, restoreMs: null, storedBytes: null, rejected: null, source: null};
  }

  async #statePath() {
    this.path ??= `${STATE_DIRECTORY}${(await sha256Hex(new TextEncoder().encode(canonicalJson(this.identity)))).slice(0, 32)}.bin`;
    return this.path;
  }

  // How many of promptIds a stored state with `ids` gives (all of them only when no logits are
  // needed: otherwise the last prompt token must run).
  #usable(ids, promptIds, wholePrompt) {
    const limit = wholePrompt ? promptIds.length : promptIds.length - 1;
    const common = commonPrefixLength(ids, promptIds);
    if (this.runner.cache.truncatable) return Math.min(common, limit);
    return common === ids.length && ids.length <= limit ? ids.length : 0;
  }

  /**
   * Called with the prompt's reusable length from memory (`reused`); when a stored state covers
   * more, installs it and returns the longer length. Otherwise returns `reused`, state untouched.
   * wholePrompt: the caller needs no logits (a prefill), so the state may cover every token.
   */
  async resumeFor(promptIds, reused, {wholePrompt = false} = {}) {
    if (this.restored) return reused;
    const limit = wholePrompt ? promptIds.length : promptIds.length - 1;
    const shipped = await this.shipped.covering(promptIds, reused, limit);
    const fromStored = await this.#resumeStored(promptIds, Math.max(reused, shipped?.tokenCount ?? 0), wholePrompt);
    if (fromStored !== null) return fromStored;
    return shipped ? this.#resumeShipped(shipped, reused) : reused;
  }

  // The state stored on an earlier visit, when it covers more than `floor` tokens: installed, and
  // its length returned; null otherwise (state untouched).
  async #resumeStored(promptIds, floor, wholePrompt) {
    if (this.known === null) return null;
    if (this.known && this.#usable(this.known.ids, promptIds, wholePrompt) <= floor) return null;
    const started = performance.now();
    const stored = await this.#read();
    if (!stored) return null;
    const usable = this.#usable(stored.ids, promptIds, wholePrompt);
    if (usable <= floor) return null;
    return this.#install(stored, usable, started, "stored");
  }

  // The folder's shipped state for this prompt (covering()'s entry); a file that cannot be used
  // leaves the state untouched (the prompt is computed, as without it) and says why in the console.
  async #resumeShipped(entry, reused) {
    const started = performance.now();
    let stored;
    try {
      stored = await this.shipped.read(entry);
    } catch (error) {
      console.warn(`botpsy: the prompt state shipped with the model was not used (${error.message}); ` +
        "the prompt is computed instead.");
      this.report.rejected = `shipped: ${error.message}`;
      return reused;
    }
    this.shippedIds = stored.ids;
    return this.#install(stored, stored.ids.length, started, "shipped");
  }

  async #install(stored, usable, started, source) {
    this.runner.cache.importState(stored.state);
    this.runner.processedIds = stored.ids.slice();
    if (usable < stored.ids.length) await this.runner.truncate(usable);
    this.prefix.take();  // a snapshot here, for models that cannot cut back (no-op for KV-only ones)
    this.restored = true;
    Object.assign(this.report, {restoredTokens: usable, restoreMs: performance.now() - started, source});
    return usable;
  }

  // The stored state, checked; null when there is none or it must not be used (then removed).
  async #read() {
    const path = await this.#statePath();
    const bytes = await readDerived(this.folderUrl, path);
    if (!bytes) { this.known = null; return null; }
    try {
      const stored = await decodePromptState(bytes, {identity: this.identity, entries: this.runner.cache.entries});
      this.known = {ids: stored.ids, bytes: bytes.byteLength};
      return stored;
    } catch (error) {
      if (error.name !== "PromptStateMismatch") throw error;
      console.warn(`botpsy: ${error.message}; removing it, the prompt is computed instead.`);
      this.report.rejected = error.message;
      this.known = null;
      await removeDerived(this.folderUrl, path);
      return null;
    }
  }

  /**
   * Stores the live state, which covers exactly promptIds (a finished persist prefill); skipped
   * when the stored one already holds these tokens. The copy is made before this resolves; the
   * checksum and the write go on in the background (settled() waits for them).
   */
  async save(promptIds) {
    const ids = this.runner.processedIds;
    if (!sameIds(ids, promptIds)) return;
    if (this.shippedIds && sameIds(this.shippedIds, ids)) return;  // the folder holds it: no copy
    if (this.known === undefined) await this.#read().catch(() => null);
    if (this.known && sameIds(this.known.ids, ids)) return;
    const path = await this.#statePath();
    const file = await encodePromptState({identity: this.identity, ids, state: await this.runner.cache.exportState()});
    // Known at once, so the prompts that follow (which reuse the live state anyway) do not wait
    // for the write; a read meanwhile finds the old file or the new one, each checked as usual.
    this.known = {ids: ids.slice(), bytes: file.byteLength};
    this.report.storedBytes = file.byteLength;
    this.pending = this.pending.then(() => this.#write(path, file))
      .catch((error) => console.warn(`botpsy: the prompt state was not stored (${error.message}).`));
  }

  async #write(path, file) {
    if (!(await writeDerived(this.folderUrl, path, await sealPromptState(file)))) { this.known = undefined; return; }
    // One state per folder: the ones of other tool sets, dtypes or versions go.
    for (const other of await listDerived(this.folderUrl)) {
      if (other.path.startsWith(STATE_DIRECTORY) && other.path !== path) await removeDerived(this.folderUrl, other.path);
    }
  }

  /** Resolves when the background write (if any) is done. */
  settled() { return this.pending; }

  /** The stored files of `folderUrl` were deleted (deleteModel): if they were this model's, nothing is stored now. */
  forgetStored(folderUrl) {
    if (normalizeFolderUrl(folderUrl) === normalizeFolderUrl(this.folderUrl)) this.known = null;
  }
}

/**
 * The state the browser stored for `folderUrl`, packed for shipping with the model (what
 * `botpsy-web prompt-state` takes from the page after its warm-up): {packed, entry}, entry = the
 * index fields that describe it (shipped-prompt-state.js). Throws when none or several are stored.
 */
export async function packStoredPromptState(folderUrl) {
  const stored = (await listDerived(folderUrl)).filter((file) => file.path.startsWith(STATE_DIRECTORY));
  if (stored.length !== 1) throw new Error(`expected one stored prompt state for ${folderUrl}, found ${stored.length}`);
  const file = await readDerived(folderUrl, stored[0].path);
  if (!file) throw new Error(`the stored prompt state ${stored[0].path} of ${folderUrl} cannot be read`);
  const header = await readPromptStateHeader(file);
  return {
    packed: await packPromptState(file),
    entry: {encoding: ENCODING, rawBytes: file.byteLength, formatVersion: header.version, tokenCount: header.tokenCount,
            tokensSha256: header.tokensSha256, identity: header.identity},
  };
}
