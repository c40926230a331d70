"""The page's tools, offered to the browser's own agents through WebMCP (web/webmcp/offer.js), in
Chromium 156 with --enable-features=WebMCP, driven as a browser agent does (Playwright's
page.webmcp): off until the person turns it on; then exactly the tools the model sees, with its
schemas; pure functions answer, reading the person's data and acting ask in the page; a denial is
an error result; a tool turned off is withdrawn; nothing reaches another origin. Without the
flag the page is as it was."""

import asyncio
import json

from botpsy_web import REPO_ROOT
from botpsy_web.app_page import open_app_with_model, send
from botpsy_web.content_policy import app_policy
from botpsy_web.site.build import with_webmcp_offer

from .conftest import ISOLATION_HEADERS, MODEL, run_async, scripted_worker_body, xml_call

OFFER = "#offer-webmcp"
STORED_NOTES = """() => new Promise((resolve, reject) => {
    const request = indexedDB.open('botpsy-agent');
    request.onerror = () => reject(request.error);
    request.onsuccess = () => {
        const all = request.result.transaction('records').objectStore('records').getAll();
        all.onsuccess = () => resolve(all.result.filter((r) => r.collection === 'notes')
                                                .map((r) => JSON.parse(r.json)));
    };
})"""


def text_of(result):
    return "\n".join(part["text"] for part in result["content"] if part["type"] == "text")


async def answer_dialog(page, tool, button):
    """Waits for the page's confirmation of `tool`, checks it says an outside assistant asked, clicks `button`."""
    dialog = page.get_by_role("dialog", name=f"Allow “{tool}”?")
    await dialog.wait_for()
    assert "outside assistant" in await dialog.inner_text()
    await dialog.get_by_role("button", name=button).click()


def test_an_outside_agent_gets_the_models_tools_only_when_allowed_and_only_through_the_gate(async_app):
    async def scenario():
        # A URL parameter never turns the offer on.
        async with async_app([], query="?offer-webmcp=1&webmcp=offer") as app:
            page = app.page
            assert app.response.headers["content-security-policy"] == app_policy(None)  # unchanged
            await app.load_model()
            assert await page.webmcp.tools() == []
            assert not await page.locator(OFFER).is_checked()

            await page.locator(OFFER).check()
            model_sees = {tool["name"]: tool for tool in await page.evaluate("botpsy.session.tools()") if tool["enabled"]}
            offered = await app.wait_until_offered(model_sees)
            for name, tool in offered.items():
                assert tool["description"] == model_sees[name]["description"]
                assert tool["inputSchema"] == model_sees[name]["parameters"]
            read_only = {name for name, tool in offered.items() if tool.get("annotations", {}).get("readOnly")}
            assert {"calculator", "notes_search", "files_read"} <= read_only
            assert not {"notes_create", "todo_add", "calendar_add_event"} & read_only

            # A pure function answers at once; its card says an outside agent asked.
            answer = await page.webmcp.call_tool("calculator", {"expression": "2 + 40"})
            assert "42" in text_of(answer) and not answer.get("isError")
            card = page.locator(".message.outside-call").last
            assert "outside assistant" in await card.inner_text()
            assert await card.locator(".tool-name").inner_text() == "calculator"
            assert not await page.get_by_role("dialog").is_visible()

            # Acting asks; nothing is stored until the person approves; what is stored is marked.
            creating = asyncio.ensure_future(page.webmcp.call_tool(
                "notes_create", {"title": "Dentist", "text": "Call on Friday"}))
            await page.get_by_role("dialog", name="Allow “notes_create”?").wait_for()
            assert await page.evaluate(STORED_NOTES) == []
            await answer_dialog(page, "notes_create", "Approve")
            created = await creating
            assert not created.get("isError"), created
            [note] = await page.evaluate(STORED_NOTES)
            assert note["title"] == "Dentist" and note["provenance"]["source"] == "an outside agent (WebMCP)"
            assert await page.locator(".message.outside-call").last.get_attribute("aria-label") == "An outside agent asked"

            # Reading the person's data asks too; what it reads back is marked as data.
            searching = asyncio.ensure_future(page.webmcp.call_tool("notes_search", {"query": "dentist"}))
            await answer_dialog(page, "notes_search", "Approve")
            found = text_of(await searching)
            assert "Call on Friday" in found and found.startswith("<<untrusted stored data that came from an outside agent")

            # A denial is an error result for the agent, and stores nothing.
            denied_call = asyncio.ensure_future(page.webmcp.call_tool("notes_create", {"title": "Spam", "text": "x"}))
            await answer_dialog(page, "notes_create", "Deny")
            denied = await denied_call
            assert denied["isError"] and "Denied" in text_of(denied)
            assert [n["title"] for n in await page.evaluate(STORED_NOTES)] == ["Dentist"]
            assert await page.locator(".message.outside-call .tool-card").last.get_attribute("data-status") == "denied"

            # Bad arguments are named, as for the model.
            invalid = await page.webmcp.call_tool("calculator", {"expr": "1"})
            assert invalid["isError"] and "missing required argument 'expression'" in text_of(invalid)

            # Turning a tool off withdraws it; turning the offer off withdraws them all.
            await page.locator("details.tool-list summary").click()
            await page.locator("#tool-toggles input[value='notes_create']").uncheck()
            await app.wait_until_offered(set(offered) - {"notes_create"})
            await page.locator(OFFER).uncheck()
            await app.wait_until_offered(set())
            assert app.foreign_requests() == [] and app.errors == []

    run_async(scenario)


def test_a_site_owner_turns_it_on_for_visitors_who_can_turn_it_off(async_app):
    page_bytes = with_webmcp_offer((REPO_ROOT / "index.html").read_bytes())

    async def scenario():
        async with async_app([], page_bytes=page_bytes) as app:
            await app.load_model()
            assert await app.page.locator(OFFER).is_checked()
            offered = await app.wait_until_offered(
                [tool["name"] for tool in await app.page.evaluate("botpsy.session.tools()") if tool["enabled"]])
            assert "calculator" in offered

            # Another script of the page registers a tool: the model gets it, the browser's agents
            # keep getting only BotPsy's own (what the page registered is the page's to offer).
            await app.page.evaluate("""() => document.modelContext.registerTool({name: 'weather_now',
                description: 'The weather here.', inputSchema: {type: 'object', properties: {}},
                annotations: {readOnlyHint: true}, execute: () => 'sunny'})""")
            await app.page.wait_for_function(
                "() => botpsy.session.tools().some((tool) => tool.name === 'weather_now' && tool.enabled)")
            assert set(await app.offered()) == set(offered) | {"weather_now"}  # its own registration, once
            await app.page.locator(OFFER).uncheck()
            await app.wait_until_offered({"weather_now"})
            stored = json.loads(await app.page.evaluate("localStorage.getItem('botpsy.settings.v2')"))
            assert stored["offerWebmcp"] is False  # remembered like the other settings
            assert app.errors == []

    run_async(scenario)


def test_without_webmcp_the_page_shows_no_setting_and_offers_nothing(browser, open_guarded_page, server,
                                                                     model_folder, agent_bundle):
    context, page, guard = open_guarded_page(browser, server)
    body = scripted_worker_body([{"match": "17%", "outputs": [xml_call("calculator", expression="0.17 * 2340"),
                                                                "It is 397.8."]}], model_folder)
    context.route("**/web/runtime/model-worker.js", lambda route: route.fulfill(
        status=200, body=body, content_type="text/javascript", headers=ISOLATION_HEADERS))
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text) if message.type in ("error", "warning") else None)
    page.set_default_timeout(120_000)
    open_app_with_model(page, server, MODEL)
    assert page.evaluate("'modelContext' in document || 'modelContext' in navigator") is False
    assert page.locator("#offer-webmcp-setting").is_hidden()
    send(page, "What is 17% of 2,340?")
    page.get_by_text("It is 397.8.").wait_for()
    assert page.locator(".message.outside-call").count() == 0
    assert problems == []
    context.close()
    guard.assert_clean()
