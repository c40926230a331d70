"""The browser session's newer duties under CPython (fake host, as in test_bridge.py):
the default tool set and enabledTools, the time zone setting, user files kept in the
store, and due reminders for the page."""

import asyncio
import datetime
import json

import pytest

from botpsy_agent.browser_session import builtin_tools
from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS
from botpsy_agent.tooling import Settings

from .test_bridge import FakeHost, session_for, xml_call


def listed(session):
    return {tool["name"]: tool for tool in json.loads(session.tool_names())}


def test_the_default_set_names_only_real_builtin_tools_and_is_smaller():
    names = [tool.name for tool in builtin_tools()]
    assert set(DEFAULT_ENABLED_TOOLS) <= set(names)
    assert len(DEFAULT_ENABLED_TOOLS) < len(names)


def test_the_model_sees_the_default_set_until_enabled_tools_is_set():
    host = FakeHost(["hi", "hi", "hi"])
    session = session_for(host)
    asyncio.run(session.run_turn("hello"))
    first_prompt = host.generations[0][0]
    assert "notes_create" in first_prompt and "outbox_send" not in first_prompt
    assert [t.name for t in session.agent.active_tools()] == [n for n in listed(session) if n in DEFAULT_ENABLED_TOOLS]
    tools = listed(session)
    assert tools["outbox_send"]["enabled"] is False and tools["outbox_send"]["enabledByDefault"] is False
    assert tools["calculator"]["enabled"] is True and tools["calculator"]["enabledByDefault"] is True

    session.set_settings(json.dumps({"enabledTools": ["outbox_send", "calculator"]}))
    asyncio.run(session.run_turn("again"))
    assert "outbox_send" in host.generations[1][0] and "notes_create" not in host.generations[1][0]
    assert {name for name, tool in listed(session).items() if tool["enabled"]} == {"outbox_send", "calculator"}

    session.set_settings(json.dumps({"enabledTools": None}))
    assert {t.name for t in session.agent.active_tools()} == set(DEFAULT_ENABLED_TOOLS)


def test_a_tool_outside_the_set_is_unknown_to_the_model_and_lists_the_valid_ones():
    host = FakeHost([xml_call("outbox_send", draft_id="m1"), "ok"])
    session = session_for(host)
    asyncio.run(session.run_turn("send it"))
    [call] = [event for event in host.events if event["type"] == "tool_call"]
    assert "UnknownTool" in call["error"] and "calculator" in call["error"]
    assert not [event for event in host.events if event["type"] == "tool_result"]
    assert host.confirmations == []


def test_host_tools_are_on_by_default_and_fetch_url_once_the_network_is_allowed():
    session = session_for(FakeHost([]))
    session.register_host_tool(json.dumps({"name": "light_on", "description": "Lights on.", "confirm": False}))
    active = {t.name for t in session.agent.active_tools()}
    assert "light_on" in active and "fetch_url" not in active
    session.set_settings(json.dumps({"allowNetwork": True}))
    assert "fetch_url" in {t.name for t in session.agent.active_tools()}


@pytest.mark.parametrize("value, message", [
    (["calculator", "no_such_tool"], "no_such_tool"),
    ("calculator", "list of tool names"),
    ([1], "list of tool names"),
])
def test_bad_enabled_tools_are_named_and_change_nothing(value, message):
    session = session_for(FakeHost([]))
    with pytest.raises(ValueError, match=message):
        session.set_settings(json.dumps({"enabledTools": value, "thinking": True}))
    assert session.agent.context.settings.enabled_tools is None
    assert not session.agent.context.settings.thinking


def test_timezone_is_a_real_setting_the_clock_tools_use():
    assert Settings().timezone is None and Settings(timezone="Asia/Tokyo").timezone == "Asia/Tokyo"
    host = FakeHost([xml_call("current_time"), "done"])
    session = session_for(host)
    session.set_settings(json.dumps({"timezone": "Asia/Tokyo"}))
    asyncio.run(session.run_turn("what time is it?"))
    [result] = [event for event in host.events if event["type"] == "tool_result"]
    assert result["ok"] and "+09:00" in result["result"]
    with pytest.raises(ValueError, match="timezone"):
        session.set_settings(json.dumps({"timezone": 9}))


def test_user_files_are_stored_so_a_new_session_on_the_same_store_reads_them():
    host = FakeHost([])
    first = session_for(host)
    asyncio.run(first.add_user_files(json.dumps([
        {"name": "plan.md", "size": 12, "type": "text/markdown", "text": "# Plan\nbuy tea"},
        {"name": "photo.png", "size": 2048, "type": "image/png", "text": None}])))
    assert set(first.agent.context.files) == {"plan.md", "photo.png"}

    # A reload: a fresh session (no ctx.files) over the same store.
    reloaded_host = FakeHost([xml_call("files_search", query="tea"), "found"])
    reloaded_host.records = host.records
    second = session_for(reloaded_host)
    assert second.agent.context.files == {}
    asyncio.run(second.run_turn("where is tea?"))
    [result] = [event for event in reloaded_host.events if event["type"] == "tool_result"]
    assert result["ok"] and "buy tea" in result["result"] and "plan.md" in result["result"]


def test_a_bad_user_file_is_named():
    session = session_for(FakeHost([]))
    with pytest.raises(ValueError, match="non-empty name"):
        asyncio.run(session.add_user_files(json.dumps([{"name": "  ", "text": "x"}])))


def test_due_reminders_come_back_as_json_at_the_given_time():
    host = FakeHost([xml_call("todo_add", text="call mum", due="2026-12-01T09:00"), "added"])
    session = session_for(host)
    session.set_settings(json.dumps({"timezone": "Europe/Paris"}))
    asyncio.run(session.run_turn("remind me to call mum"))
    assert json.loads(asyncio.run(session.due_reminders("2026-12-01T07:59:00Z"))) == []
    [reminder] = json.loads(asyncio.run(session.due_reminders("2026-12-01T08:00:00Z")))
    assert reminder["text"] == "call mum"
    assert datetime.datetime.fromisoformat(reminder["due"]) == datetime.datetime(2026, 12, 1, 8, tzinfo=datetime.UTC)
    with pytest.raises(ValueError, match="UTC offset"):
        asyncio.run(session.due_reminders("2026-12-01T08:00:00"))
    with pytest.raises(ValueError, match="ISO 8601"):
        asyncio.run(session.due_reminders("tomorrow"))
