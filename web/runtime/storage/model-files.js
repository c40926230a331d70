// All model-file downloading and caching goes through this module (page or Web Worker).
//
// loadModelFiles(folderUrl, manifest, paths, {onProgress, signal}) -> Map(path -> Uint8Array)
//   Each file comes from the local store when its size and sha256 match the manifest,
//   otherwise from the network; a download whose size or sha256 differs from the
//   manifest is rejected with an error naming the file. Stores tried in order:
//   Cache API, then OPFS, then none (a console warning, and everything still works).
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

let storePromise = null;

/** The store this context uses: Cache API, else OPFS, else null (no caching). */
function openStore() {
  storePromise ??= (async () => {
    const reasons = [];
    for (const open of [openCacheApiStore, openOpfsStore]) {
      try {
        return await open();
      } catch (error) {
        reasons.push(error.message);
      }
    }
    console.warn(`botpsy: model files will not be cached (${reasons.join("; ")}); ` +
      "they will be downloaded again on every load.");
    return null;
  })();
  return storePromise;
}

/** Every store that can be opened here: deletion and usage look in all of them. */
async function openAllStores() {
  const stores = [];
  for (const open of [openCacheApiStore, openOpfsStore]) {
    try {
      stores.push(await open());
    } catch {
      // unavailable here: nothing of ours can be in it
    }
  }
  return stores;
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
export async function fetchManifest(folderUrl, {signal} = {}) {
  const folder = normalizeFolderUrl(folderUrl);
  const url = new URL(MANIFEST_PATH, folder).href;
  const store = await openStore();
  let response;
  try {
    response = await fetch(url, {cache: "no-store", signal});
  } catch (error) {
    if (error.name === "AbortError") throw error;
    return storedManifest(store, folder, url, error.message);
  }
  if (response.status === 404) {
    throw new Error(`no model folder at ${folder}: ${url} was not found (HTTP 404)`);
  }
  if (!response.ok) {
    return storedManifest(store, folder, url, `HTTP ${response.status} ${response.statusText}`.trim());
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const manifest = parseManifest(bytes, url);
  await storeQuietly(store, folder, MANIFEST_PATH, bytes);
  return manifest;
}

async function storedManifest(store, folder, url, networkProblem) {
  const stored = store ? await store.read(folder, MANIFEST_PATH).catch(() => null) : null;
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
  const store = await openStore();
  const stored = () => (store ? store.read(folder, path).catch(() => null) : null);
  let response;
  try {
    response = await fetch(url, {cache: "no-store", signal});
  } catch (error) {
    if (error.name === "AbortError") throw error;
    return stored();
  }
  if (response.status === 404) {
    await store?.remove(folder, path).catch(() => {});
    return null;
  }
  if (!response.ok) return stored();
  const bytes = new Uint8Array(await response.arrayBuffer());
  await storeQuietly(store, folder, path, bytes);
  return bytes;
}

/** Downloads (or takes from the store) the given files of a model folder, verified. */
export async function loadModelFiles(folderUrl, manifest, paths, {onProgress, signal} = {}) {
  const folder = normalizeFolderUrl(folderUrl);
  const expected = paths.map((path) => expectedFile(manifest, path, folder));
  const progress = new ProgressReporter(onProgress, expected.reduce((sum, file) => sum + file.size, 0));
  const store = await openStore();
  const result = new Map();
  for (const file of expected) {
    signal?.throwIfAborted();
    let bytes = await readVerified(store, folder, file, progress);
    if (bytes) {
      progress.emit("cached", file, file.size);
    } else {
      bytes = await download(folder, file, progress, signal);
      progress.emit("verify", file, file.size);
      await checkIntegrity(bytes, file, "download");
      await storeQuietly(store, folder, file.path, bytes);
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

/** The stored copy when it is intact; a truncated or corrupted one is removed (null). */
async function readVerified(store, folder, file, progress) {
  if (!store) return null;
  let bytes;
  try {
    bytes = await store.read(folder, file.path);
  } catch (error) {
    console.warn(`botpsy: could not read the stored ${file.path} (${error.message}); downloading it again.`);
    return null;
  }
  if (!bytes) return null;
  progress.emit("verify", file, 0);
  try {
    await checkIntegrity(bytes, file, "stored copy");
    return bytes;
  } catch (error) {
    console.warn(`botpsy: ${error.message}; downloading it again.`);
    await store.remove(folder, file.path).catch(() => {});
    return null;
  }
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

/** Stores a file; a full or failing store is logged and ignored (the bytes are still used). */
async function storeQuietly(store, folder, path, bytes) {
  if (!store) return;
  try {
    await store.write(folder, path, bytes);
  } catch (error) {
    console.warn(`botpsy: could not store ${path} in ${store.name} (${error.message}); ` +
      "it will be downloaded again next time.");
  }
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
  for (const store of await openAllStores()) {
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
  const store = await openStore();
  if (!store) return null;
  try {
    return await store.read(normalizeFolderUrl(folderUrl), derivedPath(path));
  } catch (error) {
    console.warn(`botpsy: could not read the stored ${path} (${error.message}); it will be computed again.`);
    return null;
  }
}

/** Stores derived data; false when there is no store or it refused (logged). */
export async function writeDerived(folderUrl, path, bytes) {
  const store = await openStore();
  if (!store) return false;
  try {
    await store.write(normalizeFolderUrl(folderUrl), derivedPath(path), bytes);
    return true;
  } catch (error) {
    console.warn(`botpsy: could not store ${path} in ${store.name} (${error.message}); it will be computed again next time.`);
    return false;
  }
}

/** Removes derived data (nothing happens when it is not there). */
export async function removeDerived(folderUrl, path) {
  const store = await openStore();
  await store?.remove(normalizeFolderUrl(folderUrl), derivedPath(path)).catch(() => {});
}

/** The derived data stored for a folder: [{path, bytes}]. */
export async function listDerived(folderUrl) {
  const store = await openStore();
  if (!store) return [];
  const folder = normalizeFolderUrl(folderUrl);
  const files = await store.storedFiles().catch(() => []);
  return files.filter((file) => file.folderUrl === folder && file.path.startsWith(DERIVED_DIRECTORY))
    .map(({path, bytes}) => ({path, bytes}));
}

/** Removes every stored file of a model folder; true when something was removed. */
export async function deleteModel(folderUrl) {
  const folder = normalizeFolderUrl(folderUrl);
  let removed = 0;
  for (const store of await openAllStores()) {
    removed += await store.deleteModel(folder);
  }
  return removed > 0;
}
