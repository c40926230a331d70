"""After one visit with a model loaded, the app works with the network off: the service
worker serves the page, the runtimes and the agent; the model comes from the runtime's
own cache; notes saved before are still there. A new app version replaces the old app
cache on the next visit and leaves the stored model alone."""

import re

from botpsy_web import REPO_ROOT
from botpsy_web.app_page import ask_and_stop, open_app_with_model, send, wait_until_offline_ready


MODEL = "tiny-qwen3.5"


def test_reload_offline_gives_a_working_assistant_with_the_cached_model(first_visit_offline_ready, artifacts_dir):
    context, page, guard = first_visit_offline_ready(MODEL)

    context.set_offline(True)
    page.reload()
    # The last model reopens by itself, from storage.
    page.locator("#load-progress[data-state='ready']").wait_for()
    assert page.evaluate("crossOriginIsolated"), "the service worker must keep COOP/COEP on what it serves"
    assert "threads" in page.locator("#backend-badge").inner_text()
    assert page.get_by_role("status").filter(has_text="Offline").is_visible()
    ask_and_stop(page, "Are you there?")
    page.screenshot(path=artifacts_dir / "product-offline-reload.png")
    context.close()
    guard.assert_clean()


def test_saved_notes_are_there_after_an_offline_reload(
        browser, open_guarded_page, app_server, exported_model, agent_bundle, scripted_model, tool_call_text,
        artifacts_dir):
    """With the SCRIPTED model (see test_tool_episode.py for why)."""
    folder = exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server)
    scripted_model(context, [
        {"match": "note my locker code", "outputs": [
            tool_call_text("notes_create", title="Locker", text="Code 4711"), "Noted."]},
        {"match": "what is my locker code", "outputs": [
            tool_call_text("notes_search", query="locker"), "Your locker code is in your notes."]},
    ], folder)
    page.set_default_timeout(120_000)
    open_app_with_model(page, app_server, MODEL, backend="wasm")
    send(page, "Please note my locker code: 4711")
    page.get_by_role("dialog", name="Allow “notes_create”?").get_by_role("button", name="Approve").click()
    page.get_by_text("Noted.").wait_for()
    wait_until_offline_ready(page)

    context.set_offline(True)
    page.reload()
    page.locator("#load-progress[data-state='ready']").wait_for()
    send(page, "Offline now: what is my locker code?")
    page.get_by_text("Your locker code is in your notes.").wait_for()
    result = page.locator(".tool-card").filter(has_text="notes_search").locator(".tool-result").inner_text()
    assert "4711" in result
    page.screenshot(path=artifacts_dir / "product-offline-notes.png")
    context.close()
    guard.assert_clean()


def test_a_new_app_version_replaces_the_app_cache_and_keeps_the_model(first_visit_offline_ready):
    context, page, guard = first_visit_offline_ready(MODEL)
    before = page.evaluate("caches.keys()")
    [old_app_cache] = [name for name in before if name.startswith("botpsy-app-")]
    assert any(name.startswith("botpsy-models") for name in before)

    # Ship a new version: the same service worker with its VERSION bumped.
    source = (REPO_ROOT / "web" / "sw.js").read_text()
    bumped = re.sub(r'const VERSION = "([^"]+)";', r'const VERSION = "\1-next";', source, count=1)
    assert bumped != source
    context.route("**/web/sw.js", lambda route: route.fulfill(
        body=bumped, content_type="text/javascript",
        headers={"Service-Worker-Allowed": "/", "Cross-Origin-Embedder-Policy": "require-corp"}))
    page.reload()  # the visit that finds the new version
    page.wait_for_function("""async (old) => {
        const names = await caches.keys();
        return !names.includes(old) && names.some((n) => n.startsWith('botpsy-app-') && n.endsWith('-next'));
    }""", arg=old_app_cache)
    page.reload()  # the next visit runs it, and the stored model still loads without downloading
    page.locator("#load-progress[data-state='ready']").wait_for()
    after = page.evaluate("caches.keys()")
    assert any(name.startswith("botpsy-models") for name in after)
    usage = page.evaluate("window.botpsy.session.storageUsage()")
    assert any(MODEL in entry["folderUrl"] and entry["bytes"] > 0 for entry in usage["models"])
    context.close()
    guard.assert_clean()
