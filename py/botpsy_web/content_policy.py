"""The Content-Security-Policy of every response `botpsy-web serve` sends.

"Nothing leaves the device" is enforced by the browser, at the origin: a document takes its
policy from its own response, and so does every worker (from its script's response; a blob:
or data: worker inherits its creator's). So each response carries a policy, and the app's
allows connections to this origin only (`connect-src 'self'`; data: and blob: are local).
A compromised agent worker (code the model made it run, an injected prompt that found a bug)
can then fetch nothing but our own files, whatever it tries: fetch, XHR, WebSocket,
EventSource, import(), fonts.

The one way out is the confirmed-fetch frame (web/fetch/), a document whose policy allows
connections to ONE origin, named in its URL. Only a document can open a frame, and the page
opens it only for a URL the person approved in its dialog (web/agent/confirmed-fetch.js);
workers cannot create frames, and a worker started from the frame's URL would not run (it
is HTML, served with nosniff).

Which route gets which policy is a row of the site's one table of response headers
(botpsy_web/site/headers.py, first match wins), read by `serve` and by every host
configuration `botpsy-web build-site` writes; a part with its own needs (the run_python
sandbox) adds one row with a stricter policy.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from urllib.parse import parse_qs

from botpsy_web.sandbox_policy import BOOT_HASH, SANDBOX_PAGE_PATH, SANDBOX_POLICY

# 'wasm-unsafe-eval': onnxruntime-web and Pyodide compile WebAssembly; nothing here needs
# JavaScript eval. worker-src blob: is for onnxruntime's thread workers (a blob: worker
# inherits this same policy). frame-src 'self': the confirmed-fetch frame.
# BOOT_HASH and blob: in script-src are for run_python's sandbox frame, which the page builds
# from local bytes (srcdoc, so it starts offline) and which inherits this policy under its own
# stricter one: its boot script, then the blob: modules the boot makes. Harmless here: only
# that exact boot text matches the hash, and making a blob: URL takes code already running.
APP_DIRECTIVES = {
    "default-src": ["'self'"],
    "script-src": ["'self'", "'wasm-unsafe-eval'", BOOT_HASH, "blob:"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:", "blob:"],
    "connect-src": ["'self'", "data:", "blob:"],
    "worker-src": ["'self'", "blob:"],
    "frame-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'self'"],
}

FETCH_FRAME_PATH = "/web/fetch/frame.html"
WORKER_FRAME_PATH = "/web/widget/worker-frame.html"
_ORIGIN = re.compile(r"^https?://(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(:\d{1,5})?$")
_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL | re.IGNORECASE)
_INLINE_STYLE = re.compile(rb"<style[^>]*>(.*?)</style>", re.DOTALL | re.IGNORECASE)


class BadPolicyRequest(ValueError):
    """A request whose policy cannot be made (e.g. the fetch frame without a valid origin)."""


def render(directives: dict[str, list[str]]) -> str:
    return "; ".join(" ".join([name, *sources]) for name, sources in directives.items())


def _hashes(pattern: re.Pattern, body: bytes) -> list[str]:
    return [f"'sha256-{base64.b64encode(hashlib.sha256(block).digest()).decode()}'"
            for block in pattern.findall(body)]


def app_policy(file: Path | None, model_origins: tuple[str, ...] = ()) -> str:
    """The app's policy. An HTML file of ours with inline <script>/<style> blocks (the runtime
    harness) gets exactly those blocks allowed by hash; injected inline code stays blocked.
    model_origins: where a built site's owner keeps the model files (`build-site --model-url`),
    the only other origins the app may then reach."""
    directives = {name: list(sources) for name, sources in APP_DIRECTIVES.items()}
    directives["connect-src"] += list(model_origins)
    if file is not None and file.suffix == ".html" and file.is_file():
        body = file.read_bytes()
        directives["script-src"] += _hashes(_INLINE_SCRIPT, body)
        directives["style-src"] += _hashes(_INLINE_STYLE, body)
    return render(directives)


def worker_frame_policy(file: Path | None, model_origins: tuple[str, ...] = ()) -> str:
    """The widget's worker frame: the app's policy, embeddable by any site (it starts only our
    own workers, which then run under this policy instead of the host page's)."""
    return app_policy(file, model_origins).replace("frame-ancestors 'self'", "frame-ancestors *")


def fetch_frame_policy(query: str) -> str:
    """The confirmed-fetch frame: its own script, and connections to the origin in ?origin= only."""
    origins = parse_qs(query).get("origin", [])
    origin = origins[0].lower() if len(origins) == 1 else ""
    match = _ORIGIN.match(origin)
    if not match or (match.group(2) and int(match.group(2)[1:]) > 65535):
        raise BadPolicyRequest(f"the fetch frame needs ?origin=http(s)://host[:port], got {origins!r}")
    return fetch_frame_policy_for(origin)


def fetch_frame_policy_for(origin: str) -> str:
    """The fetch frame's policy for an origin already checked (or a host's placeholder for it)."""
    return render({"default-src": ["'none'"], "script-src": ["'self'"], "connect-src": [origin],
                   "base-uri": ["'none'"], "form-action": ["'none'"], "frame-ancestors": ["'self'"]})
