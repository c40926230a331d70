"""`botpsy-web serve`: a static server with the headers the browser runtime needs.

- COOP/COEP make the page cross-origin isolated, so onnxruntime-web can use
  SharedArrayBuffer and several WASM threads.
- CORP/CORS headers let a page on another origin (the embeddable widget) load
  our scripts, workers and model files.
- Range requests serve slices of large model files.
- `/models/` maps to the exported-models folder; `/models/index.json` lists it.
- `Service-Worker-Allowed: /` lets the service worker in web/ control the whole site.
- A Content-Security-Policy on every response (botpsy_web/content_policy.py): the app's
  pages and workers may connect to this origin only.

Every header but type, length and range comes from the site's one table
(botpsy_web/site/headers.py), which also writes the host configurations of a built site.
"""

import json
import mimetypes
import re
import socket
import threading
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from botpsy_web import REPO_ROOT
from botpsy_web.content_policy import BadPolicyRequest
from botpsy_web.model_speeds import MEASURED_ON, decode_speeds
from botpsy_web.site.headers import MIME_TYPES, NOTHING_ALLOWED, content_type, policy_for, response_headers
from botpsy_web.prompt_state.key import INDEX_NAME as PROMPT_STATES_INDEX
from botpsy_web.prompt_state.key import empty_index

DEFAULT_MODELS_DIR = REPO_ROOT / "static" / "models"
MODELS_URL_PREFIX = "/models/"

_RANGE_PATTERN = re.compile(r"^bytes=(\d*)-(\d*)$")


def list_models(models_dir: Path) -> list[dict]:
    """Exported folders under models_dir that hold a manifest.json, with their sizes."""
    models = []
    if not models_dir.is_dir():
        return models
    for folder in sorted(p for p in models_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        manifest_path = folder / "manifest.json"
        if not manifest_path.is_file():
            continue
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        files = manifest.get("files", {})
        models.append({
            "name": folder.name,
            "url": f"{MODELS_URL_PREFIX}{folder.name}/",
            "architecture": manifest.get("architecture"),
            "dtypes": sorted(manifest.get("dtypes", {})),
            "recommended_dtype": manifest.get("recommended_dtype", {}),
            "size_bytes": sum(int(f.get("size", 0)) for f in files.values()),
            "dtype_sizes": {
                dtype: sum(int(files.get(path, {}).get("size", 0)) for path in spec.get("files", []))
                for dtype, spec in manifest.get("dtypes", {}).items()
            },
            "decode_tokens_per_second": decode_speeds(manifest),  # measured by the bench, when known
            "speed_measured_on": MEASURED_ON,
        })
    return models


class BotpsyRequestHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    models_dir: Path = DEFAULT_MODELS_DIR
    quiet = True

    # --- routing -----------------------------------------------------------
    def translate_path(self, path: str) -> str:
        url_path = unquote(urlsplit(path).path)
        if url_path.startswith(MODELS_URL_PREFIX):
            relative = url_path[len(MODELS_URL_PREFIX):]
            base = self.models_dir.resolve()
            target = (base / relative).resolve()
            if target != base and base not in target.parents:
                return str(base / "__outside__")  # yields 404
            return str(target)
        return super().translate_path(path)

    def do_GET(self):
        self.policy = NOTHING_ALLOWED
        url_path = urlsplit(self.path).path
        if url_path == MODELS_URL_PREFIX + "index.json":
            return self._send_json({"models": list_models(self.models_dir)})
        if url_path.endswith("/" + PROMPT_STATES_INDEX) and not Path(self.translate_path(self.path)).is_file() \
                and (Path(self.translate_path(self.path)).parent / "manifest.json").is_file():
            return self._send_json(empty_index())  # a folder that ships no prompt state: not a 404
        return self._serve_file(head_only=False)

    def do_HEAD(self):
        self.policy = NOTHING_ALLOWED
        return self._serve_file(head_only=True)

    # --- responses ---------------------------------------------------------
    def end_headers(self):
        # no-cache always: this serves a working tree that changes under it.
        for name, value in response_headers(getattr(self, "policy", NOTHING_ALLOWED)).items():
            self.send_header(name, value)
        super().end_headers()

    def _send_json(self, payload: dict):
        body = json.dumps(payload).encode()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve_file(self, head_only: bool):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            index = path / "index.html"
            if not urlsplit(self.path).path.endswith("/"):
                self.send_response(HTTPStatus.MOVED_PERMANENTLY)
                self.send_header("Location", urlsplit(self.path).path + "/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if not index.is_file():
                self.send_error(HTTPStatus.NOT_FOUND, "No index.html here")
                return
            path = index
        if not path.is_file():
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return
        try:
            self.policy = policy_for(urlsplit(self.path).path, urlsplit(self.path).query, path)
        except BadPolicyRequest as error:
            self.send_error(HTTPStatus.BAD_REQUEST, str(error))
            return
        size = path.stat().st_size
        start, end = 0, size - 1
        range_header = self.headers.get("Range")
        status = HTTPStatus.OK
        if range_header:
            parsed = _parse_range(range_header, size)
            if parsed is None:
                self.send_response(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start, end = parsed
            status = HTTPStatus.PARTIAL_CONTENT
        length = max(0, end - start + 1)
        self.send_response(status)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        if status == HTTPStatus.PARTIAL_CONTENT:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Last-Modified", self.date_time_string(int(path.stat().st_mtime)))
        self.end_headers()
        if head_only or length == 0:
            return
        try:
            with path.open("rb") as f:
                f.seek(start)
                remaining = length
                while remaining > 0:
                    chunk = f.read(min(1 << 20, remaining))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    remaining -= len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def guess_type(self, path):
        return content_type(path) or mimetypes.guess_type(path)[0] or "application/octet-stream"

    def log_message(self, format, *args):
        if not self.quiet:
            super().log_message(format, *args)


def _parse_range(header: str, size: int):
    match = _RANGE_PATTERN.match(header.strip())
    if not match or (not match.group(1) and not match.group(2)):
        return None
    first, last = match.group(1), match.group(2)
    if first == "":  # suffix range: the last N bytes
        n = int(last)
        if n == 0:
            return None
        return max(0, size - n), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        return None
    return start, end


def make_server(host: str = "127.0.0.1", port: int = 8000, root: Path = REPO_ROOT,
                models_dir: Path = DEFAULT_MODELS_DIR, quiet: bool = True) -> ThreadingHTTPServer:
    """A ready server (not yet serving). Port 0 picks a free port: see server.server_address."""
    handler = type("Handler", (BotpsyRequestHandler,), {"models_dir": Path(models_dir), "quiet": quiet})
    server = ThreadingHTTPServer((host, port), partial(handler, directory=str(root)))
    server.daemon_threads = True
    return server


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the system's pick), for a server started next."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def serve_in_background(**kwargs) -> tuple[ThreadingHTTPServer, str]:
    """Start a server on a thread; returns it and its base URL (for tests and checks)."""
    server = make_server(**{"port": 0, **kwargs})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"


def register(subparsers):
    parser = subparsers.add_parser("serve", help="serve the demo page with the headers the runtime needs")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--models", type=Path, default=DEFAULT_MODELS_DIR,
                        help="folder of exported models, served at /models/ (default static/models)")
    parser.set_defaults(func=run)


def node_modules_missing() -> bool:
    """True (after saying what to do) when the npm runtimes the page loads are not installed."""
    if (REPO_ROOT / "node_modules" / "onnxruntime-web").is_dir():
        return False
    print("error: node_modules is missing: run `npm ci --ignore-scripts` in the repository first")
    return True


def run(args) -> int:
    if node_modules_missing():
        return 2
    from botpsy_web.build_py import build_agent_bundle

    bundle = build_agent_bundle()
    print(f"botpsy-web: agent bundle {bundle.relative_to(REPO_ROOT)} is up to date")
    print(f"botpsy-web: serving {REPO_ROOT} (models from {args.models})")
    return serve_until_interrupted(args.host, args.port, args.models, quiet=False,
                                   ready_message="Open {url} in Chromium or Chrome (Ctrl+C stops).")


def serve_until_interrupted(host: str, port: int, models_dir: Path, quiet: bool, ready_message: str) -> int:
    """Listen, print ready_message (with {url}), serve until Ctrl+C. Exit status 2 when the port is taken."""
    try:
        server = make_server(host, port, models_dir=models_dir, quiet=quiet)
    except OSError as error:
        print(f"error: cannot listen on {host}:{port}: {error.strerror}. Try --port with another number.")
        return 2
    bound_host, bound_port = server.server_address[:2]
    print(ready_message.format(url=f"http://{bound_host}:{bound_port}/"), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
