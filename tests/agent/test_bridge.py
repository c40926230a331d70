"""The bridge and the browser session under CPython, with a fake host in place of
the JavaScript module: the same JSON-only calls the page answers."""

import asyncio
import json
from pathlib import Path

import pytest

from botpsy_agent import bridge
from botpsy_agent.browser_session import create_session
from botpsy_agent.storage import MemoryStore

from .conftest import xml_call

TEMPLATE = (Path(__file__).parent / "templates" / "qwen35_style.jinja").read_text()


class FakeHost:
    """Answers like web/agent/agent-host.js: JSON text in, JSON text out, some calls async."""

    def __init__(self, outputs, approve=True):
        self.outputs = list(outputs)
        self.approve = approve
        self.records = {}
        self.events, self.confirmations, self.generations, self.fetched, self.host_calls = [], [], [], [], []
        self.closed = []

    def generate_start(self, prompt, options_json):  # answers at once, like the JS host
        self.generations.append((prompt, json.loads(options_json)))
        text = self.outputs.pop(0)
        self.pending = iter([text[i:i + 3] for i in range(0, len(text), 3)])
        return len(self.generations)

    async def generate_next(self, handle):
        return next(self.pending, None)

    async def generate_close(self, handle):
        self.closed.append(handle)

    async def store_get(self, collection, key):
        return self.records.get((collection, key))

    async def store_put(self, collection, key, value_json):
        self.records[(collection, key)] = value_json

    async def store_delete(self, collection, key):
        return self.records.pop((collection, key), None) is not None

    async def store_items(self, collection):
        return "[" + ",".join(f"[{json.dumps(k)},{v}]" for (c, k), v in sorted(self.records.items())
                              if c == collection) + "]"

    async def confirm(self, request_json):
        self.confirmations.append(json.loads(request_json))
        return json.dumps({"approved": self.approve, "arguments": None})

    async def fetch_text(self, url):
        self.fetched.append(url)
        return "<html>page</html>"

    async def call_host_tool(self, name, arguments_json):
        self.host_calls.append((name, json.loads(arguments_json)))
        return json.dumps({"ok": True})

    def emit(self, event_json):
        self.events.append(json.loads(event_json))


def session_for(host, **kwargs):
    manifest = {"tool_call_format": "qwen3_coder_xml", "chat_template_supports_tools": True}
    return create_session(host, json.dumps({"chat_template": TEMPLATE}), json.dumps(manifest), **kwargs)


def test_bridge_store_behaves_like_the_memory_store():
    async def scenario(store):
        await store.put("notes", "b", {"x": [1, 2]})
        await store.put("notes", "a", "text")
        observed = [await store.get("notes", "b"), await store.get("notes", "zzz"),
                    await store.items("notes"), await store.delete("notes", "a"),
                    await store.delete("notes", "a"), await store.items("notes")]
        with pytest.raises(ValueError, match="JSON"):
            await store.put("notes", "c", {1, 2})
        return observed
    assert asyncio.run(scenario(bridge.BridgeStore(FakeHost([])))) == asyncio.run(scenario(MemoryStore()))


def test_connect_needs_a_host_outside_the_browser():
    assert not bridge.IN_BROWSER
    with pytest.raises(RuntimeError, match="fake host"):
        bridge.connect()


def test_session_runs_a_turn_and_emits_json_events():
    host = FakeHost([xml_call("calculator", expression="6*7"), "It is 42."])
    session = session_for(host)
    final = json.loads(asyncio.run(session.run_turn("6 times 7?")))
    assert final["text"] == "It is 42."
    results = [event for event in host.events if event["type"] == "tool_result"]
    assert results[0]["name"] == "calculator" and "42" in results[0]["result"]
    options = host.generations[0][1]
    assert {key: options[key] for key in ("maxTokens", "temperature")} == {"maxTokens": 1024, "temperature": 0.6}
    # the model's tool calls are constrained to the offered tools by default
    assert [processor["name"] for processor in options["logitsProcessors"]] == ["tool-call-grammar"]


def test_settings_reach_the_agent_and_bad_ones_are_named():
    host = FakeHost(["hi"])
    session = session_for(host)
    session.set_settings(json.dumps({"thinking": True, "allowNetwork": True, "temperature": 0.1,
                                     "enabledTools": ["calculator"], "timezone": "Europe/Paris"}))
    settings = session.agent.context.settings
    assert settings.thinking and settings.allow_network and settings.timezone == "Europe/Paris"
    assert session.agent.options.temperature == 0.1
    assert [t.name for t in session.agent.active_tools()] == ["calculator"]
    with pytest.raises(ValueError, match="thinkin"):
        session.set_settings(json.dumps({"thinkin": True}))


def test_host_tools_are_confirmed_unless_pre_approved():
    host = FakeHost([xml_call("send_sms", to="ann"), "sent", xml_call("light_on"), "on"])
    session = session_for(host, include_builtin_tools=False)
    session.register_host_tool(json.dumps({"name": "send_sms", "description": "Text someone.",
                                           "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
                                           "confirm": True}))
    session.register_host_tool(json.dumps({"name": "light_on", "description": "Lights on.", "confirm": False}))
    asyncio.run(session.run_turn("text ann"))
    asyncio.run(session.run_turn("light"))
    assert [c["name"] for c in host.confirmations] == ["send_sms"]
    assert host.host_calls == [("send_sms", {"to": "ann"}), ("light_on", {})]


def test_user_files_reach_the_file_tools():
    host = FakeHost([xml_call("files_read", name="todo.md"), "read"])
    session = session_for(host)
    asyncio.run(session.add_user_files(json.dumps([{"name": "todo.md", "size": 9, "type": "text/markdown",
                                                    "text": "- buy tea"}])))
    asyncio.run(session.run_turn("read my file"))
    [result] = [event for event in host.events if event["type"] == "tool_result"]
    assert result["ok"] and "buy tea" in result["result"] and result["untrusted"]


def test_network_is_off_until_enabled_and_then_each_fetch_is_confirmed():
    call = xml_call("fetch_url", url="http://127.0.0.1:9/x")
    host = FakeHost([call, "no", call, "yes"])
    session = session_for(host)
    asyncio.run(session.run_turn("fetch"))
    assert host.fetched == [] and host.confirmations == []
    session.set_settings(json.dumps({"allowNetwork": True}))
    asyncio.run(session.run_turn("fetch"))
    assert [c["name"] for c in host.confirmations] == ["fetch_url"] and host.fetched == ["http://127.0.0.1:9/x"]


def test_conversation_round_trips_through_json():
    host = FakeHost(["one", "two"])
    session = session_for(host)
    asyncio.run(session.run_turn("first"))
    exported = session.export_conversation()
    session.new_chat()
    session.restore_conversation(exported)
    asyncio.run(session.run_turn("second"))
    assert "first" in host.generations[-1][0] and "one" in host.generations[-1][0]
