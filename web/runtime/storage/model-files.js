// All model-file downloading and caching goes through this module (page or Web Worker).
//
// loadModelFiles(folderUrl, manifest, paths, {onProgress, signal, onNotKept}) -> Map(path -> Uint8Array)
//   Each file comes from the local store when its size and sha256 match the manifest,
//   otherwise from the network; a download whose size or sha256 differs from the
//   manifest is rejected with an error naming the file. Stores tried in order:
//   Cache API, then OPFS, then none (a console warning, and everything still works).
//   A file goes to the first store that takes it (a Cache API that refuses a 630 MB put
//   hands it to OPFS), and is read from whichever store holds it.
//   onNotKept({path, reason}): a file that no store would take (it is used all the same);
//   storageReport() turns these into the load result's `storage` field.
//
// onProgress({stage, file, loaded, total, percent, etaSeconds, fileLoaded, fileTotal})
//   stage: "download" (bytes arriving), "verify" (hashing), "cached" (taken from the store).
//   loaded/total/percent count all requested files together; fileLoaded/fileTotal the
//   current file. etaSeconds is null until the download rate is known.

import {sha256Hex} from "./sha256.js";
import {openCacheApiStore} from "./cache-api.js";
import {openOpfsStore} from "./opfs.js";

const MANIFEST_PATH = "manifest.json";
const PROGRESS_INTERVAL_MS = 100;

let storesPromise = null;

/**
 * The stores this context can open, in the order files go to them (Cache API, then OPFS):
 * {stores, unavailable: [why each other one cannot be opened]}. Reading, deletion and usage
 * look in all of them.
 */
function openStores() {
  storesPromise ??= (async () => {
    const stores = [];
    const unavailable = [];
    for (const open of [openCacheApiStore, openOpfsStore]) {
      try {
        stores.push(await open());
      } catch (error) {
        unavailable.push(error.message);
      }
    }
    if (!stores.length) {
      console.warn(`botpsy: model files will not be cached (${unavailable.join("; ")}); ` +
        "they will be downloaded again on every load.");
    }
    return {stores, unavailable};
  })();
  return storesPromise;
}

/** The stored bytes of a file from the first store that has it, or null (an unreadable store is logged). */
async function readStored(folder, path) {
  const {stores} = await openStores();
  for (const store of stores) {
    try {
      const bytes = await store.read(folder, path);
      if (bytes) return bytes;
    } catch (error) {
      console.warn(`botpsy: could not read the stored ${path} from ${store.name} (${error.message}).`);
    }
  }
  return null;
}

/**
 * Stores a file in the first store that takes it and removes any copy the others hold (one copy
 * per file, so an older one is never read first). Never throws: null when the file was kept,
 * else why no store took it (logged with `consequence` when there was a store to try).
 */
async function keep(folder, path, bytes, consequence) {
  const {stores, unavailable} = await openStores();
  const refusals = [];
  for (const store of stores) {
    try {
      await store.write(folder, path, bytes);
    } catch (error) {
      refusals.push(`${store.name}: ${error.message}`);
      continue;
    }
    for (const other of stores) {
      if (other !== store) await other.remove(folder, path).catch(() => {});
    }
    if (refusals.length) console.info(`botpsy: stored ${path} in ${store.name} (${refusals.join("; ")}).`);
    return null;
  }
  if (!stores.length) return `no storage here (${unavailable.join("; ")})`;
  const reason = refusals.join("; ");
  console.warn(`botpsy: could not store ${path} (${reason}); ${consequence}.`);
  return reason;
}

/** Removes a file from every store (nothing happens where it is not). */
async function removeEverywhere(folder, path) {
  const {stores} = await openStores();
  for (const store of stores) await store.remove(folder, path).catch(() => {});
}

/**
 * Stores a file of the folder; one no store takes is still used (logged, and told to onNotKept).
 * @param {(failure: {path: string, reason: string}) => void} [onNotKept]
 */
async function keepFolderFile(folder, path, bytes, onNotKept) {
  const reason = await keep(folder, path, bytes, "it will be downloaded again next time");
  if (reason !== null) onNotKept?.({path, reason});
}

/**
 * @typedef {object} StorageReport  whether this device kept a loaded model (the load result's `storage`)
 * @property {boolean} kept      every file is stored: the next load downloads nothing and works offline
 * @property {string[]} notKept  the files no store would take: they are downloaded again next time
 * @property {string} reason     why not, in words; "" when kept
 */

/** The StorageReport of a load, from the failures its onNotKept heard of. */
export function storageReport(failures) {
  return {
    kept: failures.length === 0,
    notKept: failures.map((failure) => failure.path),
    reason: [...new Set(failures.map((failure) => failure.reason))].join("; "),
  };
}

/** Absolute URL of a model folder, with a trailing slash. */
export function normalizeFolderUrl(folderUrl) {
  if (typeof folderUrl !== "string" || folderUrl === "") {
    throw new TypeError(`model folder URL must be a non-empty string, got ${JSON.stringify(folderUrl)}`);
  }
  const url = new URL(folderUrl, globalThis.location?.href);
  url.search = "";
  url.hash = "";
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  return url.href;
}

/**
 * The folder's manifest.json: from the network when reachable (it may have changed),
 * else the copy stored on the last successful load (offline use).
 */
export async function fetchManifest(folderUrl, {signal, onNotKept} = {}) {
  const folder = normalizeFolderUrl(folderUrl);
  const url = new URL(MANIFEST_PATH, folder).href;
  let response;
  try {
    response = await fetch(url, {cache: "no-store", signal});
  } catch (error) {
    if (error.name === "AbortError") throw error;
    return storedManifest(folder, url, error.message);
  }
  if (response.status === 404) {
    throw new Error(`no model folder at ${folder}: ${url} was not found (HTTP 404)`);
  }
  if (!response.ok) {
    return storedManifest(folder, url, `HTTP ${response.status} ${response.statusText}`.trim());
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const manifest = parseManifest(bytes, url);
  await keepFolderFile(folder, MANIFEST_PATH, bytes, onNotKept);
  return manifest;
}

async function storedManifest(folder, url, networkProblem) {
  const stored = await readStored(folder, MANIFEST_PATH);
  if (!stored) {
    throw new Error(`could not fetch ${url} (${networkProblem}) and no stored copy exists`);
  }
  console.info(`botpsy: ${url} unreachable (${networkProblem}); using the stored copy.`);
  return parseManifest(stored, url);
}

function parseManifest(bytes, url) {
  let manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new Error(`${url} is not a valid manifest: ${error.message}`);
  }
  if (manifest?.format_version !== 1 || typeof manifest.files !== "object" || manifest.files === null) {
    throw new Error(`${url} is not a valid manifest: expected format_version 1 and a "files" table`);
  }
  return manifest;
}

/**
 * A small file of the folder that is not in the manifest and may be absent (prompt-states.json):
 * its bytes from the network when reachable (then stored), else the copy stored the last time;
 * null when the server has none (HTTP 404: a stored copy goes too) or when offline with no copy.
 */
export async function fetchOptionalFolderFile(folderUrl, path, {signal} = {}) {
  const folder = normalizeFolderUrl(folderUrl);
  const url = new URL(path, folder).href;
  const stored = () => readStored(folder, path);
  let response;
  try {
    response = await fetch(url, {cache: "no-store", signal});
  } catch (error) {
    if (error.name === "AbortError") throw error;
    return stored();
  }
  if (response.status === 404) {
    await removeEverywhere(folder, path);
    return null;
  }
  if (!response.ok) return stored();
  const bytes = new Uint8Array(await response.arrayBuffer());
  await keepFolderFile(folder, path, bytes);
  return bytes;
}

/** Downloads (or takes from the store) the given files of a model folder, verified. */
export async function loadModelFiles(folderUrl, manifest, paths, {onProgress, signal, onNotKept} = {}) {
  const folder = normalizeFolderUrl(folderUrl);
  const expected = paths.map((path) => expectedFile(manifest, path, folder));
  const progress = new ProgressReporter(onProgress, expected.reduce((sum, file) => sum + file.size, 0));
  const result = new Map();
  for (const file of expected) {
    signal?.throwIfAborted();
    let bytes = await readVerified(folder, file, progress);
    if (bytes) {
      progress.emit("cached", file, file.size);
    } else {
      bytes = await download(folder, file, progress, signal);
      progress.emit("verify", file, file.size);
      await checkIntegrity(bytes, file, "download");
      await keepFolderFile(folder, file.path, bytes, onNotKept);
    }
    progress.fileDone(file);
    result.set(file.path, bytes);
  }
  return result;
}

function expectedFile(manifest, path, folder) {
  const entry = manifest?.files?.[path];
  if (!entry) {
    throw new Error(`model file "${path}" is not listed in the manifest of ${folder}`);
  }
  if (!Number.isSafeInteger(entry.size) || entry.size < 0 || !/^[0-9a-f]{64}$/.test(entry.sha256 ?? "")) {
    throw new Error(`the manifest entry for "${path}" in ${folder} needs a size and a sha256 (64 hex digits)`);
  }
  return {path, size: entry.size, sha256: entry.sha256};
}

/** The intact stored copy from whichever store holds it; a truncated or corrupted one is removed (null). */
async function readVerified(folder, file, progress) {
  const {stores} = await openStores();
  for (const store of stores) {
    let bytes;
    try {
      bytes = await store.read(folder, file.path);
    } catch (error) {
      console.warn(`botpsy: could not read the stored ${file.path} from ${store.name} (${error.message}); downloading it again.`);
      continue;
    }
    if (!bytes) continue;
    progress.emit("verify", file, 0);
    try {
      await checkIntegrity(bytes, file, "stored copy");
      return bytes;
    } catch (error) {
      console.warn(`botpsy: ${error.message}; downloading it again.`);
      await store.remove(folder, file.path).catch(() => {});
    }
  }
  return null;
}

async function checkIntegrity(bytes, file, what) {
  if (bytes.byteLength !== file.size) {
    throw new Error(`model file "${file.path}" (${what}) has ${bytes.byteLength} bytes, ` +
      `the manifest says ${file.size}: it is truncated or corrupted`);
  }
  const actual = await sha256Hex(bytes);
  if (actual !== file.sha256) {
    throw new Error(`model file "${file.path}" (${what}) failed its integrity check: ` +
      `sha256 ${actual} does not match the manifest's ${file.sha256}`);
  }
}

async function download(folder, file, progress, signal) {
  const url = new URL(file.path, folder).href;
  let response;
  try {
    response = await fetch(url, {cache: "no-store", signal});
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new Error(`could not download model file "${file.path}" from ${url}: ${error.message}`);
  }
  if (!response.ok) {
    throw new Error(`could not download model file "${file.path}" from ${url}: ` +
      `HTTP ${response.status} ${response.statusText}`.trim());
  }
  // Filled in place: one copy of the file in memory, however large.
  const bytes = new Uint8Array(file.size);
  let received = 0;
  const reader = response.body.getReader();
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    if (received + value.byteLength > file.size) {
      await reader.cancel();
      throw new Error(`model file "${file.path}" from ${url} is larger than the manifest's ` +
        `${file.size} bytes: the folder on the server does not match its manifest`);
    }
    bytes.set(value, received);
    received += value.byteLength;
    progress.emit("download", file, received, false);
  }
  if (received !== file.size) {
    throw new Error(`model file "${file.path}" from ${url} ended after ${received} of ` +
      `${file.size} bytes: the download was cut short`);
  }
  progress.emit("download", file, received);
  return bytes;
}

class ProgressReporter {
  constructor(onProgress, total) {
    this.onProgress = onProgress;
    this.total = total;
    this.completed = 0;            // bytes of the files already finished
    this.downloaded = 0;           // bytes that came over the network, for the rate
    this.downloadStarted = null;
    this.currentFileLoaded = 0;
    this.lastReport = -Infinity;
  }

  emit(stage, file, fileLoaded, force = true) {
    const now = performance.now();
    if (stage === "download") {
      this.downloadStarted ??= now;
      this.downloaded += fileLoaded - this.currentFileLoaded;
      this.currentFileLoaded = fileLoaded;
    }
    if (!this.onProgress || (!force && now - this.lastReport < PROGRESS_INTERVAL_MS)) return;
    this.lastReport = now;
    const loaded = this.completed + fileLoaded;
    this.onProgress({
      stage,
      file: file.path,
      loaded,
      total: this.total,
      percent: this.total ? (100 * loaded) / this.total : 100,
      etaSeconds: this.eta(loaded, now),
      fileLoaded,
      fileTotal: file.size,
    });
  }

  fileDone(file) {
    this.completed += file.size;
    this.currentFileLoaded = 0;
  }

  eta(loaded, now) {
    if (loaded >= this.total) return 0;
    const seconds = this.downloadStarted === null ? 0 : (now - this.downloadStarted) / 1000;
    if (seconds < 0.05 || this.downloaded === 0) return null;
    return (this.total - loaded) / (this.downloaded / seconds);
  }
}

/**
 * Bytes used by this origin and by each stored model: {usedBytes, quotaBytes, models: [{folderUrl,
 * bytes, derivedBytes}]}; bytes counts everything stored for the folder, derivedBytes the part that
 * is derived data (prompt states).
 */
export async function storageUsage() {
  const estimate = await globalThis.navigator?.storage?.estimate?.().catch(() => null);
  const sizes = new Map();
  for (const store of (await openStores()).stores) {
    for (const {folderUrl, path, bytes} of await store.storedFiles()) {
      const size = sizes.get(folderUrl) ?? {folderUrl, bytes: 0, derivedBytes: 0};
      size.bytes += bytes;
      if (path.startsWith(DERIVED_DIRECTORY)) size.derivedBytes += bytes;
      sizes.set(folderUrl, size);
    }
  }
  return {
    usedBytes: estimate?.usage ?? null,
    quotaBytes: estimate?.quota ?? null,
    models: [...sizes.values()],
  };
}

// Derived data: what the runtime computes from a model and keeps beside its files (the
// prompt states of prompt-state.js). It goes to the same store under the folder, so it is
// counted with the model and removed with it, but it is not in the manifest: its own format
// carries its checksum. Paths start with DERIVED_DIRECTORY, which no exported file does.
export const DERIVED_DIRECTORY = ".botpsy-derived/";

function derivedPath(path) {
  if (typeof path !== "string" || !path.startsWith(DERIVED_DIRECTORY) || path.includes("..")) {
    throw new Error(`derived data paths start with "${DERIVED_DIRECTORY}", got ${JSON.stringify(path)}`);
  }
  return path;
}

/** The stored bytes of derived data, or null (nothing stored, no store, or unreadable: logged). */
export async function readDerived(folderUrl, path) {
  return readStored(normalizeFolderUrl(folderUrl), derivedPath(path));
}

/** Stores derived data; false when no store took it (logged). */
export async function writeDerived(folderUrl, path, bytes) {
  const reason = await keep(normalizeFolderUrl(folderUrl), derivedPath(path), bytes, "it will be computed again next time");
  return reason === null;
}

/** Removes derived data (nothing happens when it is not there). */
export async function removeDerived(folderUrl, path) {
  await removeEverywhere(normalizeFolderUrl(folderUrl), derivedPath(path));
}

/** The derived data stored for a folder: [{path, bytes}]. */
export async function listDerived(folderUrl) {
  const folder = normalizeFolderUrl(folderUrl);
  const listed = [];
  for (const store of (await openStores()).stores) {
    const files = await store.storedFiles().catch(() => []);
    listed.push(...files.filter((file) => file.folderUrl === folder && file.path.startsWith(DERIVED_DIRECTORY))
      .map(({path, bytes}) => ({path, bytes})));
  }
  return listed;
}

/** Removes every stored file of a model folder; true when something was removed. */
export async function deleteModel(folderUrl) {
  const folder = normalizeFolderUrl(folderUrl);
  let removed = 0;
  for (const store of (await openStores()).stores) {
    removed += await store.deleteModel(folder);
  }
  return removed > 0;
}
