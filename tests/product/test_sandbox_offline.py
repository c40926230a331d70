"""run_python on a page opened OFFLINE, after one online visit that never used it: the page
builds the sandbox frame from bytes the service worker kept (web/sandbox/sandbox-client.js),
under the app's own policy, and the program's output reaches the chat. SCRIPTED model
(test_tool_episode.py says why)."""

import json

from botpsy_web.app_page import open_app_with_model, send, wait_until_offline_ready

MODEL = "tiny-qwen3.5"

CODE = "import statistics\nprint(statistics.mean([1, 2, 3, 4]))\nsum(range(101))"


def test_run_python_starts_on_a_page_opened_offline(browser, open_guarded_page, app_server, exported_model,
                                                    agent_bundle, scripted_model, tool_call_text):
    folder = exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server)
    scripted_model(context, [{"match": "add up", "outputs": [
        tool_call_text("run_python", code=CODE), "The sum is 5050."]}], folder)
    page.set_default_timeout(180_000)
    open_app_with_model(page, app_server, MODEL, backend="wasm")
    wait_until_offline_ready(page)
    page.close()

    context.set_offline(True)
    page = context.new_page()
    page.set_default_timeout(180_000)
    page.goto(f"{app_server}/")
    page.locator("#load-progress[data-state='ready']").wait_for()   # the last model, from storage
    assert page.evaluate("navigator.onLine") is False
    page.evaluate("() => window.botpsy.session.setSettings({enabledTools: ['run_python']})")
    send(page, "Please add up the numbers to 100")
    page.get_by_text("The sum is 5050.").wait_for()
    card = page.locator(".tool-card").filter(has_text="run_python")
    assert json.loads(card.locator(".tool-result").inner_text()) == {"output": "2.5\n", "result": "5050"}
    frames = page.evaluate("""() => [...document.querySelectorAll('iframe')]
        .map((frame) => [frame.getAttribute('sandbox'), frame.getAttribute('src'), frame.srcdoc.length > 0])""")
    assert frames == [["allow-scripts", None, True]]
    context.close()
    guard.assert_clean()
