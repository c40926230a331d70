"""The Content-Security-Policy of run_python's sandbox frame (web/sandbox/sandbox.html).

The page embeds it as <iframe sandbox="allow-scripts"> (an opaque origin); this policy is
what keeps the model's code off the network: its blob: workers inherit it. No connections
at all (the Pyodide files arrive as buffers from the page), no script from any URL of ours:
the page's one inline script (the boot, allowed by its hash) turns the module sources the
page posts into blob: URLs of the frame's own origin, the only scripts that may load, in
the frame and in its workers. So the model's code cannot request even one of our files
(importScripts, import()). WebAssembly compilation, no frames, no forms, no plugins.

The same text is the page's meta tag (a test keeps them equal): on our own pages the client
builds the frame from local bytes (`srcdoc`, so it starts offline too); such a document
inherits the embedding page's policy, and the meta tag tightens it to this one. The app's
policy (botpsy_web/content_policy.py) therefore allows BOOT_HASH and blob: scripts as well.
On another site (the widget) the frame is loaded from the BotPsy host, which sends this
policy as its header. Any page may embed it: no frame-ancestors.
"""

import base64
import hashlib
import re

from botpsy_web import REPO_ROOT

SANDBOX_PAGE_PATH = "/web/sandbox/sandbox.html"
SANDBOX_PAGE_FILE = REPO_ROOT / "web" / "sandbox" / "sandbox.html"


def _boot_hash() -> str:
    [boot] = re.findall(r"<script>(.*?)</script>", SANDBOX_PAGE_FILE.read_text(encoding="utf-8"), re.DOTALL)
    return f"'sha256-{base64.b64encode(hashlib.sha256(boot.encode()).digest()).decode()}'"


BOOT_HASH = _boot_hash()

SANDBOX_POLICY = "; ".join([
    "default-src 'none'",
    f"script-src {BOOT_HASH} blob: 'wasm-unsafe-eval'",
    "worker-src blob:",
    "connect-src 'none'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
])
