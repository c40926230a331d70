"""A built site whose model folders live on another origin the owner named (`--model-url`, a
bucket here played by a second local server): the page behind nginx loads the model from there
and answers; that origin, and no other, joins the app's connect-src."""

import pytest

from botpsy_web.app_page import ask_and_stop
from botpsy_web.serve import serve_in_background
from botpsy_web.site.build import SiteOptions, build_site, file_headers

from .conftest import MODEL, Nginx, RequestLog, free_port, load_model

FETCH_FROM_PAGE = "async (url) => { try { return (await fetch(url)).status; } catch (error) { return 'blocked'; } }"


@pytest.fixture(scope="module")
def bucket_and_site(tmp_path_factory, exported_model, agent_bundle):
    """(models origin, site URL, build): the build's OUT/models served by a second server."""
    out = tmp_path_factory.mktemp("built-site-remote-models")
    port = free_port()
    bucket, bucket_url = serve_in_background(models_dir=out / "models")   # CORS, CORP and Range, like a bucket set up for it
    built = build_site(SiteOptions(out=out, models=(exported_model(MODEL),), base_url=f"http://127.0.0.1:{port}/",
                                   model_url=f"{bucket_url}/models/"))
    nginx = Nginx(out, port, tmp_path_factory.mktemp("nginx-remote-models"))
    yield bucket_url, nginx.url, built
    nginx.close()
    bucket.shutdown()
    bucket.server_close()


def test_the_model_comes_from_the_named_origin_which_alone_joins_connect_src(
        browser, open_guarded_page, bucket_and_site, recording_server):
    bucket_url, site_url, built = bucket_and_site
    policy = file_headers(built, "index.html")["Content-Security-Policy"]
    assert f"connect-src 'self' data: blob: {bucket_url};" in policy
    context, page, guard = open_guarded_page(browser, site_url)
    guard.allow(bucket_url)
    guard.allow(recording_server.url)   # so that a request reaching it fails on its hits, with details
    page.set_default_timeout(180_000)
    log = RequestLog(context, site_url)
    bucket_requests = []
    context.on("request", lambda request: bucket_requests.append(request.url) if request.url.startswith(bucket_url) else None)
    page.goto(f"{site_url}/")
    load_model(page)
    assert page.evaluate("crossOriginIsolated")
    ask_and_stop(page)
    assert any(url.endswith("/onnx/model_quantized.onnx_data") for url in bucket_requests), bucket_requests[:5]
    assert not any("/models/" in response.url and "index.json" not in response.url for response in log.of_site())
    # The page may reach the model origin, and still nothing else.
    assert page.evaluate(FETCH_FROM_PAGE, f"{bucket_url}/models/{MODEL}/config.json") == 200
    assert page.evaluate(FETCH_FROM_PAGE, f"{recording_server.url}/leak") == "blocked"
    assert recording_server.hits == []
    log.assert_nothing_missing()
    context.close()
    guard.assert_clean()
