"""The Content-Security-Policy of run_python's sandbox page (web/sandbox/sandbox.html).

The page embeds it as <iframe sandbox="allow-scripts"> (an opaque origin); this policy is
what keeps the model's code off the network: its blob: workers inherit it. No connections
at all (the Pyodide files arrive as buffers from the page), scripts only from this origin
(the frame's own modules) and from blob: URLs (Pyodide's modules, made from those buffers),
WebAssembly compilation, no frames, no forms, no plugins. Once its modules have loaded, the
frame adds a second policy (a meta tag, web/sandbox/sandbox-frame.js) that allows blob:
scripts only, so the workers it starts afterwards cannot request even one of our files. Any page may embed it (the widget's host
pages do): no frame-ancestors. botpsy_web/content_policy.py routes the page's path here.
"""

SANDBOX_PAGE_PATH = "/web/sandbox/sandbox.html"

SANDBOX_POLICY = "; ".join([
    "default-src 'none'",
    "script-src 'self' blob: 'wasm-unsafe-eval'",
    "worker-src blob:",
    "connect-src 'none'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
])

