"""Fixtures for the product tests: a server whose responses also allow the service worker
at /web/sw.js to control the whole site, and helpers for looking at the page."""

import pytest

from botpsy_web.demo import serve_app_in_background


@pytest.fixture(scope="session")
def app_server(models_dir):
    """Base URL of the app, with the service worker allowed at the root scope."""
    httpd, base_url = serve_app_in_background(models_dir=models_dir)
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
