"""The person's own data does not flow to the host page without asking: a host page's tool
(its own, or one it registered through WebMCP) receives whatever the model writes in its
arguments, read-only or pre-approved. Once the conversation has read the person's notes or
files, such a call asks first (py/botpsy_agent/safety.py). The scripted model copies the note
it read into the host tool's arguments, as a model obeying an injection would."""

import asyncio
import json
from pathlib import Path

from botpsy_agent.agent import Agent
from botpsy_agent.bridge import host_tool
from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.scripted_model import ScriptedModel
from botpsy_agent.tooling import ToolContext, tool

from .conftest import xml_call

QWEN_FORMAT = ChatFormat((Path(__file__).parent / "templates" / "qwen35_style.jinja").read_text())
SECRET = "door code 4471"


@tool()
async def note_read(ctx: ToolContext, title: str) -> str:
    """Read one of the person's notes.

    Args:
        title: The note's title.
    """
    note = await ctx.store.get("notes", title)
    return note["text"] if note else "no such note"


@tool()
def add_numbers(a: int, b: int) -> int:
    """Add two numbers (reads nothing of the person's).

    Args:
        a: First.
        b: Second.
    """
    return a + b


class HostPage:
    """The page's side of the bridge: records what its tools received."""

    def __init__(self):
        self.received = []

    async def call_host_tool(self, name, arguments_json):
        self.received.append((name, json.loads(arguments_json)))
        return json.dumps({"results": []})


class Person:
    def __init__(self, approve):
        self.approve, self.requests = approve, []

    async def __call__(self, request):
        self.requests.append(request)
        return {"approved": self.approve}


def run(first_call, approve=False, pre_approved=False, turns=1):
    page, person = HostPage(), Person(approve)
    search = host_tool(page, {"name": "search_products", "description": "Search the shop.",
                              "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                                             "required": ["query"]},
                              "side_effects": False})
    outputs = []
    for _ in range(turns - 1):
        outputs += [first_call, "Done."]
    outputs += [first_call, xml_call("search_products", query=f"gifts {SECRET}"), "Done."]
    agent = Agent(model=ScriptedModel(outputs), chat_format=QWEN_FORMAT, confirm=person, context=ToolContext())
    for each in (note_read, add_numbers):
        agent.add_tool(each)
    agent.add_tool(search, pre_approved=pre_approved)
    asyncio.run(agent.context.store.put("notes", "home", {"text": SECRET}))

    async def turn(text):
        return [event async for event in agent.run_turn(text)]
    for index in range(turns):
        asyncio.run(turn(f"message {index}"))
    return page, person, agent


def test_a_read_only_host_tool_runs_at_once_when_nothing_personal_was_read():
    page, person, _ = run(xml_call("add_numbers", a=2, b=3))
    assert person.requests == [] and page.received == [("search_products", {"query": f"gifts {SECRET}"})]


def test_after_reading_a_note_a_read_only_host_tool_asks_and_a_denial_sends_nothing():
    page, person, _ = run(xml_call("note_read", title="home"))
    assert [request["name"] for request in person.requests] == ["search_products"]
    assert "your own data" in person.requests[0]["reason"]
    assert page.received == []


def test_pre_approval_does_not_cover_the_persons_data():
    page, person, _ = run(xml_call("note_read", title="home"), pre_approved=True)
    assert [request["name"] for request in person.requests] == ["search_products"] and page.received == []


def test_an_approved_call_goes_through_with_the_arguments_shown():
    page, person, _ = run(xml_call("note_read", title="home"), approve=True)
    assert person.requests[0]["arguments"] == {"query": f"gifts {SECRET}"}
    assert page.received == [("search_products", {"query": f"gifts {SECRET}"})]


def test_data_read_in_an_earlier_turn_still_counts_and_survives_a_restore():
    page, person, agent = run(xml_call("note_read", title="home"), turns=2)
    assert [request["name"] for request in person.requests] == ["search_products"] and page.received == []
    assert agent.conversation.holds_personal_data()
    agent.restore_conversation(agent.export_conversation())
    assert agent.conversation.holds_personal_data()


def test_a_missing_note_is_not_personal_data():
    """Reading nothing (the record is not there) leaves the conversation without the person's data."""
    page, person, _ = run(xml_call("note_read", title="nothing here"))
    assert person.requests == [] and len(page.received) == 1
