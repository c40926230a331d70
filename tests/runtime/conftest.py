"""Fixtures of the runtime tests: one harness page per module (web/runtime/harness.html),
guarded so that no request leaves the test servers."""

import pytest

from botpsy_web.verify_browser import open_harness


@pytest.fixture(scope="module")
def runtime_page(browser, open_guarded_page, server):
    """A cross-origin-isolated page exposing window.botpsyRuntime.ModelClient; modules import from /web/runtime/."""
    context, page, guard = open_guarded_page(browser)
    page.set_default_timeout(300_000)
    open_harness(page, server)
    yield page
    context.close()
    guard.assert_clean()
