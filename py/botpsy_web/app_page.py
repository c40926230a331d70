"""Driving the app's page (index.html) from Playwright: what the browser tests and the bench
scripts (bench/site.py) both do to it."""

from __future__ import annotations


def wait_until_offline_ready(page) -> None:
    """The service worker controls the page and has finished storing what the page loaded before
    it did (web/sw.js, its "cache-urls" message): from here the page works offline."""
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    page.evaluate("""() => new Promise((resolve) => {
        navigator.serviceWorker.addEventListener('message', (event) => {
            if (event.data?.type === 'cached-urls') resolve();
        });
        const urls = [location.href, ...performance.getEntriesByType('resource').map((e) => e.name)];
        navigator.serviceWorker.controller.postMessage({type: 'cache-urls', urls});
    })""")
