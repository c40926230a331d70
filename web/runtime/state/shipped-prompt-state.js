// Prompt states shipped with the model folder: a first visit restores the state of the page's
// default prompt (system prompt + default tools) instead of prefilling it (~25 s at 0.5B on WASM).
// `botpsy-web prompt-state` computes it in headless Chromium with this runtime, through the app's
// own warm-up (so it is the state a WASM visit stores, bit for bit), and writes beside the model:
//
//   prompt-states.json             the index: {format, version, states: [entry]}, entry =
//                                  {file, size, sha256, encoding, rawBytes, tokenCount, tokensSha256,
//                                   identity, prompt, ...} (docs/contracts.md section 1)
//   prompt-states/<backend>-<dtype>.bin   the prompt-state file (prompt-state-format.js), packed
//
// Its key: the tokens the prompt starts with (tokensSha256 over tokenCount int32 ids: the rendered
// prompt text, its template and tokenizer), the identity (weights' sha256, dtype, graph, backend,
// onnxruntime version, cache layout) and the file's format version. Anything else (other tools
// enabled, another backend or template, a damaged file) is not used: the prompt is prefilled as
// without it, and the person sees no error (a console line, and `rejected`, say why when the file
// itself was bad).
//
// The thread count is not part of a shipped state's key, unlike a state the browser stored:
// onnxruntime's kernels split work between threads by output rows and columns, never inside a
// sum, so the thread count changes no bit (1 and 2 threads compared bit for bit in
// tests/runtime/test_shipped_prompt_state.py; 3 and 4 need more cores than the test machine has),
// and the machine that computes the state is rarely the visitor's.
//
// Packing ("byte-planes-4+gzip", lossless): the file's bytes regrouped in four planes (byte 0 of
// every 4-byte word, then byte 1, ...: the float32 exponents sit together and compress) and
// gzipped (CompressionStream / DecompressionStream). fp16 storage would halve it but change the
// bits a visit computes, so it is not used.
import {fetchOptionalFolderFile, loadModelFiles} from "../storage/model-files.js";
import {PromptStateMismatch, canonicalJson, decodePromptState, tokensSha256} from "./prompt-state-format.js";

export const SHIPPED_INDEX = "prompt-states.json";
export const SHIPPED_DIRECTORY = "prompt-states/";
export const INDEX_FORMAT = "botpsy-prompt-states";
export const INDEX_VERSION = 1;
export const ENCODING = "byte-planes-4+gzip";
const PLANES = 4;
const UNKEYED = new Set(["threads"]);

/** The file's bytes regrouped as PLANES planes (the tail that fills no whole word stays last). */
export function toPlanes(bytes) {
  const words = Math.floor(bytes.length / PLANES);
  const planes = new Uint8Array(bytes.length);
  for (let plane = 0; plane < PLANES; plane++) {
    const base = plane * words;
    for (let i = 0; i < words; i++) planes[base + i] = bytes[i * PLANES + plane];
  }
  planes.set(bytes.subarray(words * PLANES), words * PLANES);
  return planes;
}

/** toPlanes undone. */
export function fromPlanes(planes) {
  const words = Math.floor(planes.length / PLANES);
  const bytes = new Uint8Array(planes.length);
  for (let plane = 0; plane < PLANES; plane++) {
    const base = plane * words;
    for (let i = 0; i < words; i++) bytes[i * PLANES + plane] = planes[base + i];
  }
  bytes.set(planes.subarray(words * PLANES), words * PLANES);
  return bytes;
}

async function throughStream(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

/** A prompt-state file (prompt-state-format.js) packed for shipping. */
export function packPromptState(file) {
  return throughStream(toPlanes(file), new CompressionStream("gzip"));
}

/** packPromptState undone; throws PromptStateMismatch when the bytes are not a packed file of `rawBytes` bytes. */
export async function unpackPromptState(packed, rawBytes) {
  let planes;
  try {
    planes = await throughStream(packed, new DecompressionStream("gzip"));
  } catch (error) {
    throw new PromptStateMismatch(`cannot be unpacked (${error.message})`);
  }
  if (planes.length !== rawBytes) throw new PromptStateMismatch(`unpacks to ${planes.length} bytes, its index says ${rawBytes}`);
  return fromPlanes(planes);
}

/** Whether a shipped state's identity is this model setup's (the thread count aside, see above). */
export function sameSetup(shipped, identity) {
  const keyed = (value) => Object.fromEntries(Object.entries(value ?? {}).filter(([key]) => !UNKEYED.has(key)));
  return canonicalJson(keyed(shipped)) === canonicalJson(keyed(identity));
}

// The index's entries that can be used at all (a malformed index is one console line, then none).
function readIndex(bytes, folderUrl) {
  let index;
  try {
    index = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    console.warn(`botpsy: ${folderUrl}${SHIPPED_INDEX} is not valid JSON (${error.message}); no shipped prompt state.`);
    return [];
  }
  if (index?.format !== INDEX_FORMAT || index.version !== INDEX_VERSION || !Array.isArray(index.states)) {
    console.warn(`botpsy: ${folderUrl}${SHIPPED_INDEX} is not a version ${INDEX_VERSION} "${INDEX_FORMAT}" index; ` +
      "no shipped prompt state.");
    return [];
  }
  return index.states.filter((entry) => typeof entry?.file === "string" && entry.file.startsWith(SHIPPED_DIRECTORY) &&
    !entry.file.includes("..") && entry.encoding === ENCODING && Number.isSafeInteger(entry.tokenCount) &&
    entry.tokenCount > 0 && Number.isSafeInteger(entry.rawBytes) && typeof entry.tokensSha256 === "string");
}

/** The shipped states of one loaded model: which one a prompt starts with, and reading it. */
export class ShippedPromptStates {
  /** folderUrl: the model folder; identity: promptStateIdentity(); entries: the cache's (describeCache). */
  constructor({folderUrl, identity, entries}) {
    this.folderUrl = folderUrl;
    this.identity = identity;
    this.entries = entries;
    this.indexEntries = null;  // a promise of this setup's entries, fetched once
    this.unusable = new Set();  // files that could not be used on this load: not tried again
  }

  /** This setup's entries of the folder's index ([] when there is none or it cannot be read). */
  states() {
    this.indexEntries ??= fetchOptionalFolderFile(this.folderUrl, SHIPPED_INDEX)
      .then((bytes) => (bytes ? readIndex(bytes, this.folderUrl) : []))
      .catch((error) => {
        console.info(`botpsy: no shipped prompt state (${error.message}).`);
        return [];
      })
      .then((states) => states.filter((entry) => sameSetup(entry.identity, this.identity)));
    return this.indexEntries;
  }

  /**
   * The entry whose tokens promptIds start with, covering more than `reused` and at most `limit`
   * tokens (the longest when several do); null when none does. Reads no state file.
   */
  async covering(promptIds, reused, limit) {
    let best = null;
    for (const entry of await this.states()) {
      if (entry.tokenCount <= reused || entry.tokenCount > limit || entry.tokenCount <= (best?.tokenCount ?? 0) ||
          this.unusable.has(entry.file)) continue;
      if (await tokensSha256(promptIds.slice(0, entry.tokenCount)) === entry.tokensSha256) best = entry;
    }
    return best;
  }

  /**
   * Reads an entry's file through the model-files store (downloaded once, its size and sha256
   * checked against the index, then kept for offline use) and returns {ids, state} as
   * decodePromptState does. Throws (PromptStateMismatch or the store's error) when it cannot be used.
   */
  async read(entry) {
    try {
      return await this.#read(entry);
    } catch (error) {
      this.unusable.add(entry.file);
      throw error;
    }
  }

  async #read(entry) {
    const listing = {files: {[entry.file]: {size: entry.size, sha256: entry.sha256}}};
    const packed = (await loadModelFiles(this.folderUrl, listing, [entry.file])).get(entry.file);
    const file = await unpackPromptState(packed, entry.rawBytes);
    const stored = await decodePromptState(file, {identity: entry.identity, entries: this.entries});
    if (stored.ids.length !== entry.tokenCount) throw new PromptStateMismatch("holds another number of tokens than its index says");
    return stored;
  }
}
