"""Fixtures for the built site: one `botpsy-web build-site` per module with the smallest exported
model, served by a real nginx (Debian's, started here on a free port with the generated
config), by a server that sends no headers at all (`python -m http.server`), and a host page
on another origin for the widget."""

import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from functools import partial
from pathlib import Path

import pytest

from botpsy_web.site.build import SiteOptions, build_site

MODEL = "tiny-qwen3.5"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_listening(url: str, process: subprocess.Popen, log: Path | None = None, timeout_s: float = 20):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            detail = log.read_text() if log and log.exists() else ""
            raise RuntimeError(f"the server exited with status {process.returncode}: {detail}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout_s} s")


def nginx_main_config(out: Path, work: Path) -> Path:
    """A whole nginx configuration around the generated server block, all under `work`: its own
    pid file, logs and temp folders, in the foreground (the test owns the process)."""
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (work / name).mkdir(parents=True, exist_ok=True)
    # As root, nginx's workers would drop to `nobody`, who cannot read a private temp folder.
    user = "user root;\n" if os.geteuid() == 0 else ""
    config = work / "nginx.conf"
    config.write_text(f"""daemon off;
{user}pid {work}/nginx.pid;
error_log {work}/error.log warn;
worker_processes 1;
events {{ worker_connections 256; }}
http {{
    access_log {work}/access.log;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    include {out}/nginx.conf;
}}
""")
    return config


class Nginx:
    """nginx serving a built site; `url` is its base URL (no trailing slash)."""

    def __init__(self, out: Path, port: int, work: Path):
        assert Path(NGINX).is_file(), "nginx is not installed: ./run.sh test installs Debian's nginx (apt)"
        self.work = work
        self.url = f"http://127.0.0.1:{port}"
        config = nginx_main_config(out, work)
        check = subprocess.run([NGINX, "-t", "-p", str(work), "-c", str(config)], capture_output=True, text=True)
        assert check.returncode == 0, f"the generated nginx.conf does not pass `nginx -t`: {check.stderr}"
        self.process = subprocess.Popen([NGINX, "-p", str(work), "-c", str(config)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until_listening(self.url + "/", self.process, work / "error.log")

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=10)


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
        self.url = f"http://127.0.0.1:{port}"
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
        context.on("requestfailed", lambda request: self.failed.append(f"{request.url} ({request.failure})"))

    def of_site(self):
        return [response for response in self.responses if response.url.startswith(self.origin + "/")]

    def assert_nothing_missing(self):
        missing = [f"{response.status} {response.url}" for response in self.of_site() if response.status >= 400]
        failed = [entry for entry in self.failed if entry.startswith(self.origin + "/")]
        assert not missing and not failed, f"the app asked the site for files it does not serve: {missing + failed}"
