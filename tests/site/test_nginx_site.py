"""A built site (`botpsy-web build-site`) behind a real nginx with the nginx.conf the build
wrote, in headless Chromium: the page loads the real tiny model on two WASM threads and
answers, every document and worker script carries the policy the table gives it, the service
worker serves the site offline after one visit, and the widget works from a host page on
another origin with one script tag. Every request the app makes is collected: a file the app
asks for that the build left out fails the test."""

import urllib.request

import pytest

from botpsy_web.app_page import ask_and_stop, wait_until_offline_ready
from botpsy_web.site.build import file_headers

from .conftest import (MODEL, HostPage, RequestLog, ask_the_widget_and_stop, load_model,
                       site_path, start_the_widget)


@pytest.fixture(scope="module")
def visit(browser, open_guarded_page, nginx_site):
    """One visitor's context on the nginx site, the model loaded; its request log."""
    context, page, guard = open_guarded_page(browser, nginx_site)
    page.set_default_timeout(180_000)
    log = RequestLog(context, nginx_site)
    page.goto(f"{nginx_site}/")
    load_model(page)
    yield context, page, log
    context.close()
    guard.assert_clean()


def test_the_page_loads_the_model_and_answers_on_two_wasm_threads(visit):
    context, page, log = visit
    assert page.evaluate("crossOriginIsolated")
    assert "WASM + 2 threads" in page.locator("#backend-badge").inner_text()
    ask_and_stop(page)
    log.assert_nothing_missing()


def test_every_document_and_worker_script_carries_the_tables_policy(visit, built_site, nginx_site):
    context, page, log = visit
    checked = set()
    for response in log.of_site():
        path = site_path(response.url, nginx_site)
        if response.request.resource_type in ("document", "script", "other") and path is not None \
                and response.status == 200 and path.endswith((".html", ".js", ".mjs", "")):
            expected = file_headers(built_site, path or "index.html")["Content-Security-Policy"]
            assert response.headers.get("content-security-policy") == expected, path
            checked.add(path)
    workers = {site_path(worker.url, nginx_site) for worker in page.workers}
    assert {"web/runtime/model-worker.js", "web/agent/agent-worker.js"} <= workers
    assert {"", "web/runtime/model-worker.js", "web/agent/agent-worker.js",
            f"{built_site.vendor}/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs"} <= checked, sorted(checked)


def test_a_range_request_on_a_model_file_returns_206(nginx_site):
    request = urllib.request.Request(f"{nginx_site}/models/{MODEL}/onnx/model_quantized.onnx_data",
                                     headers={"Range": "bytes=100-199"})
    with urllib.request.urlopen(request) as response:
        assert response.status == 206 and len(response.read()) == 100
        assert response.headers["Content-Range"].startswith("bytes 100-199/")


def test_the_service_worker_serves_the_site_offline_after_one_visit(visit):
    context, page, log = visit
    wait_until_offline_ready(page)
    context.set_offline(True)
    page = context.new_page()
    page.set_default_timeout(180_000)
    page.goto(page.context.pages[0].url)
    page.locator("#load-progress[data-state='ready']").wait_for()   # the last model, from storage
    assert page.evaluate("navigator.onLine") is False
    assert page.evaluate("crossOriginIsolated")
    ask_and_stop(page)
    context.set_offline(False)


HOST_PAGE = """<!doctype html>
<meta charset="utf-8">
<title>A shop that embeds BotPsy</title>
<h1>Our shop</h1>
<script type="module" src="{site}/web/widget.js"></script>
<botpsy-chat id="assistant" model="/models/{model}/" backend="wasm" temperature="0" heading="Help"></botpsy-chat>
"""


def test_the_widget_works_from_a_host_page_on_another_origin(browser, open_guarded_page, nginx_site, tmp_path):
    host = HostPage(tmp_path / "host", HOST_PAGE.format(site=nginx_site, model=MODEL))
    try:
        context, page, guard = open_guarded_page(browser, host.url)
        guard.allow(nginx_site)
        page.set_default_timeout(180_000)
        log = RequestLog(context, nginx_site)
        page.goto(f"{host.url}/")
        start_the_widget(page)
        assert "WASM + 2 threads" in page.locator("botpsy-chat .badge").inner_text()
        ask_the_widget_and_stop(page)
        # Its workers run in the site's own frame, under the site's policy.
        frame_response = [r for r in log.of_site() if r.url.startswith(f"{nginx_site}/web/widget/worker-frame.html")]
        assert frame_response and "frame-ancestors *" in frame_response[0].headers["content-security-policy"]
        log.assert_nothing_missing()
        context.close()
        guard.assert_clean()
    finally:
        host.close()
