"""Fixtures for the built site: one `botpsy-web build-site` per module with the smallest exported
model, served by a real nginx (Debian's, started here on a free port with the generated
config), by a server that sends no headers at all (`python -m http.server`), and a host page
on another origin for the widget."""

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import pytest

from botpsy_web import app_page
from botpsy_web.serve import free_port
from botpsy_web.site.build import SiteOptions, build_site
from botpsy_web.site.local_nginx import LocalNginx, site_folder, wait_until_listening

MODEL = "tiny-qwen3.5"


# nginx serving a built site; a config that fails `nginx -t` fails the test with nginx's words.
Nginx = LocalNginx


class Caddy:
    """Caddy serving a built site from the generated Caddyfile (its admin endpoint off, its
    state in `work`)."""

    def __init__(self, out: Path, port: int, work: Path):
        caddy = shutil.which("caddy")
        assert caddy, "caddy is not installed: ./run.sh test installs Debian's caddy (apt)"
        env = {**os.environ, "HOME": str(work), "XDG_DATA_HOME": str(work), "XDG_CONFIG_HOME": str(work)}
        adapted = subprocess.run([caddy, "adapt", "--config", str(out / "Caddyfile"), "--adapter", "caddyfile"],
                                 capture_output=True, text=True, env=env)
        assert adapted.returncode == 0, f"the generated Caddyfile does not adapt: {adapted.stderr}"
        config = json.loads(adapted.stdout)
        config["admin"] = {"disabled": True}
        (work / "caddy.json").write_text(json.dumps(config))
        self.url = f"http://127.0.0.1:{port}{site_folder(out)}"
        log = work / "caddy.log"
        self.process = subprocess.Popen([caddy, "run", "--config", str(work / "caddy.json")],
                                        stdout=subprocess.DEVNULL, stderr=log.open("w"), env=env)
        wait_until_listening(self.url + "/", self.process, log)

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class PlainServer:
    """`python -m http.server` on a folder: no header beyond its own defaults."""

    def __init__(self, folder: Path, port: int):
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                         "--directory", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until_listening(self.url + "/", self.process)

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class HostPage:
    """A page of another origin (not ours) that embeds the widget with one script tag, sent with
    COOP/COEP as web/WIDGET.md asks of a host that wants WASM threads."""

    def __init__(self, folder: Path, html: str):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(html)

        class Handler(http.server.SimpleHTTPRequestHandler):
            def end_headers(self):
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
                self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
                super().end_headers()

            def log_message(self, format, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(folder)))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# --- what a visitor does on the site's page, or on a host page with the widget ----------------

def load_model(page):
    """On the site's page: load MODEL on WASM and wait until it is ready."""
    app_page.load_model(page, MODEL, backend="wasm")


def site_path(url, base):
    """The URL's path below the site's base address (no query); None for a URL elsewhere."""
    return url[len(base) + 1:].split("?")[0] if url.startswith(base + "/") else None


def start_the_widget(page) -> None:
    """On a HostPage: start the embedded assistant and wait until it takes a message."""
    page.get_by_role("button", name="Start the assistant").click()
    page.wait_for_function("() => !document.getElementById('assistant').shadowRoot.querySelector('textarea').disabled")


def ask_the_widget_and_stop(page, text: str = "Hello there") -> None:
    """Send a message, wait for the first words of the answer, press Stop, wait for the end."""
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    page.wait_for_function("""() => document.getElementById('assistant').shadowRoot
        .querySelector('.answer')?.textContent.length > 0""")
    page.get_by_role("button", name="Stop").click()
    page.locator("botpsy-chat .message.assistant[aria-busy='false']").wait_for()


@pytest.fixture(scope="module")
def site_port():
    return free_port()


@pytest.fixture(scope="module")
def built_site(tmp_path_factory, exported_model, agent_bundle, site_port):
    """One build per module: the smallest exported model, for http://127.0.0.1:<site_port>/."""
    out = tmp_path_factory.mktemp("built-site")
    return build_site(SiteOptions(out=out, models=(exported_model(MODEL),), base_url=f"http://127.0.0.1:{site_port}/"))


@pytest.fixture(scope="module")
def nginx_site(built_site, site_port, tmp_path_factory):
    server = Nginx(built_site.out, site_port, tmp_path_factory.mktemp("nginx"))
    yield server.url
    server.close()


@pytest.fixture(scope="module")
def plain_site(built_site):
    server = PlainServer(built_site.site, free_port())
    yield server.url
    server.close()


class RequestLog:
    """Every response and failed request a browser context sees, to prove nothing the app asked
    for is missing from the build."""

    def __init__(self, context, origin: str):
        self.origin = origin
        self.responses = []
        self.failed = []
        context.on("response", lambda response: self.responses.append(response))
        context.on("requestfailed", lambda request: self.failed.append((request.url, request.failure)))

    def of_site(self):
        return [response for response in self.responses if response.url.startswith(self.origin + "/")]

    def assert_nothing_missing(self):
        """No file of the site answered with an error, and no request of the site failed. A request the
        page cancelled (net::ERR_ABORTED: a reload, or a worker ended while it loaded) is not a missing
        file when the site served that file in another request of the same log."""
        missing = [f"{response.status} {response.url}" for response in self.of_site() if response.status >= 400]
        served = {response.url for response in self.of_site() if response.status < 400}
        failed = [f"{url} ({failure})" for url, failure in self.failed
                  if url.startswith(self.origin + "/") and not (failure == "net::ERR_ABORTED" and url in served)]
        assert not missing and not failed, f"the app asked the site for files it does not serve: {missing + failed}"
