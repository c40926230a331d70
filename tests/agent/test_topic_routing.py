"""A turn's first step may call only the tools of the topics the person's message names, and the
tools of no topic (topic_routing.py); a message naming no topic keeps every tool. Only the call
grammar changes: the prompt's tool list stays the same, and later steps may call any tool.

The model is scripted; the built-in tools and the grammar are the real ones."""


import pytest

from botpsy_agent.browser_session import builtin_tools
from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS
from botpsy_agent.topic_routing import TOPIC_TOOLS, names_a_conversion, route, topics_named_in

from .conftest import builtin_tools_agent, callable_in, run_turn, xml_call as call

DEFAULTS = list(DEFAULT_ENABLED_TOOLS)


@pytest.mark.parametrize("message, topics", [
    ("Jot down that the boiler was serviced today", ["notes"]),
    ("Could you check my diary for next Tuesday?", ["calendar"]),
    ("whats on my calender tomorrow", ["calendar"]),              # one letter wrong in a long word
    ("I have a dentist apointment on the 3rd, put it in", ["calendar"]),
    ("add oat milk to my to-do list", ["todos"]),
    ("Remind me to call Mum on Sunday", ["todos"]),
    ("what does the contract document say about pets?", ["files"]),
    ("How do I turn on dark mode in BotPsy?", ["docs"]),
    ("What's the time in Lagos?", ["time"]),
    ("Put the team meeting notes in a note", ["notes", "calendar"]),  # every topic named counts
    ("How many ounces is 250 grams?", ["units"]),
    ("Convert 30 psi to bar", ["units"]),
    ("What's 100 °C in kelvin?", ["units"]),
    ("What's 15% of 80?", []),
    ("Tell me a joke about penguins", []),
    ("Notiere bitte: Zahnarzt am Freitag", []),                   # words the lists do not cover
    ("I noted it down", []),                                      # a word containing a topic's word
])
def test_the_topics_a_message_names(message, topics):
    assert topics_named_in(message) == topics


@pytest.mark.parametrize("message, conversion", [
    ("How many kilometres is 26.2 miles?", True),
    ("i ran 10k this morning, about 6 miles? how many km exactly", True),
    ("How many US cups are in 1.5 litres?", True),
    ("My car uses 6.4 litres per 100 km", False),                 # two units, of two kinds
    ("I walked 5 miles", False),                                  # one unit
    ("Remind me in two hours and thirty minutes", False),         # time units say when, not what to convert
    ("Is a 2 TB drive bigger than 1800 GiB?", True),
])
def test_a_conversion_is_two_units_of_one_kind(message, conversion):
    assert names_a_conversion(message) is conversion


TODOS_ROUTED = {"calculator", "todo_add", "todo_list",  # the topic's tools and the tools of no topic
                "notes_search", "notes_list", "calendar_list_events", "files_list", "files_read", "files_search"}


def test_a_routed_step_may_call_its_topics_tools_the_tools_of_no_topic_and_any_read_of_the_persons_data():
    routing = route("add pay council tax to my todos", DEFAULTS)
    assert routing.restricted and routing.topics == ("todos",)
    assert set(routing.tools) == TODOS_ROUTED
    assert routing.topic_tools == ("calculator", "todo_add", "todo_list")


def test_a_message_naming_no_topic_keeps_every_tool():
    routing = route("What's a 15% tip on $84.50?", DEFAULTS)
    assert not routing.restricted and routing.tools == tuple(DEFAULTS)


def test_a_topic_none_of_whose_tools_is_offered_restricts_nothing():
    # python is a topic, but run_python is off by default: the message names no offered topic
    assert not route("Write a Python function that checks for primes", DEFAULTS).restricted
    # tools of no topic (a host page's, an eval's) are never removed
    routing = route("what's on my calendar?", ["calendar_list_events", "host_lookup", "get_weather"])
    assert routing.tools == ("calendar_list_events", "host_lookup", "get_weather")


def test_a_message_naming_no_topic_but_saying_when_is_routed_to_the_tools_of_its_when():
    # the agent passes the tools that take the moment the person says, when the message says one
    routing = route("Lunch with Sam at Dishoom on Saturday, 1pm to 2:30pm. Add it please", DEFAULTS,
                    ("calendar_add_event",))
    assert routing.restricted and routing.topics == ("calendar",)
    assert "notes_create" not in routing.tools and "calendar_add_event" in routing.tools
    assert "notes_search" in routing.tools                        # a read of the person's data, as ever
    # a topic the message names wins over its when
    assert route("Remind me to call Mum on Sunday", DEFAULTS, ("calendar_add_event",)).topics == ("todos",)


def test_every_builtin_tool_named_in_a_topic_exists():
    names = {tool.name for tool in builtin_tools()}
    assert {tool for tools in TOPIC_TOOLS.values() for tool in tools} <= names


def make_agent(outputs, **options):
    return builtin_tools_agent(outputs, **options)


run = run_turn


def test_the_first_steps_grammar_offers_the_named_topics_tools_and_later_steps_every_tool():
    agent = make_agent([call("todo_add", text="pay council tax"), "Added: pay council tax."])
    events = run(agent, "add pay council tax to my todos")

    first, second = agent.model.options
    assert callable_in(first) == TODOS_ROUTED
    assert callable_in(second) == set(DEFAULTS)
    final = events[-1]
    assert final["type"] == "final" and final["first_step_tools"]["topics"] == ["todos"]
    assert set(final["first_step_tools"]["tools"]) == TODOS_ROUTED


def test_routing_changes_the_grammar_but_never_the_prompt():
    routed, unrouted = make_agent(["Sure."]), make_agent(["Sure."], route_by_topic=False)
    run(routed, "what's on my calendar this week?")
    run(unrouted, "what's on my calendar this week?")
    assert routed.model.prompts == unrouted.model.prompts
    assert callable_in(unrouted.model.options[0]) == set(DEFAULTS)
    # a question, too: the calendar's own tool that acts is not offered either
    assert callable_in(routed.model.options[0]) == set(DEFAULTS) - {"current_time", "convert_units", "notes_create",
                                                                    "todo_add", "search_docs", "calendar_add_event"}


def test_an_unrouted_turn_says_nothing_about_routing():
    agent = make_agent(["Paris."])
    final = run(agent, "Tell me the capital of France.")[-1]
    assert "first_step_tools" not in final
    assert callable_in(agent.model.options[0]) == set(DEFAULTS)


def test_a_page_that_names_the_tool_to_call_is_not_routed():
    agent = make_agent([call("current_time"), "It is 10:00."], tool_calls="current_time")
    final = run(agent, "add milk to my todo list")[-1]
    assert "first_step_tools" not in final
    assert callable_in(agent.model.options[0]) == set(DEFAULTS)  # the grammar of a forced call, whole


def test_a_first_call_outside_the_named_topics_is_not_run_and_the_model_is_asked_for_a_call_of_them():
    # A Hermes call written without tags is free text to the grammar until an offered name ends, so
    # the model can still write any tool of the prompt: the loop holds such a call back.
    agent = make_agent([call("current_time", timezone="New York"),
                        call("convert_units", value=26.2, from_unit="mi", to_unit="km"),
                        "26.2 miles is about 42.16 km."])
    events = run(agent, "How many kilometres is 26.2 miles?")

    held = [event for event in events if event["type"] == "tool_call" and event["id"].endswith("_off_topic")]
    assert [event["name"] for event in held] == ["current_time"]
    assert "about units" in held[0]["error"] and "calculator, convert_units" in held[0]["error"]
    ran = [event["name"] for event in events if event["type"] == "tool_result"]
    assert ran == ["convert_units"]
    assert events[-1]["text"] == "26.2 miles is about 42.16 km."
    # asked again from the same prompt, a call of the routed tools required; the held call is not in it
    assert agent.model.prompts[1] == agent.model.prompts[0]
    retry = agent.model.options[1]["logitsProcessors"][0]
    assert callable_in(agent.model.options[1]) == {"calculator", "convert_units"}
    assert retry != agent.model.options[0]["logitsProcessors"][0]  # "required", not "auto"
    assert "current_time" not in agent.model.prompts[2].split("<|im_start|>user\nHow many")[1]


def test_a_first_call_of_the_named_topics_runs_as_written():
    agent = make_agent([call("convert_units", value=26.2, from_unit="mi", to_unit="km"), "About 42.16 km."])
    events = run(agent, "How many kilometres is 26.2 miles?")
    assert not [event for event in events if event["type"] == "tool_call" and event.get("error")]
    assert len(agent.model.prompts) == 2


def test_a_held_back_read_is_asked_again_as_a_read_of_the_named_topics():
    # a question stays a question: the topic's tools that act are not offered to the retry
    agent = make_agent([call("current_time", timezone="Tokyo"), call("calendar_list_events"),
                        "Nothing with the landlord this week."])
    events = run(agent, "When am I meeting the landlord?")
    held = next(event for event in events if event["type"] == "tool_call" and event["id"].endswith("_off_topic"))
    assert held["name"] == "current_time" and held["error"].endswith("call one of calculator, calendar_list_events")
    assert callable_in(agent.model.options[1]) == {"calculator", "calendar_list_events"}


def test_a_read_of_the_persons_data_is_never_held_back():
    # "put the plumber's number on my todo list": the number is in a note, so the first step reads the notes
    agent = make_agent([call("notes_search", query="plumber"), "I found no plumber in your notes."])
    events = run(agent, "put the plumber's number on my todo list")
    assert [event["name"] for event in events if event["type"] == "tool_result"] == ["notes_search"]
    assert not [event for event in events if event["type"] == "tool_call" and event.get("error")]


def test_a_step_with_one_call_of_the_named_topics_runs_every_call_as_written():
    agent = make_agent([call("current_time") + "\n" + call("calendar_add_event", title="Lunch", start="friday 13:00"),
                        "It is 10:00; lunch is in."])
    events = run(agent, "What time is it, and add lunch on Friday at 1pm")
    assert [event["name"] for event in events if event["type"] == "tool_call"] == ["current_time", "calendar_add_event"]
    assert not [event for event in events if event["type"] == "tool_call" and event.get("error")]


def test_a_held_back_call_that_acts_or_names_no_tool_is_asked_again_with_every_routed_tool():
    for held in (call("notes_create", text="pay council tax"), call("notes_add", text="pay council tax")):
        agent = make_agent([held, call("todo_add", text="pay council tax"), "Added."])
        run(agent, "add pay council tax to my todos")
        assert callable_in(agent.model.options[1]) == {"calculator", "todo_add", "todo_list"}


def test_the_warm_up_is_given_the_first_step_grammar_of_each_topic_a_message_may_name():
    agent = make_agent([])
    grammars = agent.routed_logits_processors()
    offered = {frozenset(callable_in({"logitsProcessors": processors})) for processors in grammars}
    assert len(offered) == len(grammars)  # distinct grammars only
    routed = {topic: frozenset(route(f"x {word}", DEFAULTS).tools)
              for topic, word in [("todos", "todos"), ("calendar", "calendar"), ("notes", "note"), ("time", "time")]}
    assert set(routed.values()) <= offered
    assert frozenset(DEFAULTS) not in offered  # the unrouted grammar is the warm-up's own
    # the grammar a routed turn's first step asks for is one of them, bit for bit
    first_step = make_agent(["Sure."])
    run(first_step, "add milk to my todos")
    assert first_step.model.options[0]["logitsProcessors"] in grammars


def test_a_turn_that_says_when_and_names_nothing_may_first_add_an_event_not_a_note():
    agent = make_agent([call("notes_create", text="Lunch with Sam on Saturday"),
                        call("calendar_add_event", title="Lunch with Sam", start="saturday 1pm"), "Added."],
                       now_line=False)
    events = run(agent, "Lunch with Sam at Dishoom on Saturday, 1pm to 2:30pm. Add it please")
    assert events[-1]["first_step_tools"]["topics"] == ["calendar"]
    held = next(event for event in events if event["type"] == "tool_call" and event["id"].endswith("_off_topic"))
    assert held["name"] == "notes_create"
    assert "calendar_add_event" in callable_in(agent.model.options[1])
    assert "todo_add" not in callable_in(agent.model.options[0])  # a to-do is named, not implied by a when


@pytest.mark.parametrize("message", ["Write a haiku about a frosty winter morning.", "Tell me a joke"])
def test_a_turn_saying_no_moment_and_naming_nothing_is_not_routed(message):
    agent = make_agent(["Here it is."])
    assert "first_step_tools" not in run(agent, message)[-1]


def test_the_warm_up_holds_the_first_step_grammar_of_a_message_that_only_says_when():
    agent = make_agent(["Nothing then."])
    grammars = agent.routed_logits_processors()
    run(agent, "anything on tomorrow evening?")
    assert agent.model.options[0]["logitsProcessors"] in grammars


QUESTION_ACTING = ("notes_create", "calendar_add_event", "todo_add")


def test_a_question_may_call_no_tool_that_changes_things_on_its_first_step():
    routing = route("how much flour goes in my pancake recipe?", DEFAULTS, acting=QUESTION_ACTING)
    assert routing.restricted and routing.question and routing.topics == ()
    assert set(routing.tools) == set(DEFAULTS) - set(QUESTION_ACTING)
    named = route("what's in my notes about the boiler?", DEFAULTS, acting=QUESTION_ACTING)
    assert named.topics == ("notes",) and "notes_create" not in named.tools and "notes_search" in named.tools
    assert "notes_create" not in named.topic_tools       # nor may its retry act


def test_a_question_held_back_for_acting_is_asked_again_for_a_read():
    agent = make_agent([call("notes_create", text="In my pancake recipe, I use 1/2 cup of flour."),
                        call("notes_search", query="pancake"), "200 g of flour."])
    events = run(agent, "how much flour goes in my pancake recipe?")
    held = next(event for event in events if event["type"] == "tool_call" and event["id"].endswith("_off_topic"))
    assert held["name"] == "notes_create" and held["error"].startswith("not run: this is a question, and notes_create")
    assert not {"notes_create", "todo_add", "calendar_add_event"} & callable_in(agent.model.options[1])
    assert [event["name"] for event in events if event["type"] == "tool_result"] == ["notes_search"]
    assert events[-1]["first_step_tools"]["question"] is True


def test_a_question_naming_no_topic_answers_an_invented_tool_in_words_as_before():
    agent = make_agent([call("legs", expression="3 * 4"), "A spider has 8 legs."])
    events = run(agent, "How many legs does a spider have?")
    assert not [event for event in events if event["type"] == "tool_call" and event["id"].endswith("_off_topic")]
    assert events[-1]["text"] == "A spider has 8 legs." and events[-1]["answered_without_tools"] is True


@pytest.mark.parametrize("message", ["Could you block two hours on Wednesday for my tax return?",
                                     "Add milk. What else is on my todo list?", "add milk to my todos"])
def test_a_request_keeps_the_tools_that_act(message):
    agent = make_agent(["Done."])
    run(agent, message)
    assert {"calendar_add_event", "todo_add"} & callable_in(agent.model.options[0])


def test_the_warm_up_holds_the_first_step_grammar_of_a_question():
    agent = make_agent(["Paris."])
    grammars = agent.routed_logits_processors()
    run(agent, "What is the capital of France?")
    assert agent.model.options[0]["logitsProcessors"] in grammars


def test_no_grammar_is_warmed_for_turns_that_are_not_routed():
    assert make_agent([], route_by_topic=False).routed_logits_processors() == []
    assert make_agent([], tool_calls="none").routed_logits_processors() == []
