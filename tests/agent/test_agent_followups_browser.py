"""The agent host's newer duties in real headless Chromium (scripted model, real worker,
real Pyodide, real IndexedDB): user files survive a reload, the time zone comes from
the browser (or the host's option), due reminders reach the page, and the model sees
the default tool set until the page picks its own."""

import json

import pytest

from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS

from .test_agent_host_browser import PAGE, TEMPLATE_URL, start, xml_call

BROWSER_ZONE = "Asia/Tokyo"


@pytest.fixture(scope="module")
def zoned_page(browser, open_guarded_page, agent_bundle, server):
    context, page, guard = open_guarded_page(browser, timezone_id=BROWSER_ZONE)
    page.set_default_timeout(120_000)
    yield page
    context.close()
    guard.assert_clean()


def tool_results(turn):
    return [event for event in turn["events"] if event["type"] == "tool_result"]


def test_a_dropped_file_is_still_readable_after_a_reload(zoned_page, server):
    store = "botpsy-test-files-reload"
    start(zoned_page, server, [], store)
    zoned_page.evaluate("""() => window.agentTest.agent.addUserFiles([
        new File(["# Trip\\nPack the blue umbrella\\n"], "trip.md", {type: "text/markdown"})])""")

    # A new page load: fresh worker and Pyodide, nothing in ctx.files, the same IndexedDB.
    start(zoned_page, server, [xml_call("files_read", name="trip.md"), "Pack the umbrella."], store)
    turn = zoned_page.evaluate("text => window.runTurn(text)", "what is in trip.md?")
    [result] = tool_results(turn)
    assert result["ok"] and result["untrusted"] and "blue umbrella" in result["result"]


def test_the_clock_uses_the_browsers_zone_unless_the_host_names_one(zoned_page, server):
    start(zoned_page, server, [xml_call("current_time"), "It is late."], "botpsy-test-zone")
    [result] = tool_results(zoned_page.evaluate("text => window.runTurn(text)", "what time is it?"))
    assert json.loads(result["result"])["timezone"] == BROWSER_ZONE

    chosen = zoned_page.evaluate("""async (templateUrl) => {
        const {AgentHost} = await import("/web/agent/agent-host.js");
        const {ModelClient} = await import("/web/runtime/model-client.js");
        const manifest = {tool_call_format: "qwen3_coder_xml", chat_template_supports_tools: true};
        const outputs = ["<tool_call>\\n<function=current_time>\\n</function>\\n</tool_call>", "Done."];
        const model = new ModelClient({workerUrl: new URL("/tests/pages/agent-scripted-worker.js", location.href)});
        await model.load("data:application/json," + encodeURIComponent(JSON.stringify({outputs, manifest})));
        const template = await (await fetch(templateUrl)).text();
        const events = [];
        const agent = await AgentHost.create({model, manifest, tokenizerConfig: {chat_template: template},
            storeName: "botpsy-test-zone-option", timezone: "America/Sao_Paulo", onEvent: (e) => events.push(e)});
        await agent.runTurn("time?");
        agent.terminate();
        return events.filter((e) => e.type === "tool_result");
    }""", TEMPLATE_URL)
    assert json.loads(chosen[0]["result"])["timezone"] == "America/Sao_Paulo"


def test_due_reminders_reach_the_page(zoned_page, server):
    start(zoned_page, server, [xml_call("todo_add", text="call the dentist", due="2026-12-01T09:00"), "Added."],
          "botpsy-test-reminders")
    zoned_page.evaluate("text => window.runTurn(text)", "remind me to call the dentist")
    # 09:00 in Tokyo is 00:00 UTC.
    found = zoned_page.evaluate("""async () => {
        const agent = window.agentTest.agent;
        return {
            before: await agent.dueReminders(new Date("2026-11-30T23:59:00Z")),
            after: await agent.dueReminders(new Date("2026-12-01T00:00:00Z")),
            bad: await agent.dueReminders("tomorrow").then(() => "accepted", (e) => e.message),
        };
    }""")
    assert found["before"] == []
    [reminder] = found["after"]
    assert reminder["text"] == "call the dentist" and reminder["due"].startswith("2026-12-01T09:00")
    assert "valid Date" in found["bad"]


def test_the_default_tool_set_and_enabled_tools(zoned_page, server):
    start(zoned_page, server, [], "botpsy-test-enabled-tools")
    found = zoned_page.evaluate("""async () => {
        const agent = window.agentTest.agent;
        const listed = agent.tools();
        const atStart = agent.enabledTools();
        agent.setSettings({enabledTools: ["calculator", "outbox_send"]});
        await agent.setSettings({});
        const chosen = agent.enabledTools();
        await agent.setSettings({enabledTools: null});
        const bad = await agent.setSettings({enabledTools: ["nope"]}).then(() => "accepted", (e) => e.message);
        return {count: listed.length, atStart, chosen, reset: agent.enabledTools(), bad,
                defaults: listed.filter((tool) => tool.enabledByDefault).map((tool) => tool.name)};
    }""")
    assert found["count"] == 29
    assert set(found["atStart"]) == set(DEFAULT_ENABLED_TOOLS) == set(found["defaults"]) == set(found["reset"])
    assert found["chosen"] == ["calculator", "outbox_send"]
    assert "nope" in found["bad"]
