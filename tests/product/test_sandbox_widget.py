"""run_python from <botpsy-chat> on a page of ANOTHER origin (the example shop on
`foreign_server`, the widget from `app_server`): the sandbox frame comes from the BotPsy
host with its own policy, the code's answer reaches the chat, and the code reaches nothing
of the host page (its origin's storage) nor the network. SCRIPTED model (test_widget.py)."""

import json

from .test_widget import MODEL, ask, shop_url, start_widget

CODE = ("import js\nfrom pyodide.ffi import run_sync\ntried = []\n"
        "for attempt in (lambda: js.indexedDB.open('botpsy-widget'), lambda: run_sync(js.fetch('{host}/steal'))):\n"
        "    try:\n        attempt()\n    except Exception as error:\n        tried.append(type(error).__name__)\n"
        "print(tried)\nsum(range(101))")


def test_run_python_works_in_the_widget_inside_its_own_frame(browser, open_guarded_page, app_server, foreign_server,
                                                             exported_model, agent_bundle, scripted_model, tool_call_text):
    context, page, guard = open_guarded_page(browser, foreign_server)
    guard.allow(app_server)
    scripted_model(context, [{"match": "add up", "outputs": [
        tool_call_text("run_python", code=CODE.format(host=foreign_server)), "The sum is 5050."]}],
        exported_model(MODEL))
    page.set_default_timeout(180_000)
    page.goto(shop_url(foreign_server, app_server))
    page.evaluate("() => document.getElementById('assistant').setAttribute('tools', 'run_python')")
    start_widget(page)
    ask(page, "Please add up the numbers to 100")
    page.get_by_text("The sum is 5050.").wait_for()
    card = page.locator("botpsy-chat .tool-card").filter(has_text="run_python")
    result = json.loads(card.locator(".tool-result").inner_text())
    assert result["result"] == "5050" and result["output"].endswith("['JsException', 'JsException']\n")
    assert "Failed to fetch" in result["output"]   # Pyodide also prints the failed fetch to stderr
    frames = page.evaluate("""() => [...document.querySelectorAll('iframe')].map((f) => [f.src, f.getAttribute('sandbox')])""")
    assert [f"{app_server}/web/sandbox/sandbox.html", "allow-scripts"] in frames
    context.close()
    guard.assert_clean()
