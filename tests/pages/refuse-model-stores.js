// Test only: the model worker's stores refuse to keep files, as in a browser window that cannot
// keep the weights (a non-persistent Chromium context answers Cache.put of a 630 MB file with
// "Unexpected internal error"). tests/product/test_storage_that_fails.py serves the model worker as
// a module that imports this first, then the real worker (Playwright's init scripts do not run in
// workers, and the model files are written there).
//   ?refuse=cache-api        Cache.put rejects
//   ?refuse=cache-api,opfs   OPFS writes reject too
const refused = (new URL(import.meta.url).searchParams.get("refuse") ?? "").split(",");

if (refused.includes("cache-api")) {
  Cache.prototype.put = async function put() {
    throw new DOMException("Unexpected internal error.", "UnknownError");
  };
}
if (refused.includes("opfs")) {
  FileSystemWritableFileStream.prototype.write = async function write() {
    throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
  };
}
