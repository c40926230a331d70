"""A site built for a folder of an origin (`--base-url http://host/botpsy/`, as a GitHub Pages
project site or a path on someone's own server), in headless Chromium: behind nginx with the
generated config the page loads the real tiny model on two WASM threads and answers, nothing it
asks for is missing, every document and worker carries the table's policy, and the service
worker (scope /botpsy/) serves it offline; the widget works from another origin with the
folder's script tag and a model path relative to it; and from a server that sends no headers,
the folder's own sw.js isolates the page from the second load."""

import os

import pytest

from botpsy_web.app_page import ask_and_stop, wait_until_offline_ready
from botpsy_web.serve import free_port
from botpsy_web.site.build import SiteOptions, build_site, file_headers

from .conftest import (MODEL, HostPage, Nginx, PlainServer, RequestLog, ask_the_widget_and_stop,
                       load_model, site_path, start_the_widget)

FOLDER = "botpsy"


@pytest.fixture(scope="module")
def folder_build(tmp_path_factory, exported_model, agent_bundle):
    port = free_port()
    built = build_site(SiteOptions(out=tmp_path_factory.mktemp("folder-site"), models=(exported_model(MODEL),),
                                   base_url=f"http://127.0.0.1:{port}/{FOLDER}/"))
    return built, port


@pytest.fixture(scope="module")
def nginx_folder_site(folder_build, tmp_path_factory):
    built, port = folder_build
    server = Nginx(built.out, port, tmp_path_factory.mktemp("nginx"))
    assert server.url.endswith(f"/{FOLDER}")
    yield server.url
    server.close()


def test_behind_nginx_in_a_folder_the_page_answers_confined_and_offline(browser, open_guarded_page, folder_build,
                                                                        nginx_folder_site):
    built, _ = folder_build
    context, page, guard = open_guarded_page(browser, nginx_folder_site)
    page.set_default_timeout(180_000)
    log = RequestLog(context, nginx_folder_site)
    page.goto(f"{nginx_folder_site}/")
    load_model(page)
    assert page.evaluate("crossOriginIsolated")
    assert "WASM + 2 threads" in page.locator("#backend-badge").inner_text()
    ask_and_stop(page)
    log.assert_nothing_missing()
    # Nothing was asked of the origin outside the folder.
    origin = nginx_folder_site.removesuffix(f"/{FOLDER}")
    outside = [r.url for r in log.responses if r.url.startswith(origin + "/") and not r.url.startswith(nginx_folder_site + "/")]
    assert not outside, outside
    checked = set()
    for response in log.of_site():
        path = site_path(response.url, nginx_folder_site)
        if response.request.resource_type in ("document", "script") and path is not None and response.status == 200:
            expected = file_headers(built, path or "index.html")["Content-Security-Policy"]
            assert response.headers.get("content-security-policy") == expected, path
            checked.add(path)
    assert {"", "web/runtime/model-worker.js", "web/agent/agent-worker.js"} <= checked, sorted(checked)

    wait_until_offline_ready(page)
    assert page.evaluate("navigator.serviceWorker.controller.scriptURL") == f"{nginx_folder_site}/web/sw.js"
    context.set_offline(True)
    offline = context.new_page()
    offline.set_default_timeout(180_000)
    offline.goto(f"{nginx_folder_site}/")
    offline.locator("#load-progress[data-state='ready']").wait_for()   # the last model, from storage
    assert offline.evaluate("navigator.onLine") is False and offline.evaluate("crossOriginIsolated")
    ask_and_stop(offline)
    context.set_offline(False)
    context.close()
    guard.assert_clean()


HOST_PAGE = """<!doctype html>
<meta charset="utf-8">
<title>A shop that embeds BotPsy from a folder</title>
<script type="module" src="{site}/web/widget.js"></script>
<botpsy-chat id="assistant" model="models/{model}/" backend="wasm" temperature="0" heading="Help"></botpsy-chat>
"""


def test_the_widget_from_a_folder_starts_its_workers_in_the_folders_frame(browser, open_guarded_page,
                                                                           nginx_folder_site, tmp_path):
    host = HostPage(tmp_path / "host", HOST_PAGE.format(site=nginx_folder_site, model=MODEL))
    try:
        context, page, guard = open_guarded_page(browser, host.url)
        guard.allow(nginx_folder_site.removesuffix(f"/{FOLDER}"))
        page.set_default_timeout(180_000)
        log = RequestLog(context, nginx_folder_site)
        page.goto(f"{host.url}/")
        start_the_widget(page)
        ask_the_widget_and_stop(page)
        assert any(r.url.startswith(f"{nginx_folder_site}/web/widget/worker-frame.html") for r in log.of_site())
        workers = {worker.url for frame_page in context.pages for worker in frame_page.workers}
        assert f"{nginx_folder_site}/web/runtime/model-worker.js" in workers, workers
        log.assert_nothing_missing()
        context.close()
        guard.assert_clean()
    finally:
        host.close()


def test_from_a_server_without_headers_the_folders_service_worker_isolates_the_page(
        browser, open_guarded_page, folder_build, tmp_path):
    built, _ = folder_build
    (tmp_path / "www").mkdir()
    os.symlink(built.site, tmp_path / "www" / FOLDER)   # the site uploaded as the folder /botpsy/
    server = PlainServer(tmp_path / "www", free_port())
    site = f"{server.url}/{FOLDER}"
    try:
        context, page, guard = open_guarded_page(browser, server.url)
        page.set_default_timeout(180_000)
        log = RequestLog(context, site)
        page.goto(f"{site}/")
        load_model(page)
        assert page.evaluate("crossOriginIsolated") is False    # the first load: no headers at all
        wait_until_offline_ready(page)
        assert page.evaluate("navigator.serviceWorker.controller.scriptURL") == f"{site}/sw.js"
        document = page.reload()
        assert document.from_service_worker
        assert document.headers["content-security-policy"] == file_headers(built, "index.html")["Content-Security-Policy"]
        page.locator("#load-progress[data-state='ready']").wait_for()
        assert page.evaluate("crossOriginIsolated") is True
        assert "WASM + 2 threads" in page.locator("#backend-badge").inner_text()
        ask_and_stop(page)
        log.assert_nothing_missing()
        context.close()
        guard.assert_clean()
    finally:
        server.close()
