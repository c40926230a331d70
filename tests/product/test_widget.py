"""<botpsy-chat> on a page of ANOTHER origin (the example shop, served by `foreign_server`,
loading the widget from `app_server`): the agent calls the host page's own tool, a
side-effecting host tool asks first, the page hears about it through events, and styles
stay on their own side of the Shadow DOM.

Tool calls use the SCRIPTED model (tests/product/scripted-model-worker.js, see
test_tool_episode.py); one test runs the real tiny model through the cross-origin worker."""

import json
from urllib.parse import urlsplit

import pytest

MODEL = "tiny-qwen3.5"
HOT_PINK = "rgb(255, 105, 180)"


def shop_url(foreign_server, app_server, mode="inline"):
    return (f"{foreign_server}/static/examples/shop.html?botpsy={app_server}"
            f"&model=/models/{MODEL}/&mode={mode}")


def origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture
def shop_page(browser, open_guarded_page, app_server, foreign_server, exported_model, agent_bundle,
              scripted_model, tool_call_text):
    folder = exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, foreign_server, viewport={"width": 1100, "height": 900})
    guard.allow(app_server)
    scripted_model(context, [
        {"match": "tent under 300", "outputs": [
            tool_call_text("product_search", query="tent", max_price=300),
            "The Ridgeline 2-person tent is €249.",
        ]},
        {"match": "put it in my cart", "outputs": [
            tool_call_text("add_to_cart", sku="TENT-2P"),
            "Done, it is in your cart.",
        ]},
    ], folder)
    requests = []
    context.on("request", lambda request: requests.append(request.url))
    page.set_default_timeout(120_000)
    page.requests = requests
    yield page
    context.close()
    guard.assert_clean()


def start_widget(page):
    page.wait_for_function("() => window.fernhillReady === true")
    page.evaluate("""() => {
        window.widgetEvents = [];
        const chat = document.getElementById('assistant');
        for (const type of ['botpsy-ready', 'botpsy-message', 'botpsy-toolcall', 'botpsy-error']) {
            chat.addEventListener(type, (event) => window.widgetEvents.push({type, detail: JSON.parse(JSON.stringify(event.detail))}));
        }
    }""")
    page.get_by_role("button", name="Start the assistant").click()
    page.get_by_role("textbox", name="Message").wait_for()
    page.wait_for_function("() => !document.getElementById('assistant').shadowRoot.querySelector('textarea').disabled")


def ask(page, text):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def test_the_agent_calls_the_host_pages_own_tool(shop_page, app_server, foreign_server, artifacts_dir):
    page = shop_page
    page.goto(shop_url(foreign_server, app_server))
    start_widget(page)
    assert page.evaluate("crossOriginIsolated")
    assert "threads" in page.locator("botpsy-chat .badge").inner_text()
    ask(page, "Do you have a tent under 300 euros?")
    page.get_by_text("The Ridgeline 2-person tent is €249.").wait_for()
    card = page.locator("botpsy-chat .tool-card").filter(has_text="product_search")
    assert json.loads(card.locator(".tool-arguments").inner_text()) == {"query": "tent", "max_price": 300}
    result = card.locator(".tool-result").inner_text()
    assert "TENT-2P" in result and "TENT-UL" not in result  # the €329 tent is over budget
    assert card.get_attribute("data-status") == "done"

    events = page.evaluate("window.widgetEvents")
    assert [e["type"] for e in events][0] == "botpsy-ready"
    tool_events = [e["detail"] for e in events if e["type"] == "botpsy-toolcall"]
    assert tool_events[-1]["name"] == "product_search" and "TENT-2P" in json.dumps(tool_events[-1]["result"])
    messages = [e["detail"] for e in events if e["type"] == "botpsy-message"]
    assert messages[0]["role"] == "user" and messages[-1]["role"] == "assistant"

    # The widget's code and runtimes come from its own origin, not the host's.
    widget_files = [url for url in page.requests
                    if urlsplit(url).path.startswith(("/web/", "/node_modules/", "/static/build/", "/static/css/"))]
    assert widget_files and all(origin(url) == app_server for url in widget_files), \
        [url for url in widget_files if origin(url) != app_server][:5]
    page.screenshot(path=artifacts_dir / "product-widget-inline.png", full_page=True)


def test_a_side_effecting_host_tool_asks_first(shop_page, app_server, foreign_server):
    page = shop_page
    page.goto(shop_url(foreign_server, app_server))
    start_widget(page)
    ask(page, "Please put it in my cart")
    dialog = page.get_by_role("dialog", name="Allow “add_to_cart”?")
    dialog.wait_for()
    assert page.evaluate("window.fernhillCart") == []
    dialog.get_by_role("button", name="Approve").click()
    page.get_by_text("Done, it is in your cart.").wait_for()
    assert page.evaluate("window.fernhillCart") == ["TENT-2P"]


def test_styles_do_not_cross_the_shadow_boundary(shop_page, app_server, foreign_server):
    page = shop_page
    page.goto(shop_url(foreign_server, app_server))
    page.wait_for_function("() => window.fernhillReady === true")
    start_button = page.get_by_role("button", name="Start the assistant")
    start_button.wait_for()
    page.wait_for_function("""() => {
        const root = document.getElementById('assistant').shadowRoot;
        return [...root.querySelectorAll('link[rel=stylesheet]')].every((link) => link.sheet);
    }""")
    widget_button = start_button.evaluate("b => getComputedStyle(b).backgroundColor")
    assert widget_button != HOT_PINK, "the host's button style leaked into the widget"
    host = page.evaluate("""() => ({
        font: getComputedStyle(document.body).fontFamily,
        paragraph: getComputedStyle(document.querySelector('main p')).color,
    })""")
    assert "Georgia" in host["font"] and host["paragraph"] == "rgb(122, 59, 0)", "widget styles leaked out"


def test_floating_launcher_opens_and_closes_and_fits_a_phone(shop_page, app_server, foreign_server,
                                                             horizontal_overflow, artifacts_dir):
    page = shop_page
    page.set_viewport_size({"width": 375, "height": 740})
    page.goto(shop_url(foreign_server, app_server, mode="floating"))
    page.wait_for_function("() => window.fernhillReady === true")
    launcher = page.get_by_role("button", name="Open Fernhill helper")
    assert launcher.get_attribute("aria-expanded") == "false"
    launcher.click()
    assert launcher.get_attribute("aria-expanded") == "true"
    panel = page.get_by_role("region", name="Fernhill helper")
    assert panel.is_visible()
    box = panel.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375
    assert horizontal_overflow(page) == []
    page.screenshot(path=artifacts_dir / "product-widget-floating-phone.png")
    page.keyboard.press("Escape")
    assert not panel.is_visible()
    assert launcher.get_attribute("aria-expanded") == "false"


def test_the_real_model_answers_in_the_widget_through_the_cross_origin_worker(
        browser, open_guarded_page, app_server, foreign_server, exported_model, agent_bundle, artifacts_dir):
    exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, foreign_server)
    guard.allow(app_server)
    requests = []
    context.on("request", lambda request: requests.append(request.url))
    page.set_default_timeout(120_000)
    page.goto(shop_url(foreign_server, app_server) + "&backend=wasm&temperature=0")
    start_widget(page)
    assert "WASM + 2 threads" in page.locator("botpsy-chat .badge").inner_text()
    ask(page, "Hello there")
    page.wait_for_function("""() => document.getElementById('assistant').shadowRoot
        .querySelector('.answer')?.textContent.length > 0""")
    page.get_by_role("button", name="Stop").click()
    page.locator("botpsy-chat .message.assistant[aria-busy='false']").wait_for()
    runtime_files = [url for url in requests
                     if urlsplit(url).path.startswith(("/node_modules/", "/web/runtime/", "/web/agent/", "/models/"))]
    assert any("onnxruntime-web" in url for url in runtime_files)
    assert all(origin(url) == app_server for url in runtime_files), \
        [url for url in runtime_files if origin(url) != app_server][:5]
    page.screenshot(path=artifacts_dir / "product-widget-real-model.png")
    context.close()
    guard.assert_clean()
