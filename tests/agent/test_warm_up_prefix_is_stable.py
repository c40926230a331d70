"""The warm-up prefix (system prompt + the default tools) is stored as prompt state and reused on
later visits (web/runtime/state/prompt-state.js): it must not change by itself. Rendered at two
different moments, in both template styles, it is the same text, and it holds no date."""

import datetime

import pytest

from botpsy_agent import chat_format as chat_format_module
from botpsy_agent.agent import Agent
from botpsy_agent.browser_session import builtin_tools
from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS

MOMENTS = (datetime.datetime(2031, 5, 17, 9, 30), datetime.datetime(2032, 8, 9, 23, 59))


def agent_with_default_tools(chat_format):
    agent = Agent(model=None, chat_format=chat_format)
    for tool in builtin_tools():
        agent.add_tool(tool, enabled_by_default=tool.name in DEFAULT_ENABLED_TOOLS)
    return agent


def prefix_at(agent, moment, monkeypatch):
    class FrozenDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return moment if tz is None else moment.replace(tzinfo=tz)

    monkeypatch.setattr(chat_format_module.datetime, "datetime", FrozenDatetime)
    return agent.render_prompt_prefix()


@pytest.fixture(params=["qwen3.5-style", "smollm2"])
def chat_format(request, qwen_format, smollm2_template):
    if request.param == "smollm2":
        return ChatFormat(smollm2_template, "hermes_json", False)
    return qwen_format


def test_the_warm_up_prefix_is_the_same_at_any_moment_and_holds_no_date(chat_format, monkeypatch):
    agent = agent_with_default_tools(chat_format)
    first, second = (prefix_at(agent, moment, monkeypatch) for moment in MOMENTS)
    assert first == second
    assert len(agent.active_tools()) == len(DEFAULT_ENABLED_TOOLS)
    for moment in MOMENTS:
        assert moment.strftime("%Y-%m-%d") not in first and moment.strftime("%d %b %Y") not in first
