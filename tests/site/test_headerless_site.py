"""The same built site from a server that sends no headers of ours (`python -m http.server`,
as GitHub Pages or a plain bucket would): the first load works on one thread and says why;
from the second load the root service worker (/sw.js) adds the isolation headers and the
policy, so the page is cross-origin isolated, runs two threads and carries the table's policy."""

import pytest

from botpsy_web.app_page import ask_and_stop
from botpsy_web.site.build import file_headers

from .conftest import RequestLog, load_model


@pytest.fixture(scope="module")
def visitor(browser, open_guarded_page, plain_site):
    context, page, guard = open_guarded_page(browser, plain_site)
    page.set_default_timeout(180_000)
    log = RequestLog(context, plain_site)
    yield page, log
    context.close()
    guard.assert_clean()


def test_the_first_load_answers_on_one_thread_and_says_why(visitor, plain_site, built_site):
    page, log = visitor
    document = page.goto(f"{plain_site}/")
    assert "content-security-policy" not in document.headers and "cross-origin-embedder-policy" not in document.headers
    load_model(page)
    assert page.evaluate("crossOriginIsolated") is False
    assert "WASM · 1 thread" in page.locator("#backend-badge").inner_text()
    assert "Not cross-origin isolated" in page.locator("#progress-text").inner_text()
    ask_and_stop(page)
    # The page waits (up to 8 s) for the service worker before it starts the model: workers
    # started under it get the policy even on this first load; the page itself has none.
    for response in log.of_site():
        if response.url.endswith(("/model-worker.js", "/agent-worker.js")) and response.from_service_worker:
            path = response.url[len(plain_site) + 1:]
            assert response.headers["content-security-policy"] == \
                file_headers(built_site, path)["Content-Security-Policy"], path
    log.assert_nothing_missing()


def test_from_the_second_load_the_service_worker_isolates_and_confines_the_page(visitor, plain_site, built_site):
    page, log = visitor
    assert page.evaluate("navigator.serviceWorker.controller.scriptURL") == f"{plain_site}/sw.js"
    document = page.reload()
    assert document.from_service_worker
    assert document.headers["content-security-policy"] == file_headers(built_site, "index.html")["Content-Security-Policy"]
    page.locator("#load-progress[data-state='ready']").wait_for()   # the last model reopens by itself
    assert page.evaluate("crossOriginIsolated") is True
    assert "WASM + 2 threads" in page.locator("#backend-badge").inner_text()
    assert "Not cross-origin isolated" not in page.locator("#progress-text").inner_text()
    workers = [worker.url for worker in page.workers]
    assert f"{plain_site}/web/runtime/model-worker.js" in workers
    ask_and_stop(page)
    worker_scripts = [response for response in log.of_site()
                      if response.url == f"{plain_site}/web/runtime/model-worker.js" and response.from_service_worker]
    assert worker_scripts and worker_scripts[-1].headers["content-security-policy"] == \
        file_headers(built_site, "web/runtime/model-worker.js")["Content-Security-Policy"]
    log.assert_nothing_missing()
