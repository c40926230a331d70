"""The widget on someone else's page (the example shop on a second origin): its workers run in
a frame of the BotPsy origin, so they are confined by BotPsy's policy even on a host page with
none; a host whose policy forbids that frame still gets a working assistant (under the host's
policy, and told so); a host that forbids workers altogether gets an error naming what to allow.
SCRIPTED model (see test_tool_episode.py) for the turn; the real runtime files and agent."""

import json

import pytest

from .test_widget import MODEL, ask, shop_url, start_widget

ESCAPE = """async (target) => {
    try { await fetch(target + "/from-widget-worker?notes=all", {method: "POST", body: "notes"}); return "sent"; }
    catch (error) { return "blocked"; }
}"""


@pytest.fixture
def shop(browser, open_guarded_page, app_server, foreign_server, exported_model, agent_bundle, scripted_model,
         tool_call_text):
    folder = exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, foreign_server, viewport={"width": 1100, "height": 900})
    guard.allow(app_server)
    scripted_model(context, [{"match": "tent under 300", "outputs": [
        tool_call_text("product_search", query="tent", max_price=300), "The Ridgeline 2-person tent is €249."]}],
        folder)
    page.set_default_timeout(120_000)

    def with_host_policy(policy):
        # As a <meta> policy, inserted as soon as <head> exists (a routed response would lose the
        # page's loopback address, and with it the right to load from the BotPsy server).
        page.add_init_script("""(policy => new MutationObserver((_, observer) => {
            if (!document.head) return;
            observer.disconnect();
            const meta = document.createElement("meta");
            meta.httpEquiv = "Content-Security-Policy";
            meta.content = policy;
            document.head.prepend(meta);
        }).observe(document, {childList: true, subtree: true}))(%s)""" % json.dumps(policy))

    page.with_host_policy, page.guard = with_host_policy, guard
    yield page
    context.close()
    guard.assert_clean()


def widget_workers(page):
    return [worker for worker in page.workers if worker.url.endswith(("/model-worker.js", "/agent-worker.js"))
            or worker.url.startswith("blob:")]


def test_on_a_host_without_a_policy_the_widgets_workers_still_reach_nothing(shop, app_server, foreign_server,
                                                                          recording_server):
    page = shop
    page.guard.allow(recording_server.url)
    page.goto(shop_url(foreign_server, app_server))
    start_widget(page)
    frames = [frame.url for frame in page.frames if "/web/widget/worker-frame.html" in frame.url]
    assert frames and frames[0].startswith(app_server), [frame.url for frame in page.frames]
    ask(page, "Do you have a tent under 300 euros?")
    page.get_by_text("The Ridgeline 2-person tent is €249.").wait_for()
    # The host page itself has no policy: it could send anything (the control case)...
    assert page.evaluate(ESCAPE, recording_server.url) == "sent"
    assert [hit["path"] for hit in recording_server.hits] == ["/from-widget-worker?notes=all"]
    recording_server.clear()
    # ...but the widget's workers run under BotPsy's policy, not the host's.
    workers = [worker for worker in page.workers if worker.url.startswith(app_server)]
    assert {w.url.rsplit("/", 1)[-1] for w in workers} >= {"agent-worker.js"}, [w.url for w in page.workers]
    assert {worker.evaluate(ESCAPE, recording_server.url) for worker in workers} == {"blocked"}
    page.wait_for_timeout(500)
    assert recording_server.hits == []


def test_a_host_that_forbids_the_frame_gets_a_working_widget_and_a_notice(shop, app_server, foreign_server):
    page = shop
    page.with_host_policy("frame-src 'none'")
    page.goto(shop_url(foreign_server, app_server))
    start_widget(page)
    notice = page.locator("botpsy-chat .notice").filter(has_text="Running under this page's own security policy")
    assert notice.is_visible() and f"allow frame-src {app_server}" in notice.inner_text()
    ask(page, "Do you have a tent under 300 euros?")
    page.get_by_text("The Ridgeline 2-person tent is €249.").wait_for()


def test_a_host_that_forbids_workers_gets_an_error_naming_what_to_allow(shop, app_server, foreign_server):
    page = shop
    page.with_host_policy("frame-src 'none'; worker-src 'none'")
    page.goto(shop_url(foreign_server, app_server))
    page.wait_for_function("() => window.fernhillReady === true")
    page.get_by_role("button", name="Start the assistant").click()
    message = page.locator("botpsy-chat .progress-text")
    message.filter(has_text="Could not start the assistant").wait_for()
    text = message.inner_text()
    assert "Content-Security-Policy blocks its workers" in text and f"allow frame-src {app_server}" in text, text
    assert page.get_by_role("button", name="Start the assistant").is_enabled()
