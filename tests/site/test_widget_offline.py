"""The widget of the nginx-served build on another site, when the visitor goes offline before
run_python's first call: the sandbox cannot start there (on another site its frame loads from
the BotPsy host by URL, and a sandboxed frame's loads never come from a service worker), and
the model gets that reason at once instead of a silent failure; the rest of the turn goes on.
SCRIPTED model (tests/product/scripted-model-worker.js): the tiny real model never calls tools."""

from ..product.conftest import route_scripted_model, xml_call
from .conftest import MODEL, HostPage, start_the_widget

HOST_PAGE = """<!doctype html>
<meta charset="utf-8">
<title>A shop that embeds BotPsy</title>
<script type="module" src="{site}/web/widget.js"></script>
<botpsy-chat id="assistant" model="/models/{model}/" backend="wasm" tools="run_python" heading="Help"></botpsy-chat>
"""


def test_run_python_offline_on_another_site_says_why_it_cannot_start(browser, open_guarded_page, nginx_site,
                                                                       exported_model, tmp_path):
    host = HostPage(tmp_path / "host", HOST_PAGE.format(site=nginx_site, model=MODEL))
    try:
        context, page, guard = open_guarded_page(browser, host.url)
        guard.allow(nginx_site)
        route_scripted_model(context, [{"match": "add up", "outputs": [
            xml_call("run_python", code="sum(range(101))"), "I could not run it."]}], exported_model(MODEL))
        page.set_default_timeout(180_000)
        page.goto(f"{host.url}/")
        start_the_widget(page)
        context.set_offline(True)
        box = page.get_by_role("textbox", name="Message")
        box.fill("Please add up the numbers to 100")
        box.press("Enter")
        page.get_by_text("I could not run it.").wait_for()
        card = page.locator("botpsy-chat .tool-card").filter(has_text="run_python")
        result = card.locator(".tool-result").inner_text()
        assert "run_python's sandbox cannot start while offline" in result and nginx_site in result, result
        frames = page.evaluate("() => [...document.querySelectorAll('iframe[sandbox]')].length")
        assert frames == 0
        context.close()
        guard.assert_clean()
    finally:
        host.close()

