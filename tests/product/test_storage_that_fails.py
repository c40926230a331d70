"""Storage that fails says so (issue 42, part 5). A browser window may refuse to keep the model's
files (a non-persistent Chromium context answers Cache.put of a 630 MB file with "Unexpected
internal error"). A file the Cache API refuses is kept in OPFS instead and read from there on the
next load; when no store keeps it, the model still runs, and the page and the widget say plainly
that it will not work offline and will be downloaded again.

The refusal is made in the model worker itself, where the files are written: its script is served
as a module that first imports tests/pages/refuse-model-stores.js, then the real worker
(Playwright's init scripts do not run in workers)."""

from urllib.parse import urlsplit

from botpsy_web.app_page import ask_and_stop, open_app_with_model
from botpsy_web.verify_browser import open_harness

MODEL = "tiny-qwen3.5"
WORKER_PATH = "/web/runtime/model-worker.js"
NOT_KEPT = ("This browser window could not keep the model: it will not work offline "
            "and will download the model again next time.")


def refuse_model_stores(context, stores):
    """From now on the context's model workers have `stores` ("cache-api", "opfs") refuse every write."""
    def serve_refusing_worker(route):
        real = route.fetch()  # the server's own headers: isolation and content policy as usual
        headers = {name: value for name, value in real.headers.items()
                   if name.lower() not in ("content-length", "content-encoding")}
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(route.request.url))
        body = (f'import "{origin}/tests/pages/refuse-model-stores.js?refuse={",".join(stores)}";\n'
                f'import "{origin}{WORKER_PATH}?stores-refused";\n')
        route.fulfill(status=200, headers=headers, body=body)

    # only the worker's own URL: the real worker it imports carries a query, and goes through
    context.route(lambda url: urlsplit(url).path == WORKER_PATH and not urlsplit(url).query, serve_refusing_worker)


LOAD_IN_A_NEW_WORKER = """async ({folderUrl}) => {
    const progress = [];
    const client = new window.botpsyRuntime.ModelClient();
    try {
        const info = await client.load(folderUrl, {backend: "wasm", dtype: "q8",
                                                   onProgress: ({stage, file}) => progress.push({stage, file})});
        return {storage: info.storage, progress};
    } finally {
        client.terminate();
    }
}"""

STORED_FILES = """async ({folderUrl}) => {
    const models = await (await navigator.storage.getDirectory()).getDirectoryHandle("botpsy-models");
    const opfs = [];
    for await (const [name] of (await models.getDirectoryHandle(encodeURIComponent(folderUrl))).entries()) {
        opfs.push(decodeURIComponent(name));
    }
    const cached = (await (await caches.open("botpsy-models-v1")).keys())
        .map((request) => request.url).filter((url) => url.startsWith(folderUrl));
    return {opfs, cached};
}"""


def test_a_file_the_cache_api_refuses_is_kept_in_opfs_and_the_next_load_reads_it_from_there(
        browser, open_guarded_page, server, exported_model):
    exported_model(MODEL)
    folder_url = f"{server}/models/{MODEL}/"
    context, page, guard = open_guarded_page(browser)
    refuse_model_stores(context, ["cache-api"])
    page.set_default_timeout(180_000)
    open_harness(page, server)

    first = page.evaluate(LOAD_IN_A_NEW_WORKER, {"folderUrl": folder_url})
    requested = []
    context.on("request", lambda request: requested.append(request.url))
    second = page.evaluate(LOAD_IN_A_NEW_WORKER, {"folderUrl": folder_url})
    stored = page.evaluate(STORED_FILES, {"folderUrl": folder_url})
    context.close()
    guard.assert_clean()

    no_problem = {"kept": True, "notKept": [], "reason": ""}
    assert first["storage"] == second["storage"] == no_problem
    files = {event["file"] for event in first["progress"] if event["stage"] == "download"}
    assert files and "onnx/model_quantized.onnx_data" in files
    assert set(stored["opfs"]) == files | {"manifest.json"}
    assert stored["cached"] == []
    # The second load takes every file from OPFS: none is downloaded (only the manifest is asked for, as always).
    assert {event["file"] for event in second["progress"] if event["stage"] == "cached"} == files
    assert not [event for event in second["progress"] if event["stage"] == "download"]
    fetched = {url[len(folder_url):] for url in requested if url.startswith(folder_url)}
    assert fetched <= {"manifest.json"}, f"downloaded again: {fetched}"


def test_when_opfs_keeps_what_the_cache_api_refused_the_page_says_nothing(
        browser, open_guarded_page, app_server, exported_model, agent_bundle):
    exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server)
    refuse_model_stores(context, ["cache-api"])
    page.set_default_timeout(180_000)
    open_app_with_model(page, app_server, MODEL, backend="wasm")

    storage = page.evaluate("botpsy.session.info.storage")
    notice_hidden = page.locator("#storage-notice").is_hidden()
    context.close()
    guard.assert_clean()

    assert storage["kept"] is True
    assert notice_hidden


def test_when_no_store_keeps_the_model_the_page_says_so_and_still_answers(
        browser, open_guarded_page, app_server, exported_model, agent_bundle, artifacts_dir):
    exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server)
    refuse_model_stores(context, ["cache-api", "opfs"])
    page.set_default_timeout(180_000)
    open_app_with_model(page, app_server, MODEL, backend="wasm")

    notice = page.locator("#load-progress").get_by_role("status").filter(has_text=NOT_KEPT)
    notice.wait_for()
    assert notice.is_visible()
    assert page.get_by_role("alert").count() == 0, "a calm note, not an error"
    storage = page.evaluate("botpsy.session.info.storage")
    assert storage["kept"] is False
    assert {"manifest.json", "onnx/model_quantized.onnx_data"} <= set(storage["notKept"])
    assert "cache-api: Unexpected internal error." in storage["reason"] and "opfs:" in storage["reason"]
    ask_and_stop(page, "Are you there?")
    page.screenshot(path=artifacts_dir / "product-storage-not-kept.png")
    context.close()
    guard.assert_clean()


def test_the_widget_says_so_too(browser, open_guarded_page, app_server, exported_model, agent_bundle):
    exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server)
    refuse_model_stores(context, ["cache-api", "opfs"])
    page.set_default_timeout(180_000)
    page.goto(f"{app_server}/static/examples/shop.html?model=/models/{MODEL}/&mode=inline")
    page.wait_for_function("() => window.fernhillReady === true")
    page.get_by_role("button", name="Start the assistant").click()

    page.locator("botpsy-chat .notice").filter(has_text=NOT_KEPT).wait_for()
    input_enabled = page.get_by_role("textbox", name="Message").is_enabled()
    context.close()
    guard.assert_clean()

    assert input_enabled
