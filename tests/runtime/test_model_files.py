"""web/runtime/storage/model-files.js in real headless Chromium: downloads with byte progress,
sha256 checks against the manifest, the Cache API -> OPFS -> no-cache fallback, repair of
corrupted stored files, offline reuse, storage usage and deletion, page and module worker."""

import hashlib
import json
import os
import shutil

import pytest

HARNESS_FOLDER = "model-files-harness"
GOOD_FOLDER = "model-files-good"
BAD_FOLDER = "model-files-bad"
WEIGHTS = "onnx/model.onnx"

# A module both the page and the worker import: loads a folder and returns the events and digests.
LOAD_ALL_JS = """
import * as modelFiles from "/web/runtime/storage/model-files.js";
export {modelFiles};
export async function loadAll(folderUrl, paths) {
  const events = [];
  const manifest = await modelFiles.fetchManifest(folderUrl);
  const files = await modelFiles.loadModelFiles(folderUrl, manifest, paths ?? Object.keys(manifest.files),
                                                {onProgress: (event) => events.push(event)});
  const digests = {};
  for (const [path, bytes] of files) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    digests[path] = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  return {events, digests};
}
"""
WORKER_JS = """
import {loadAll} from "./load-all.js";
self.onmessage = async ({data}) => {
  try {
    self.postMessage({result: await loadAll(data.folderUrl, data.paths)});
  } catch (error) {
    self.postMessage({error: error.message});
  }
};
"""
HARNESS_HTML = """<!doctype html><meta charset="utf-8"><title>model-files harness</title>
<script type="module">
import {loadAll, modelFiles} from "./load-all.js";
import * as sha256 from "/web/runtime/storage/sha256.js";
Object.assign(window, {loadAll, modelFiles, sha256});
window.loadInWorker = (folderUrl, paths) => new Promise((resolve, reject) => {
  const worker = new Worker("./worker.js", {type: "module"});
  worker.onmessage = ({data}) => { worker.terminate(); data.error ? reject(new Error(data.error)) : resolve(data.result); };
  worker.onerror = (event) => { worker.terminate(); reject(new Error(event.message || "worker failed to start")); };
  worker.postMessage({folderUrl, paths});
});
window.harnessReady = true;
</script>
"""

# Loaded as <iframe sandbox="allow-scripts">: an opaque origin; the folder's URL comes in the fragment.
OPAQUE_FRAME_HTML = """<!doctype html><meta charset="utf-8"><title>opaque-origin frame</title>
<script type="module">
import * as modelFiles from "/web/runtime/storage/model-files.js";
const folderUrl = decodeURIComponent(location.hash.slice(1));
const warnings = [];
const warn = console.warn;
console.warn = (...args) => { warnings.push(args.join(" ")); warn(...args); };
try {
  const manifest = await modelFiles.fetchManifest(folderUrl);
  const files = await modelFiles.loadModelFiles(folderUrl, manifest, Object.keys(manifest.files));
  parent.postMessage({origin: self.origin, warnings,
                      sizes: Object.fromEntries([...files].map(([p, b]) => [p, b.length]))}, "*");
} catch (error) {
  parent.postMessage({error: error.message}, "*");
}
</script>
"""


def write_model_folder(folder, files, manifest_overrides=None):
    """Writes files and a manifest describing them (manifest_overrides: path -> stored bytes that differ)."""
    if folder.exists():
        shutil.rmtree(folder)
    entries = {}
    for path, data in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((manifest_overrides or {}).get(path, data))
        entries[path] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"format_version": 1, "name": folder.name, "files": entries, "dtypes": {}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return entries


@pytest.fixture(scope="module")
def model_folders(models_dir):
    harness = models_dir / HARNESS_FOLDER
    harness.mkdir(parents=True, exist_ok=True)
    (harness / "index.html").write_text(HARNESS_HTML)
    (harness / "load-all.js").write_text(LOAD_ALL_JS)
    (harness / "worker.js").write_text(WORKER_JS)
    (harness / "opaque-frame.html").write_text(OPAQUE_FRAME_HTML)

    weights = os.urandom(3 * 1024 * 1024 + 17)
    good = {WEIGHTS: weights, "tokenizer.json": b'{"model": {"vocab": {}}}', "config.json": b"{}"}
    entries = write_model_folder(models_dir / GOOD_FOLDER, good)
    tampered = bytearray(weights)
    tampered[1000] ^= 0xFF
    bad_files = {WEIGHTS: weights, "tokenizer.json": b"0123456789"}
    write_model_folder(models_dir / BAD_FOLDER, bad_files,
                       manifest_overrides={WEIGHTS: bytes(tampered), "tokenizer.json": b"01234"})
    return {"good": {path: entry["sha256"] for path, entry in entries.items()}, "sizes": entries}


@pytest.fixture
def harness(guarded_page, server, model_folders):
    guarded_page.goto(f"{server}/models/{HARNESS_FOLDER}/")
    guarded_page.wait_for_function("window.harnessReady === true")
    return guarded_page


def model_requests(page):
    """Collects the URLs of model-file requests the page makes from now on."""
    seen = []
    page.on("request", lambda request: seen.append(request.url) if f"/{GOOD_FOLDER}/" in request.url else None)
    return seen


def load(page, folder, paths=None):
    return page.evaluate("([folder, paths]) => loadAll(folder, paths)", [f"/models/{folder}/", paths])


def test_download_reports_byte_progress_and_returns_verified_bytes(harness, model_folders):
    result = load(harness, GOOD_FOLDER)

    assert result["digests"] == model_folders["good"]
    downloads = [event for event in result["events"] if event["stage"] == "download"]
    assert {event["file"] for event in downloads} == set(model_folders["good"])
    total = sum(entry["size"] for entry in model_folders["sizes"].values())
    loaded = [event["loaded"] for event in result["events"]]
    assert loaded == sorted(loaded), "overall progress must never go backwards"
    assert all(event["total"] == total for event in result["events"])
    last = result["events"][-1]
    assert (last["loaded"], last["percent"], last["etaSeconds"]) == (total, 100, 0)
    weights_done = [e for e in downloads if e["file"] == WEIGHTS and e["fileLoaded"] == e["fileTotal"]]
    assert weights_done and weights_done[0]["fileTotal"] == model_folders["sizes"][WEIGHTS]["size"]
    assert any(event["stage"] == "verify" for event in result["events"])


def test_second_load_comes_from_the_cache_without_model_requests(harness, model_folders):
    load(harness, GOOD_FOLDER)
    requests = model_requests(harness)

    result = load(harness, GOOD_FOLDER, [WEIGHTS, "config.json"])

    assert result["digests"] == {p: model_folders["good"][p] for p in (WEIGHTS, "config.json")}
    assert {event["stage"] for event in result["events"]} == {"verify", "cached"}
    assert [url for url in requests if not url.endswith("manifest.json")] == []


def test_tampered_download_is_rejected_with_an_error_naming_the_file(harness):
    with pytest.raises(Exception, match=r'model file "onnx/model\.onnx" \(download\) failed its integrity check'):
        load(harness, BAD_FOLDER, [WEIGHTS])
    usage = harness.evaluate("modelFiles.storageUsage()")
    stored = {m["folderUrl"].rsplit("/", 2)[-2]: m["bytes"] for m in usage["models"]}
    assert stored.get(BAD_FOLDER, 0) < 1000, "a file that failed its check must not be stored"


def test_truncated_download_is_rejected_with_an_error_naming_the_file(harness):
    with pytest.raises(Exception, match=r'model file "tokenizer\.json" .*ended after 5 of 10 bytes'):
        load(harness, BAD_FOLDER, ["tokenizer.json"])


@pytest.mark.parametrize("damage", ["flipped byte", "truncated"])
def test_corrupted_cached_file_is_detected_and_fetched_again(harness, model_folders, damage):
    load(harness, GOOD_FOLDER)
    harness.evaluate("""async ([url, damage]) => {
        const cache = await caches.open("botpsy-models-v1");
        const bytes = new Uint8Array(await (await cache.match(url)).arrayBuffer());
        const broken = damage === "truncated" ? bytes.slice(0, bytes.length >> 1) : bytes.slice();
        if (damage !== "truncated") broken[12345] ^= 0x01;
        const original = await cache.match(url);
        await cache.put(url, new Response(broken, {headers: original.headers}));
    }""", [f"{harness.url}../{GOOD_FOLDER}/{WEIGHTS}", damage])
    warnings = []
    harness.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    requests = model_requests(harness)

    result = load(harness, GOOD_FOLDER)

    assert result["digests"] == model_folders["good"]
    assert [url.rsplit(f"/{GOOD_FOLDER}/", 1)[1] for url in requests if "manifest" not in url] == [WEIGHTS]
    assert any('"onnx/model.onnx" (stored copy)' in text for text in warnings)
    after_repair = load(harness, GOOD_FOLDER)
    assert {event["stage"] for event in after_repair["events"]} == {"verify", "cached"}


def test_storage_usage_lists_the_model_and_delete_removes_it(harness, model_folders):
    load(harness, GOOD_FOLDER)
    folder_url = f"{harness.url.rsplit('/', 2)[0]}/{GOOD_FOLDER}/"

    usage = harness.evaluate("modelFiles.storageUsage()")
    deleted = harness.evaluate("url => modelFiles.deleteModel(url)", f"/models/{GOOD_FOLDER}")
    after = harness.evaluate("modelFiles.storageUsage()")

    files_bytes = sum(entry["size"] for entry in model_folders["sizes"].values())
    model = next(m for m in usage["models"] if m["folderUrl"] == folder_url)
    assert files_bytes < model["bytes"] < files_bytes + 10_000  # + the stored manifest.json
    assert usage["quotaBytes"] > 0 and usage["usedBytes"] >= files_bytes
    assert deleted is True
    assert folder_url not in [m["folderUrl"] for m in after["models"]]
    reloaded = load(harness, GOOD_FOLDER)
    assert "download" in {event["stage"] for event in reloaded["events"]}


def test_loads_inside_a_module_worker_and_shares_the_cache_with_the_page(harness, model_folders):
    first = harness.evaluate("f => loadInWorker(f)", f"/models/{GOOD_FOLDER}/")
    from_page = load(harness, GOOD_FOLDER)

    assert first["digests"] == model_folders["good"]
    assert "download" in {event["stage"] for event in first["events"]}
    assert {event["stage"] for event in from_page["events"]} == {"verify", "cached"}


def test_works_offline_once_cached(harness, model_folders):
    load(harness, GOOD_FOLDER)
    harness.route(f"**/{GOOD_FOLDER}/**", lambda route: route.abort("internetdisconnected"))

    result = load(harness, GOOD_FOLDER)

    assert result["digests"] == model_folders["good"]


def test_uncached_file_offline_fails_naming_the_file(harness):
    load(harness, GOOD_FOLDER, ["config.json"])
    harness.route(f"**/{GOOD_FOLDER}/**", lambda route: route.abort("internetdisconnected"))
    with pytest.raises(Exception, match=r'could not download model file "onnx/model\.onnx"'):
        load(harness, GOOD_FOLDER, [WEIGHTS])


HIDE_CACHE_API = "Object.defineProperty(globalThis, 'caches', {value: undefined, configurable: true});"
HIDE_OPFS = "StorageManager.prototype.getDirectory = undefined;"


def open_harness_with_init_script(browser, open_guarded_page, server, script):
    context, page, guard = open_guarded_page(browser)
    context.add_init_script(script)
    page.goto(f"{server}/models/{HARNESS_FOLDER}/")
    page.wait_for_function("window.harnessReady === true")
    return context, page, guard


def test_falls_back_to_opfs_without_the_cache_api(browser, open_guarded_page, server, model_folders):
    context, page, guard = open_harness_with_init_script(browser, open_guarded_page, server, HIDE_CACHE_API)
    try:
        first = load(page, GOOD_FOLDER)
        second = load(page, GOOD_FOLDER)
        usage = page.evaluate("modelFiles.storageUsage()")
        deleted = page.evaluate("f => modelFiles.deleteModel(f)", f"/models/{GOOD_FOLDER}/")
        third = load(page, GOOD_FOLDER, ["config.json"])
    finally:
        context.close()
    guard.assert_clean()

    assert first["digests"] == second["digests"] == model_folders["good"]
    assert {event["stage"] for event in second["events"]} == {"verify", "cached"}
    assert any(m["folderUrl"].endswith(f"/{GOOD_FOLDER}/") for m in usage["models"])
    assert deleted is True
    assert {event["stage"] for event in third["events"]} == {"download", "verify"}


def test_carries_on_without_any_storage_with_a_warning(browser, open_guarded_page, server, model_folders):
    context, page, guard = open_harness_with_init_script(browser, open_guarded_page, server,
                                                         HIDE_CACHE_API + HIDE_OPFS)
    warnings = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    try:
        first = load(page, GOOD_FOLDER)
        second = load(page, GOOD_FOLDER)
    finally:
        context.close()
    guard.assert_clean()

    assert first["digests"] == second["digests"] == model_folders["good"]
    assert "download" in {event["stage"] for event in second["events"]}
    assert any("will not be cached" in text for text in warnings)


# FIPS 180-4 / NIST example messages and their SHA-256.
KNOWN_VECTORS = {
    b"": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    b"abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq":
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu":
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
    b"a" * 1_000_000: "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
}


def test_portable_sha256_gives_the_known_digests(harness):
    for message, digest in KNOWN_VECTORS.items():
        assert hashlib.sha256(message).hexdigest() == digest  # the table itself is right
        whole = harness.evaluate("text => sha256.sha256HexPortable(new TextEncoder().encode(text))", message.decode())
        assert whole == digest, f"message of {len(message)} bytes"


def test_portable_sha256_matches_hashlib(harness):
    samples = [b"", b"abc", bytes(range(256)) * 3, os.urandom(1000)]
    for sample in samples:
        digest = harness.evaluate("bytes => sha256.sha256HexPortable(new Uint8Array(bytes))", list(sample))
        assert digest == hashlib.sha256(sample).hexdigest()


# Random messages of odd sizes (around the 55/56/64-byte padding edges and past a megabyte), each
# hashed by crypto.subtle, by the portable hash in one call, and fed to it in random pieces (some
# empty, some longer than a block). Returns the sizes where any of them disagree.
INCREMENTAL_VS_SUBTLE = """
async (sizes) => {
  const random = (n) => {
    const bytes = new Uint8Array(n);
    for (let at = 0; at < n; at += 65536) crypto.getRandomValues(bytes.subarray(at, at + 65536));
    return bytes;
  };
  const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
  const disagreements = [];
  for (const size of sizes) {
    const message = random(size);
    const expected = hex(await crypto.subtle.digest("SHA-256", message));
    const hash = new sha256.Sha256();
    for (let at = 0; at < size;) {
      const piece = Math.floor(Math.random() * (Math.random() < 0.5 ? 70 : 5000));
      hash.update(message.subarray(at, at + piece));
      at += piece;
    }
    const pieces = hash.digestHex();
    const whole = sha256.sha256HexPortable(message);
    const chosen = await sha256.sha256Hex(message);
    if (new Set([expected, pieces, whole, chosen]).size !== 1) disagreements.push({size, expected, pieces, whole, chosen});
  }
  return disagreements;
}
"""


def test_incremental_sha256_matches_crypto_subtle_on_random_data_of_odd_sizes(harness):
    sizes = [1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 129, 1000, 4097, 65_537, 100_003, 1_048_583]
    assert harness.evaluate(INCREMENTAL_VS_SUBTLE, sizes) == []


def test_without_crypto_subtle_a_file_of_several_chunks_hashes_right(harness):
    """An insecure origin has no crypto.subtle (as files over SUBTLE_DIGEST_MAX_BYTES bypass it):
    sha256Hex hashes chunk by chunk, yielding between chunks, to the same digest."""
    result = harness.evaluate("""async () => {
        const message = new Uint8Array(2 * 16 * 2 ** 20 + 13);
        for (let at = 0; at < message.length; at += 65536) crypto.getRandomValues(message.subarray(at, at + 65536));
        const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
        const expected = hex(await crypto.subtle.digest("SHA-256", message));
        let ticks = 0;
        const ticker = setInterval(() => ticks++, 0);
        Object.defineProperty(crypto, "subtle", {value: undefined, configurable: true});
        try {
          return {expected, actual: await sha256.sha256Hex(message), ticksDuringHash: ticks};
        } finally {
          delete crypto.subtle;
          clearInterval(ticker);
        }
    }""")
    assert result["actual"] == result["expected"]
    assert result["ticksDuringHash"] >= 1, "the hash never yielded to the event loop between chunks"
    assert harness.evaluate("() => crypto.subtle !== undefined")


def test_misused_incremental_hash_gets_clear_errors(harness):
    errors = harness.evaluate("""() => {
        const attempt = (action) => { try { action(); return null; } catch (error) { return error.message; } };
        const finished = new sha256.Sha256().update(new Uint8Array(3));
        finished.digestHex();
        return {
          notBytes: attempt(() => new sha256.Sha256().update("abc")),
          updateAfterDigest: attempt(() => finished.update(new Uint8Array(1))),
          digestTwice: attempt(() => finished.digestHex()),
        };
    }""")
    assert "takes a Uint8Array, got string" in errors["notBytes"]
    assert "update after digestHex" in errors["updateAfterDigest"]
    assert "digestHex called twice" in errors["digestTwice"]


def test_bad_arguments_get_clear_errors(harness):
    with pytest.raises(Exception, match=r'"onnx/missing\.onnx" is not listed in the manifest'):
        load(harness, GOOD_FOLDER, ["onnx/missing.onnx"])
    with pytest.raises(Exception, match=r"no model folder at .*/models/nowhere/"):
        load(harness, "nowhere")


def test_carries_on_in_an_opaque_origin_iframe(harness, model_folders):
    """A sandboxed iframe (opaque origin) has no Cache API and no OPFS: files load, uncached.
    The frame is a served page of its own: the app's policy blocks an unhashed srcdoc script."""
    result = harness.evaluate("""folderUrl => new Promise((resolve, reject) => {
        const frame = document.createElement("iframe");
        frame.sandbox = "allow-scripts";
        frame.src = "./opaque-frame.html#" + encodeURIComponent(folderUrl);
        addEventListener("message", ({data}) => data.error ? reject(new Error(data.error)) : resolve(data));
        document.body.append(frame);
    })""", f"{harness.url.rsplit('/', 2)[0]}/{GOOD_FOLDER}/")

    assert result["origin"] == "null"
    assert result["sizes"] == {path: entry["size"] for path, entry in model_folders["sizes"].items()}
    assert any("will not be cached" in text for text in result["warnings"])
