"""The response headers of every route of BotPsy's site: one table for `botpsy-web serve`
and for every host configuration `botpsy-web build-site` writes (`_headers`, `nginx.conf`,
`Caddyfile`, and the service worker's copy for hosts that send no headers), so they cannot drift.

Each response carries:
- COOP/COEP: the page is cross-origin isolated, so onnxruntime-web runs several WASM threads;
  CORP and `Access-Control-Allow-Origin: *`: a page on another origin (the widget) may load
  our scripts, workers and model files.
- a Content-Security-Policy chosen by route (botpsy_web/content_policy.py says what each
  allows and why); documents and workers take their policy from their own response.
- `X-Content-Type-Options: nosniff`: a file runs as a script only with a script's type.
- `Service-Worker-Allowed: /`: web/sw.js may control the whole site.
- Cache-Control by route: `serve` serves a working tree that changes under it, so it always
  says `no-cache`; a built site says the same for its pages and code (revalidated on every
  load, a 304 when unchanged) and `immutable` for folders named by their content.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from botpsy_web.content_policy import (FETCH_FRAME_PATH, WORKER_FRAME_PATH, app_policy, fetch_frame_policy,
                                       worker_frame_policy)
from botpsy_web.sandbox_policy import SANDBOX_PAGE_PATH, SANDBOX_POLICY

# Responses that are no file of ours (errors, redirects, the model list) may run nothing.
NOTHING_ALLOWED = "default-src 'none'"

ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "cross-origin",
}
CROSS_ORIGIN_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "Content-Length, Content-Range, Accept-Ranges",
}

REVALIDATE = "no-cache"
IMMUTABLE = "public, max-age=31536000, immutable"

# Types the runtime relies on: module scripts must be JavaScript (nosniff), WebAssembly must be
# application/wasm to compile while it streams; the rest is data.
MIME_TYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".onnx": "application/octet-stream",
    ".onnx_data": "application/octet-stream",
    ".data": "application/octet-stream",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".md": "text/markdown; charset=utf-8",
}
# What a built site holds besides those (host configurations name every type they serve).
SITE_MIME_TYPES = {
    **MIME_TYPES,
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".jinja": "text/plain; charset=utf-8",
    ".png": "image/png",
    ".ico": "image/x-icon",
}

# policy(query, file, model_origins) -> header value or None. file: the file served (its inline
# blocks are allowed by hash); model_origins: other origins a built site's models come from.
Policy = Callable[[str, "Path | None", tuple], "str | None"]


@dataclass(frozen=True)
class Route:
    """A path (exact) or a folder (ending in "/": everything below it), its policy and caching."""
    prefix: str
    policy: Policy
    # The policy depends on the request's ?origin= (the confirmed-fetch frame): a host that cannot
    # run code per request fills the origin in its own way (host_config.py).
    query_origin: bool = False

    def matches(self, url_path: str) -> bool:
        return url_path == self.prefix or (self.prefix.endswith("/") and url_path.startswith(self.prefix))


def _no_policy(query, file, model_origins) -> None:
    return None


# First match wins.
ROUTES: list[Route] = [
    Route(SANDBOX_PAGE_PATH, lambda query, file, models: SANDBOX_POLICY),   # run_python's sandbox: no connections at all
    Route(FETCH_FRAME_PATH, lambda query, file, models: fetch_frame_policy(query), query_origin=True),
    Route(WORKER_FRAME_PATH, lambda query, file, models: worker_frame_policy(file, models)),
    # Stand-ins for other people's pages (a shop embedding the widget, test harnesses that play
    # a host or drive the runtime): their policy is their own; see web/WIDGET.md. Never built.
    Route("/static/examples/", _no_policy),
    Route("/tests/", _no_policy),
    Route("/", lambda query, file, models: app_policy(file, models)),
]


def route_for(url_path: str, routes: list[Route] = ROUTES) -> Route | None:
    return next((route for route in routes if route.matches(url_path)), None)


def policy_for(url_path: str, query: str = "", file: Path | None = None) -> str | None:
    """The Content-Security-Policy header value for a response, or None for none.
    Raises content_policy.BadPolicyRequest when the request cannot have one (fetch frame, bad origin)."""
    route = route_for(url_path)
    return route.policy(query, file, ()) if route else None


def shared_headers(cache_control: str = REVALIDATE) -> dict[str, str]:
    """What every response carries, before its policy."""
    return {**ISOLATION_HEADERS, **CROSS_ORIGIN_HEADERS, "Cache-Control": cache_control,
            "Service-Worker-Allowed": "/"}


def response_headers(policy: str | None, cache_control: str = REVALIDATE) -> dict[str, str]:
    """Every header a response of ours sends besides its type, length and range. A script runs
    only with a script's type (nosniff): the fetch frame's HTML never runs as a worker."""
    headers = shared_headers(cache_control)
    if policy:
        headers["Content-Security-Policy"] = policy
    headers["X-Content-Type-Options"] = "nosniff"
    return headers


def content_type(path: str) -> str | None:
    """The type we serve a file with, or None where the host's own table decides."""
    return MIME_TYPES.get(Path(path).suffix.lower())
