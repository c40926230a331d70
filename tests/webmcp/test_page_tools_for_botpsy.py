"""A host page's own WebMCP tools, offered to BotPsy's model by the widget (web/webmcp/page-tools.js):
the example shop registers its tools only through WebMCP when the browser has it, and the scripted
model (tests/product/scripted-model-worker.js) calls them through the widget: a read-only tool
answers at once, an acting one waits for the visitor's approval, both results are marked as
third-party content; a name that clashes with one of BotPsy's is namespaced; a tool that goes
away during a turn is an error result for the model, not a crash."""

import pytest

from .conftest import ISOLATION_HEADERS, MODEL, scripted_worker_body, xml_call

SCRIPT = [
    {"match": "tent under 300", "outputs": [
        xml_call("product_search", query="tent", max_price=300),
        "The Ridgeline 2-person tent is €249.",
    ]},
    {"match": "put it in my cart", "outputs": [
        xml_call("add_to_cart", sku="TENT-2P"),
        "Done, it is in your cart.",
    ]},
    {"match": "reserve a pitch", "outputs": [
        xml_call("reserve_pitch", night="Friday"),
        "That did not work out.",
    ]},
]
# The host page's own script, as a site would write it: a tool whose name is one of BotPsy's, and
# one it withdraws later (WebMCP unregisters a tool when its signal aborts).
HOST_SCRIPT = """async () => {
    const context = document.modelContext;
    await context.registerTool({name: 'calculator', description: 'The shop price calculator.',
        inputSchema: {type: 'object', properties: {sku: {type: 'string'}}}, execute: () => 'price'});
    window.pitchRegistration = new AbortController();
    window.pitches = [];
    await context.registerTool({name: 'reserve_pitch', description: 'Reserve a camping pitch.',
        inputSchema: {type: 'object', properties: {night: {type: 'string'}}, required: ['night']},
        execute: ({night}) => { window.pitches.push(night); return 'reserved'; }},
        {signal: window.pitchRegistration.signal});
}"""


def shop_url(foreign_server, app_server):
    return f"{foreign_server}/static/examples/shop.html?botpsy={app_server}&model=/models/{MODEL}/"


@pytest.fixture
def open_shop(webmcp_browser, open_guarded_page, server, foreign_server, model_folder, agent_bundle):
    opened = []

    def open_page(browser):
        context, page, guard = open_guarded_page(browser, foreign_server)
        guard.allow(server)
        body = scripted_worker_body(SCRIPT, model_folder)
        context.route("**/web/runtime/model-worker.js", lambda route: route.fulfill(
            status=200, body=body, content_type="text/javascript", headers=ISOLATION_HEADERS))
        page.set_default_timeout(120_000)
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
        page.goto(shop_url(foreign_server, server))
        page.wait_for_function("() => window.fernhillReady === true")
        opened.append((context, guard))
        return page

    yield open_page
    for context, guard in opened:
        context.close()
        guard.assert_clean()


def start_widget(page):
    page.get_by_role("button", name="Start the assistant").click()
    page.wait_for_function("() => !document.getElementById('assistant').shadowRoot.querySelector('textarea').disabled")


def ask(page, text):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def agent_tools(page):
    return {tool["name"]: tool for tool in page.evaluate("document.getElementById('assistant').session.tools()")}


def test_the_widget_offers_the_pages_webmcp_tools_behind_the_gate(open_shop, webmcp_browser):
    page = open_shop(webmcp_browser)
    assert {tool["name"] for tool in page.webmcp.tools()} == {"product_search", "add_to_cart"}
    page.evaluate(HOST_SCRIPT)
    start_widget(page)
    page.wait_for_function("() => document.getElementById('assistant').session.tools().some((t) => t.name === 'reserve_pitch' && t.enabled)")
    tools = agent_tools(page)
    # Only through WebMCP: the shop gave the widget nothing directly.
    assert {"product_search", "add_to_cart", "reserve_pitch"} <= {n for n, t in tools.items() if t["enabled"]}
    assert tools["page_calculator"]["description"] == "The shop price calculator."
    assert tools["calculator"]["description"] != "The shop price calculator."  # ours stays ours

    ask(page, "Do you have a tent under 300 euros?")
    page.get_by_text("The Ridgeline 2-person tent is €249.").wait_for()
    card = page.locator("botpsy-chat .tool-card").filter(has_text="product_search")
    assert card.get_attribute("data-status") == "done"  # read-only: it asked nobody
    assert "TENT-2P" in card.locator(".tool-result").inner_text()
    assert "third-party content" in card.locator(".tool-section-label").last.text_content()

    ask(page, "Please put it in my cart")
    dialog = page.get_by_role("dialog", name="Allow “add_to_cart”?")
    dialog.wait_for()
    assert page.evaluate("window.fernhillCart") == []
    dialog.get_by_role("button", name="Approve").click()
    page.get_by_text("Done, it is in your cart.").wait_for()
    assert page.evaluate("window.fernhillCart") == ["TENT-2P"]
    cart_card = page.locator("botpsy-chat .tool-card").filter(has_text="add_to_cart")
    assert "third-party content" in cart_card.locator(".tool-section-label").last.text_content()

    # The page withdraws a tool while the visitor is being asked about it.
    ask(page, "Can you reserve a pitch for Friday?")
    dialog = page.get_by_role("dialog", name="Allow “reserve_pitch”?")
    dialog.wait_for()
    page.evaluate("window.pitchRegistration.abort()")
    page.wait_for_function("() => !document.getElementById('assistant').session.tools().some((t) => t.name === 'reserve_pitch')")
    dialog.get_by_role("button", name="Approve").click()
    page.get_by_text("That did not work out.").wait_for()
    pitch_card = page.locator("botpsy-chat .tool-card").filter(has_text="reserve_pitch")
    assert pitch_card.get_attribute("data-status") == "error"
    assert "reserve_pitch" in pitch_card.locator(".tool-result").inner_text()
    assert page.evaluate("window.pitches") == []
    assert page.errors == []


def test_without_the_flag_the_page_and_the_widget_work_as_before(open_shop, browser):
    page = open_shop(browser)
    assert page.evaluate("'modelContext' in document") is False
    start_widget(page)
    tools = agent_tools(page)
    assert tools["product_search"]["enabled"] and tools["add_to_cart"]["enabled"]  # the widget's registerTool
    assert not any(name.startswith("page_") for name in tools)
    ask(page, "Do you have a tent under 300 euros?")
    page.get_by_text("The Ridgeline 2-person tent is €249.").wait_for()
    card = page.locator("botpsy-chat .tool-card").filter(has_text="product_search")
    assert card.locator(".tool-section-label").last.text_content() == "Result"  # a host tool, as before
    assert page.errors == []


def test_a_widget_told_webmcp_off_offers_none_of_the_pages_webmcp_tools(open_shop, webmcp_browser):
    page = open_shop(webmcp_browser)
    # A site owner's own markup, as a new element: <botpsy-chat webmcp="off" ...>
    page.evaluate("""() => {
        const old = document.getElementById('assistant');
        const widget = document.createElement('botpsy-chat');
        for (const {name, value} of old.attributes) widget.setAttribute(name, value);
        widget.setAttribute('webmcp', 'off');
        old.replaceWith(widget);
    }""")
    start_widget(page)
    tools = agent_tools(page)
    assert "calculator" in tools
    assert not {"product_search", "add_to_cart"} & set(tools)
    assert not any(name.startswith("page_") for name in tools)
    # The page's own WebMCP offer to the browser's agents is the page's business, and stays.
    assert {tool["name"] for tool in page.webmcp.tools()} == {"product_search", "add_to_cart"}
    assert page.errors == []
