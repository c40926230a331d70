"""Fixtures for the product tests: a server whose responses also allow the service worker
at /web/sw.js to control the whole site, and helpers for looking at the page."""

import threading
from functools import partial
from http.server import ThreadingHTTPServer

import pytest

from botpsy_web import REPO_ROOT
from botpsy_web.serve import BotpsyRequestHandler


class ServiceWorkerAllowedHandler(BotpsyRequestHandler):
    """The repository's handler plus `Service-Worker-Allowed: /` (the scope web/sw.js needs)."""

    def end_headers(self):
        already_sent = any(b"Service-Worker-Allowed" in line for line in getattr(self, "_headers_buffer", []))
        if not already_sent:  # in case serve.py starts sending it itself
            self.send_header("Service-Worker-Allowed", "/")
        super().end_headers()


def _serve(models_dir):
    handler = type("Handler", (ServiceWorkerAllowedHandler,), {"models_dir": models_dir, "quiet": True})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(REPO_ROOT)))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    host, port = httpd.server_address[:2]
    return httpd, f"http://{host}:{port}"


@pytest.fixture(scope="session")
def app_server(models_dir):
    """Base URL of the app, with the service worker allowed at the root scope."""
    httpd, base_url = _serve(models_dir)
    yield base_url
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def horizontal_overflow():
    """horizontal_overflow(page) -> elements sticking out of the viewport (what makes a phone scroll sideways)."""
    return lambda page: page.evaluate(OVERFLOW_SCRIPT)


OVERFLOW_SCRIPT = """() => {
        const width = document.documentElement.clientWidth;
        const wide = [];
        if (document.documentElement.scrollWidth > width) wide.push(`document ${document.documentElement.scrollWidth}px`);
        for (const node of document.querySelectorAll('body *')) {
            const box = node.getBoundingClientRect();
            if (box.width && (box.right > width + 1 || box.left < -1) && getComputedStyle(node).position !== 'fixed'
                && !node.closest('.visually-hidden, [hidden], dialog:not([open])')) {
                wide.push(`${node.tagName.toLowerCase()}${node.id ? '#' + node.id : ''}.${node.className} right=${Math.round(box.right)}`);
            }
        }
        return wide.slice(0, 10);
    }"""
