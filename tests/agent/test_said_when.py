"""The person's own words about when win over the moment the model wrote (said_when.py): for a
tool that declares which argument says when, the agent runs the call with what the person said.
The clock is Monday 7 December 2026, 10:00 in London."""

import datetime
import json

import pytest

from botpsy_agent.said_when import said_span, says_a_moment, when_phrases, with_the_persons_when
from botpsy_agent.tooling import ToolContext, tool
from botpsy_agent.tools.calendar_events import calendar_add_event
from botpsy_agent.tools.timezones import get_zone
from botpsy_agent.tools.todos import todo_add

from .conftest import builtin_tools_agent, run_turn, xml_call as call

LONDON = get_zone("Europe/London")
NOW = datetime.datetime(2026, 12, 7, 10, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("message, phrases", [
    ("Put lunch with Sam in my calendar on Friday at 1pm", ["friday at 1pm"]),
    ("Remind me to buy milk tomorrow morning at 8", ["tomorrow morning at 8"]),
    ("Remind me in two hours to take the laundry out", ["in two hours"]),
    ("Block out the whole of 24 December, it's Christmas Eve", ["24 december"]),
    ("Schedule a call with Priya tommorow at 10:30", ["tomorrow at 10:30"]),     # a day's name misspelt
    ("Lunch on Saturday, 1pm to 2:30pm", ["saturday 1pm", "2:30pm"]),
    ("Add sundae and money to the list, now", []),                               # near a day's name; now
    ("My car uses 6.4 litres per 100 km", []),
])
def test_the_phrases_of_a_message_that_say_when(message, phrases):
    assert when_phrases(message, LONDON, NOW) == phrases


@pytest.mark.parametrize("message, written, used", [
    # a day and a time: the person's words
    ("Put lunch with Sam in my calendar on Friday at 1pm", "2026-12-07T10:00", "friday at 1pm"),
    ("Remind me to buy milk tomorrow morning at 8", "tomorrow morning", "tomorrow morning at 8"),
    ("Remind me in two hours to take the laundry out", "", "in two hours"),
    # a day alone: the person's day, the model's time of day
    ("Dentist on friday", "2026-12-12T11:00", "2026-12-11T11:00"),
    ("remind me to renew my passport on friday", "friday 7 December 2026 10:00", "friday"),  # unreadable
    # a time alone: the model's day, the person's time of day
    ("Call the plumber at 4pm", "2026-12-09T10:00", "2026-12-09T16:00"),
])
def test_a_moment_the_person_did_not_say_gives_way_to_theirs(message, written, used):
    arguments, changes = with_the_persons_when(todo_add, {"text": "x", "due": written}, message, LONDON, NOW)
    assert arguments == {"text": "x", "due": used}
    assert changes["due"]["written"] == written and changes["due"]["used"] == used


@pytest.mark.parametrize("message, written", [
    ("Remind me to renew my passport on friday", "2026-12-11"),
    ("remind me on friday", "2026-12-11T09:00"),                 # the day said; the model's time stays
    ("Call the plumber at 4pm", "2026-12-09T16:00"),              # the time said; the model's day stays
    ("Lunch on Saturday, 1pm to 2:30pm", "2026-12-07T10:00"),    # two phrases: not for the agent to choose
    ("Add oat milk to my list", ""),                              # nothing said about when
])
def test_a_moment_that_agrees_with_the_person_or_nothing_said_leaves_the_call_as_written(message, written):
    arguments = {"text": "x", "due": written}
    assert with_the_persons_when(todo_add, arguments, message, LONDON, NOW) == (arguments, {})


def test_an_end_moves_with_its_start_and_keeps_its_length():
    arguments, changes = with_the_persons_when(
        calendar_add_event, {"title": "Lunch", "start": "2026-12-07T10:00", "end": "2026-12-07T11:30"},
        "Lunch with Sam on Friday at 1pm", LONDON, NOW)
    assert arguments["start"] == "friday at 1pm" and arguments["end"] == "2026-12-11T14:30+00:00"
    assert changes["end"] == {"written": "2026-12-07T11:30", "used": "2026-12-11T14:30+00:00"}


@pytest.mark.parametrize("message, span", [
    ("Lunch with Sam at Dishoom on Saturday, 1pm to 2:30pm. Add it please", ("saturday 1pm", "2:30pm", "2026-12-12T14:30")),
    ("Friday 2pm – 4pm call with the bank", ("friday 2pm", "4pm", "2026-12-11T16:00")),
    ("party tonight 11pm until 1am", ("tonight 11pm", "1am", "2026-12-08T01:00")),    # ends the next day
    ("meeting tomorrow from 9am until 11am", None),         # three phrases: not for the agent to piece together
    ("from 1pm to 2pm on Saturday", None),                  # read alone, its ends are days apart
    ("Lunch on Saturday at 1pm, and dinner at 7pm", None),  # two moments, not a span
])
def test_a_span_the_person_says(message, span):
    found = said_span(message, LONDON, NOW)
    assert (found and (found[0], found[1], found[2].strftime("%Y-%m-%dT%H:%M"))) == span


def test_a_span_the_person_said_gives_an_event_its_start_and_end():
    message = "Lunch with Sam at Dishoom on Saturday, 1pm to 2:30pm. Add it please"
    arguments, changes = with_the_persons_when(
        calendar_add_event, {"title": "Lunch", "start": "2026-12-07T10:00", "end": "2026-12-07T14:30"}, message,
        LONDON, NOW)
    assert arguments == {"title": "Lunch", "start": "saturday 1pm", "end": "2026-12-12T14:30+00:00"}
    assert changes["end"] == {"written": "2026-12-07T14:30", "used": "2026-12-12T14:30+00:00", "said": "2:30pm"}
    agreeing = {"title": "Lunch", "start": "2026-12-12T13:00", "end": "2026-12-12T14:30"}
    assert with_the_persons_when(calendar_add_event, agreeing, message, LONDON, NOW) == (agreeing, {})
    # the end is said even where the model wrote none
    assert with_the_persons_when(calendar_add_event, {"title": "Lunch", "start": "saturday 1pm"}, message,
                                 LONDON, NOW)[0]["end"] == "2026-12-12T14:30+00:00"


@pytest.mark.parametrize("message, moment", [
    ("anything on tomorrow evening?", True),
    ("Block out the whole of 24 December", True),
    ("Anything I need to get done today?", True),
    ("Write a haiku about a frosty winter morning.", False),   # a part of the day alone is no moment
    ("What's 15% of 80?", False),
])
def test_a_message_that_says_a_moment(message, moment):
    assert says_a_moment(message, LONDON, NOW) is moment


def test_only_a_tool_that_declares_its_when_argument_is_changed():
    @tool(side_effects=True)
    async def book_table(start: str) -> str:
        """Book a table.

        Args:
            start: When.
        """
        return start
    arguments = {"start": "2026-12-07T10:00"}
    assert with_the_persons_when(book_table, arguments, "a table on Friday at 1pm", LONDON, NOW) == (arguments, {})


def test_said_when_must_name_a_text_argument():
    with pytest.raises(TypeError, match="said_when names 'when'"):
        @tool(said_when="when")
        async def remind(at: str) -> str:
            """Remind.

            Args:
                at: When.
            """
            return at


def make_agent(outputs, **options):
    context = ToolContext(now=lambda: NOW)
    context.settings.timezone = "Europe/London"
    return builtin_tools_agent(outputs, context, **options)


run = run_turn


def approve(agent):
    async def confirm(request):
        approve.requests.append(request)
        return {"approved": True}
    approve.requests = []
    agent.confirm = confirm


def test_the_call_runs_and_is_confirmed_with_the_persons_when():
    agent = make_agent([call("calendar_add_event", title="Lunch with Sam", start="2026-12-07T10:00"), "Added."])
    approve(agent)
    events = run(agent, "Put lunch with Sam in my calendar on Friday at 1pm")
    [event] = [event for event in events if event["type"] == "tool_call"]
    assert event["arguments"]["start"] == "friday at 1pm"
    assert event["said_when"] == {"start": {"written": "2026-12-07T10:00", "used": "friday at 1pm",
                                            "said": "friday at 1pm"}}
    assert approve.requests[0]["arguments"]["start"] == "friday at 1pm"     # the person approves what runs
    [result] = [event for event in events if event["type"] == "tool_result"]
    assert json.loads(result["result"])["start"] == "2026-12-11T13:00+00:00"
    # the model reads its own call as it wrote it, and the result of the call that ran
    assert "2026-12-07T10:00" in agent.model.prompts[1] and "2026-12-11T13:00" in agent.model.prompts[1]


def test_with_the_option_off_the_call_runs_as_written():
    agent = make_agent([call("todo_add", text="milk", due="tomorrow morning"), "Added."], person_says_when=False)
    approve(agent)
    events = run(agent, "Remind me to buy milk tomorrow morning at 8")
    [result] = [event for event in events if event["type"] == "tool_result"]
    assert json.loads(result["result"])["due"] == "2026-12-08T09:00+00:00"


def test_a_tools_result_never_says_when():
    # the note's "friday at 1pm" comes back in a tool's result: not the person speaking
    agent = make_agent([call("notes_create", title="Lunch", text="lunch with Sam on friday at 1pm"),
                        call("notes_search", query="lunch"),
                        call("todo_add", text="lunch", due="2026-12-09T12:00"), "Added."])
    approve(agent)
    events = run(agent, "Save a note about the lunch and put it on my todos")
    assert "friday at 1pm" in [event for event in events if event["type"] == "tool_result"][1]["result"]
    [todo] = [event for event in events if event["type"] == "tool_call" and event["name"] == "todo_add"]
    assert todo["arguments"]["due"] == "2026-12-09T12:00" and "said_when" not in todo
