"""Run a built site under Debian's nginx as an ordinary process (tests, benches, a local
look before uploading): the generated server block inside a whole configuration of its own,
with its pid file, logs and temp folders in one work folder, in the foreground."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def main_config(out: Path, work: Path) -> Path:
    """A whole nginx.conf that includes OUT/nginx.conf, with every path nginx writes under `work`."""
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (work / name).mkdir(parents=True, exist_ok=True)
    # As root, nginx's workers would drop to `nobody`, who may not read a private folder.
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
    include {Path(out).resolve()}/nginx.conf;
}}
""")
    return config


def site_folder(out: Path) -> str:
    """The folder a build is served from ("" at an origin's root, "/botpsy" for --base-url .../botpsy/)."""
    base_url = json.loads((Path(out) / "build.json").read_text()).get("base_url") or "/"
    return urlsplit(base_url).path.rstrip("/")


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


class LocalNginx:
    """nginx serving a build (OUT, written with --base-url http://127.0.0.1:PORT/ or a folder of it);
    `url` is the site's address without its trailing slash (http://127.0.0.1:PORT/botpsy)."""

    def __init__(self, out: Path, port: int, work: Path):
        if not Path(NGINX).is_file():
            raise FileNotFoundError("nginx is not installed (Debian: apt-get install nginx; ./run.sh test does it)")
        work.mkdir(parents=True, exist_ok=True)
        self.url = f"http://127.0.0.1:{port}{site_folder(out)}"
        config = main_config(out, work)
        # -e: the startup log too goes to `work` (not /var/log/nginx, which a user may not open).
        flags = ["-p", str(work), "-c", str(config), "-e", str(work / "error.log")]
        check = subprocess.run([NGINX, "-t", *flags], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"the generated nginx.conf does not pass `nginx -t`: {check.stderr}")
        self.process = subprocess.Popen([NGINX, *flags],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until_listening(self.url + "/", self.process, work / "error.log")

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=10)
