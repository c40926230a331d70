// Model-file store in the origin private file system (OPFS), for when the Cache API is
// missing or refuses a file: botpsy-models/<encoded folder URL>/<encoded path inside the folder>.

const ROOT_DIRECTORY = "botpsy-models";

/** Opens the store, or throws when OPFS is unavailable (opaque origin, private mode, old browser). */
export async function openOpfsStore() {
  const getDirectory = globalThis.navigator?.storage?.getDirectory;
  if (typeof getDirectory !== "function") {
    throw new Error("the origin private file system is not available in this context");
  }
  const origin = await globalThis.navigator.storage.getDirectory();
  const root = await origin.getDirectoryHandle(ROOT_DIRECTORY, {create: true});
  return new OpfsStore(root);
}

class OpfsStore {
  constructor(root) {
    this.name = "opfs";
    this.root = root;
  }

  async read(folderUrl, path) {
    try {
      const folder = await this.root.getDirectoryHandle(encodeName(folderUrl));
      const handle = await folder.getFileHandle(encodeName(path));
      const file = await handle.getFile();
      return new Uint8Array(await file.arrayBuffer());
    } catch (error) {
      if (error.name === "NotFoundError") return null;
      throw error;
    }
  }

  async write(folderUrl, path, bytes) {
    const folder = await this.root.getDirectoryHandle(encodeName(folderUrl), {create: true});
    const name = encodeName(path);
    const handle = await folder.getFileHandle(name, {create: true});
    let writable = null;
    try {
      writable = await handle.createWritable();
      await writable.write(bytes);
      await writable.close();
    } catch (error) {
      await writable?.abort().catch(() => {});
      // No empty (just created) or older file stays behind to be read as the stored copy.
      await folder.removeEntry(name).catch(() => {});
      throw error;
    }
  }

  async remove(folderUrl, path) {
    try {
      const folder = await this.root.getDirectoryHandle(encodeName(folderUrl));
      await folder.removeEntry(encodeName(path));
    } catch (error) {
      if (error.name !== "NotFoundError") throw error;
    }
  }

  /** Every stored file: [{folderUrl, path, bytes}]. */
  async storedFiles() {
    const files = [];
    for await (const [name, folder] of this.root.entries()) {
      if (folder.kind !== "directory") continue;
      for await (const [fileName, entry] of folder.entries()) {
        if (entry.kind !== "file") continue;
        files.push({folderUrl: decodeURIComponent(name), path: decodeURIComponent(fileName), bytes: (await entry.getFile()).size});
      }
    }
    return files;
  }

  async deleteModel(folderUrl) {
    try {
      await this.root.removeEntry(encodeName(folderUrl), {recursive: true});
      return 1;
    } catch (error) {
      if (error.name === "NotFoundError") return 0;
      throw error;
    }
  }
}

// OPFS names cannot hold "/"; encoding keeps them unique and reversible.
function encodeName(text) {
  return encodeURIComponent(text);
}
