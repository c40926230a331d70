"""The agent in real headless Chromium: the Python package loads into Pyodide from
local files only, and a multi-step tool episode runs through the real AgentHost,
the real ModelClient and worker protocol (a scripted worker replays the model's
outputs), with notes kept in the real IndexedDB across a page reload."""

import pytest

from .conftest import xml_call

TEMPLATE_URL = "/tests/agent/templates/qwen35_style.jinja"
PAGE = "/tests/pages/agent-host.html"


@pytest.fixture(scope="module")
def agent_page(browser, open_guarded_page, agent_bundle, server):
    context, page, guard = open_guarded_page(browser)
    page.set_default_timeout(120_000)
    yield page
    context.close()
    guard.assert_clean()


def start(page, server, outputs, store_name, approve=True):
    page.goto(server + PAGE)
    return page.evaluate("options => window.startAgent(options)", {
        "outputs": outputs, "templateUrl": TEMPLATE_URL, "storeName": store_name, "approve": approve})


def test_package_loads_into_pyodide_with_builtin_tools(agent_page, server):
    started = start(agent_page, server, [], "botpsy-test-load")
    assert {"notes_create", "notes_list", "calculator"} <= set(started["tools"])
    print(f"\nAgentHost.create (Pyodide + bundle + IndexedDB): {started['createMs']:.0f} ms; "
          f"main-thread long tasks: {len(started['longTasks'])}, longest {max(started['longTasks'], default=0):.0f} ms, "
          f"total {sum(started['longTasks']):.0f} ms")


def test_multi_step_episode_persists_notes_across_a_reload(agent_page, server):
    store = "botpsy-test-episode"
    outputs = [
        "I will save it.</think>\n\n" + xml_call("notes_create", text="Buy oat milk", title="Shopping"),
        "Saved. Let me check.</think>\n\n" + xml_call("notes_list"),
        "Done.</think>\n\nI saved your note \"Shopping\".",
    ]
    start(agent_page, server, outputs, store)
    turn = agent_page.evaluate("text => window.runTurn(text)", "Remember: buy oat milk")
    kinds = [event["type"] for event in turn["events"]]
    assert turn["final"] == {"type": "final", "text": 'I saved your note "Shopping".', "steps": 3}
    assert {"thinking", "tool_call_delta", "tool_call", "confirmation", "tool_result"} <= set(kinds)
    assert [c["name"] for c in turn["confirmations"]] == ["notes_create"]
    results = [event for event in turn["events"] if event["type"] == "tool_result"]
    assert [r["name"] for r in results] == ["notes_create", "notes_list"] and all(r["ok"] for r in results)
    assert "Shopping" in results[1]["result"]
    print(f"\n3-step scripted turn: {turn['turnMs']:.0f} ms; main-thread long tasks: "
          f"{[round(ms) for ms in turn['longTasks']]}")

    # A new page load: a fresh Pyodide, the same IndexedDB database.
    start(agent_page, server, [xml_call("notes_search", query="milk"), "You have a Shopping note."], store)
    turn = agent_page.evaluate("text => window.runTurn(text)", "What did I want to buy?")
    [result] = [event for event in turn["events"] if event["type"] == "tool_result"]
    assert result["ok"] and "Buy oat milk" in result["result"]
    assert turn["confirmations"] == []


def test_denied_side_effect_changes_nothing_in_indexeddb(agent_page, server):
    store = "botpsy-test-denied"
    start(agent_page, server, [xml_call("notes_create", text="secret"), "Not saved.", xml_call("notes_list"), "None."],
          store, approve=False)
    first = agent_page.evaluate("text => window.runTurn(text)", "save secret")
    assert "Denied" in [e for e in first["events"] if e["type"] == "tool_result"][0]["result"]
    second = agent_page.evaluate("text => window.runTurn(text)", "list notes")
    assert [e for e in second["events"] if e["type"] == "tool_result"][0]["result"] == "[]"


def test_a_missing_bundle_is_a_clear_error(agent_page, server):
    agent_page.goto(server + PAGE)
    message = agent_page.evaluate("""options => window.startAgent(options).then(() => "no error", e => e.message)""", {
        "outputs": [], "templateUrl": TEMPLATE_URL, "storeName": "botpsy-test-missing",
        "bundleUrl": "/static/build/no-such-bundle.zip"})
    assert "agent's Python bundle is missing" in message and "botpsy-web build-py" in message


def test_conversation_export_new_chat_and_restore_through_the_worker(agent_page, server):
    start(agent_page, server, ["Hello!"], "botpsy-test-export")
    agent_page.evaluate("text => window.runTurn(text)", "hi")
    result = agent_page.evaluate("""async () => {
        const agent = window.agentTest.agent;
        const exported = agent.exportConversation();
        await agent.newChat();
        const cleared = agent.exportConversation().messages.length;
        await agent.restoreConversation(exported);
        const bad = await agent.restoreConversation({messages: []}).then(() => "accepted", e => e.message);
        return {exported, cleared, restored: agent.exportConversation(), bad};
    }""")
    exported = result["exported"]["messages"]
    assert [m["role"] for m in exported if not m.get("agent_note")] == ["user", "assistant"]  # beside the now line
    assert result["cleared"] == 0 and result["restored"] == result["exported"]
    assert "not an exported conversation" in result["bad"]


def test_untrusted_search_results_are_datamarked_in_pyodide(agent_page, server):
    """The bundled documents load from the zip, and their text reaches the model marked as data."""
    start(agent_page, server, [xml_call("search_docs", query="privacy"), "Found it."], "botpsy-test-search")
    turn = agent_page.evaluate("text => window.runTurn(text)", "search the docs for privacy")
    [result] = [event for event in turn["events"] if event["type"] == "tool_result"]
    assert result["ok"] and result["untrusted"]
    assert result["result"].startswith("<<untrusted the tool search_docs data ")
    assert "\n^ " in result["result"]


def test_tools_registered_in_a_row_never_vanish_while_the_worker_catches_up(agent_page, server):
    # A page registering its tools one after another, then choosing which the model sees (the
    # widget taking a page's WebMCP tools): the worker's reply to the first registration knows
    # nothing of the later ones, and the page's list must not go back to it meanwhile.
    start(agent_page, server, [], "botpsy-test-registrations")
    seen = agent_page.evaluate("""async () => {
        const {agent} = window.agentTest;
        const names = ["shop_a", "shop_b", "shop_c"];
        const snapshots = [];
        const pending = names.map((name) => agent.registerTool({name, description: name, confirm: false,
            sideEffects: false, handler: () => name}));
        pending.push(agent.setSettings({enabledTools: [...names, "calculator"]}));
        for (const reply of pending) {
            await reply;
            snapshots.push(agent.tools().filter((t) => names.includes(t.name) && t.enabled !== false).map((t) => t.name));
        }
        return {snapshots, final: agent.enabledTools()};
    }""")
    assert seen["snapshots"] == [["shop_a", "shop_b", "shop_c"]] * 4
    assert sorted(seen["final"]) == ["calculator", "shop_a", "shop_b", "shop_c"]
