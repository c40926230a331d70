"""The host configurations a build writes, served by the real servers (Debian's nginx and
Caddy, started here on free ports), at an origin's root and in a folder of it (--base-url
http://host/botpsy/): every file answers with exactly the headers the one table gives it,
model files answer Range requests with 206, and the confirmed-fetch frame's policy names the
origin in its request and nothing else. No browser: headers are what is checked."""

import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from botpsy_web.site.build import SiteOptions, build_site, file_headers

from .conftest import Caddy, Nginx, free_port
from .test_build import built_paths, fake_model

SERVERS = {"nginx": Nginx, "caddy": Caddy}
FOLDERS = ["/", "/botpsy/"]


@pytest.fixture(scope="module", params=[(server, folder) for server in sorted(SERVERS) for folder in FOLDERS],
                ids=lambda param: f"{param[0]}-at-{param[1].strip('/') or 'root'}")
def served(request, tmp_path_factory, agent_bundle):
    """(the build, the site's URL without its trailing slash)."""
    server_name, folder = request.param
    port = free_port()
    model = fake_model(tmp_path_factory.mktemp("models"))
    built = build_site(SiteOptions(out=tmp_path_factory.mktemp("out"), models=(model,),
                                   base_url=f"http://127.0.0.1:{port}{folder}"))
    server = SERVERS[server_name](built.out, port, tmp_path_factory.mktemp(server_name))
    yield built, server.url
    server.close()


def get(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_every_file_gets_the_headers_of_the_table(served):
    built, url = served
    paths = sorted(built_paths(built) - {"_headers"})
    assert len(paths) > 60
    for path in paths:
        query = "?origin=https%3A%2F%2Fexample.com" if path == "web/fetch/frame.html" else ""
        status, headers, _ = get(f"{url}/{path}{query}")
        assert status == 200, path
        for name, value in file_headers(built, path).items():
            if "{query-origin}" not in value:
                assert headers.get(name) == value, (path, name, headers.get(name))
    status, headers, _ = get(url + "/")
    assert status == 200 and headers["Content-Security-Policy"] == file_headers(built, "index.html")["Content-Security-Policy"]


def test_the_runtime_relies_on_these_types(served):
    built, url = served
    for path, expected in [("web/ui/app.js", "text/javascript"), ("models/index.json", "application/json"),
                           (f"{built.vendor}/onnxruntime-web/dist/ort.wasm.min.mjs", "text/javascript"),
                           (f"{built.vendor}/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm", "application/wasm"),
                           ("models/fake-model/onnx/model.onnx", "application/octet-stream")]:
        assert get(f"{url}/{path}")[1]["Content-Type"].split(";")[0] == expected, path


def test_a_range_request_on_a_model_file_returns_206(served):
    built, url = served
    status, headers, body = get(f"{url}/models/fake-model/onnx/model.onnx", {"Range": "bytes=8-15"})
    assert status == 206 and body == b"\0" * 8
    assert headers["Content-Range"] == "bytes 8-15/64"
    assert headers["Cross-Origin-Resource-Policy"] == "cross-origin"


def test_the_fetch_frame_may_reach_the_origin_in_its_query_only(served):
    built, url = served
    status, headers, _ = get(f"{url}/web/fetch/frame.html?origin=https%3A%2F%2Fexample.com%3A8443")
    assert status == 200
    assert "connect-src https://example.com:8443;" in headers["Content-Security-Policy"]
    status, headers, _ = get(f"{url}/web/fetch/frame.html?origin=https%3A%2F%2Fexample.com")
    assert "connect-src https://example.com;" in headers["Content-Security-Policy"]
    for bad in ["javascript%3Aalert(1)", "https%3A%2F%2Fexample.com%2Fpath", "https%3A%2F%2Fa.com%20https%3A%2F%2Fb.com", ""]:
        assert get(f"{url}/web/fetch/frame.html?origin={bad}")[0] == 400, bad



def test_the_site_is_served_in_its_folder_and_nowhere_else(served):
    built, url = served
    parts = urlsplit(url)
    origin, folder = f"{parts.scheme}://{parts.netloc}", parts.path   # folder: "" or "/botpsy"
    assert get(f"{origin}/web/ui/app.js")[0] == (404 if folder else 200)
    status, headers, body = get(f"{origin}{folder}")   # the folder's bare name leads into it
    assert status == 200 and b"<title>BotPsy" in body
    assert headers["Content-Security-Policy"] == file_headers(built, "index.html")["Content-Security-Policy"]
