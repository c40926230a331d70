// The agent's persistent store: JSON values in IndexedDB, one record per
// (collection, key). Python reaches it through botpsy_agent.bridge.BridgeStore.

const DB_VERSION = 1;
const RECORDS = "records";

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

export class IndexedDbStore {
  static async open(name = "botpsy-agent") {
    if (!globalThis.indexedDB) throw new Error("IndexedDB is unavailable in this browser context: notes and other tool data cannot be saved");
    const request = indexedDB.open(name, DB_VERSION);
    request.onupgradeneeded = () => {
      request.result.createObjectStore(RECORDS, {keyPath: ["collection", "key"]});
    };
    return new IndexedDbStore(await promised(request));
  }

  constructor(db) {
    this.db = db;
  }

  #records(mode) {
    return this.db.transaction(RECORDS, mode).objectStore(RECORDS);
  }

  /** The stored JSON text, or undefined. */
  async get(collection, key) {
    const record = await promised(this.#records("readonly").get([collection, key]));
    return record ? record.json : undefined;
  }

  async put(collection, key, json) {
    await promised(this.#records("readwrite").put({collection, key, json}));
  }

  /** True when a record was removed. */
  async delete(collection, key) {
    const records = this.#records("readwrite");
    const existing = await promised(records.getKey([collection, key]));
    if (existing === undefined) return false;
    await promised(records.delete([collection, key]));
    return true;
  }

  /** JSON text of [[key, value], ...] for one collection, in key order. */
  async items(collection) {
    // [collection] sorts before every [collection, key]; [collection, []] after them (arrays > strings).
    const range = IDBKeyRange.bound([collection], [collection, []]);
    const records = await promised(this.#records("readonly").getAll(range));
    return "[" + records.map((record) => `[${JSON.stringify(record.key)},${record.json}]`).join(",") + "]";
  }

  close() {
    this.db.close();
  }
}
