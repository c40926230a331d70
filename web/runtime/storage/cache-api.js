// Model-file store on the Cache API: one cache, keyed by each file's absolute URL
// (folder URL + path inside the folder).
// Every entry records the folder it belongs to, so usage and deletion work per model.

export const MODEL_CACHE_NAME = "botpsy-models-v1";
const FOLDER_HEADER = "X-Botpsy-Folder";

/** Opens the store, or throws when the Cache API is unavailable (opaque origin, insecure context). */
export async function openCacheApiStore() {
  if (typeof globalThis.caches === "undefined") {
    throw new Error("the Cache API is not available in this context");
  }
  const cache = await globalThis.caches.open(MODEL_CACHE_NAME);
  return new CacheApiStore(cache);
}

class CacheApiStore {
  constructor(cache) {
    this.name = "cache-api";
    this.cache = cache;
  }

  async read(folderUrl, path) {
    const response = await this.cache.match(new URL(path, folderUrl).href);
    return response ? new Uint8Array(await response.arrayBuffer()) : null;
  }

  async write(folderUrl, path, bytes) {
    const headers = {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(bytes.byteLength),
      [FOLDER_HEADER]: folderUrl,
    };
    await this.cache.put(new URL(path, folderUrl).href, new Response(bytes, {headers}));
  }

  async remove(folderUrl, path) {
    await this.cache.delete(new URL(path, folderUrl).href);
  }

  /** Every stored file: [{folderUrl, path, bytes}]. */
  async storedFiles() {
    const files = [];
    for (const request of await this.cache.keys()) {
      const response = await this.cache.match(request);
      if (!response) continue;
      const folderUrl = response.headers.get(FOLDER_HEADER);
      if (!folderUrl || !request.url.startsWith(folderUrl)) continue;
      const bytes = Number(response.headers.get("Content-Length") || 0);
      files.push({folderUrl, path: request.url.slice(folderUrl.length), bytes});
    }
    return files;
  }

  async deleteModel(folderUrl) {
    let deleted = 0;
    for (const request of await this.cache.keys()) {
      const response = await this.cache.match(request);
      if (response?.headers.get(FOLDER_HEADER) === folderUrl) {
        await this.cache.delete(request);
        deleted += 1;
      }
    }
    return deleted;
  }
}
