"""Words stating numbers that neither the person nor a tool gave, in a turn where no tool ran, go
back to the model once: the same prompt, a call of a tool that only reads or computes required
(worked_numbers.py, AgentOptions.figures_from_tools).

The model is scripted; the built-in tools and the call grammar are the real ones."""

import datetime
import json

import pytest

from botpsy_agent.tooling import Tool, ToolContext
from botpsy_agent.worked_numbers import numbers_in, unsourced_numbers

from .conftest import builtin_tools_agent, callable_in, run_turn, xml_call as call

NOW_LINE = "Now: Monday 7 December 2026, 10:00."


@pytest.mark.parametrize("text, numbers", [
    ("What is 17% of 2,340?", [17.0, 2340.0]),
    ("$1,200.50 and 0.25", [1200.5, 0.25]),
    ("2026-12-12T11:00", [2026.0, 12.0, 12.0, 11.0, 0.0]),   # a date's and a time's parts
    ("at 2pm, not 10am", [2.0, 10.0]),
    ("1,2,3", [1.0]),                                      # not a thousands separator: the first only
])
def test_the_numbers_a_text_writes(text, numbers):
    assert [value for _, value, _ in numbers_in(text)] == numbers


@pytest.mark.parametrize("answer, sources, unsourced", [
    ("25% of 350 is 75.", ["What's 20% of 350?", "and 25%?"], ["75"]),
    ("72 °F is 22.2 °C, about 22.", ['{"result": 22.2222}', "Convert 72 °F"], []),   # written shorter
    ("It is 22.3 °C.", ['{"result": 22.2222}'], ["22.3"]),
    ("That's 15,000 a year.", ["15000"], []),                                          # separators
    ("You need 2 eggs and 3 cups.", [], []),                                            # single digits
    ("Use `n ** 0.5` in\n```python\nx = 1000\n```\n", [], []),                          # code
    ("Your meeting is on 12 December at 11:00.", ["2026-12-12T11:00"], []),
])
def test_unsourced_numbers(answer, sources, unsourced):
    assert unsourced_numbers(answer, sources) == unsourced


def make_agent(outputs, **options):
    return builtin_tools_agent(outputs, ToolContext(now=lambda: datetime.datetime(2026, 12, 7, 10, tzinfo=datetime.timezone.utc)),
                               **options)


run = run_turn


def of_type(events, kind):
    return [event for event in events if event["type"] == kind]


def acting_tools(agent) -> set[str]:
    return {tool.name for tool in agent.active_tools() if tool.side_effects}


def test_a_figure_the_model_worked_out_goes_back_for_a_call_that_only_computes_or_reads():
    agent = make_agent(["25% of 350 is 75.", call("calculator", expression="25% of 350"), "25% of 350 is 87.5."])
    events = run(agent, "What's 25% of 350?")

    assert of_type(events, "numbers_unsourced") == [{"type": "numbers_unsourced", "numbers": ["75"]}]
    assert agent.model.prompts[1] == agent.model.prompts[0]            # the same prompt, asked again
    required = callable_in(agent.model.options[1])
    assert "calculator" in required and not required & acting_tools(agent)
    assert agent.model.options[1]["logitsProcessors"] != agent.model.options[0]["logitsProcessors"]
    [result] = of_type(events, "tool_result")
    assert result["name"] == "calculator" and json.loads(result["result"])["result"] == "87.5"
    assert events[-1]["text"] == "25% of 350 is 87.5." and events[-1]["numbers_sent_back"] == ["75"]
    # the withdrawn words are not in the conversation: the model reads its call and the result
    assert "is 75." not in agent.model.prompts[2]
    # and answers from it in words: one call for the figure, not a new round of calls
    assert agent.model.options[2]["logitsProcessors"] == agent.logits_processors(
        agent.model.prompts[2], first_step=False, mode="none")


def test_a_follow_up_is_checked_against_this_turns_results_not_the_last_turns():
    # "And in Los Angeles?" answered with Tokyo's time from the turn before
    agent = make_agent([call("current_time", timezone="Tokyo"), "It is 19:00 in Tokyo.",
                        "It is 19:00 in Los Angeles.", call("current_time", timezone="Los Angeles"),
                        "It is 02:00 in Los Angeles."])
    first = run(agent, "What time is it in Tokyo?")
    assert not of_type(first, "numbers_unsourced")
    events = run(agent, "And in Los Angeles?")
    assert of_type(events, "numbers_unsourced")[0]["numbers"] == ["19"]
    assert [event["name"] for event in of_type(events, "tool_result")] == ["current_time"]


def test_numbers_the_person_gave_or_a_tool_returned_are_kept():
    agent = make_agent(["The bay number was 42."], now_line=False)
    run(agent, "Make a note in my head: parked on level 3, bay 42")
    assert len(agent.model.prompts) == 1

    agent = make_agent([call("calculator", expression="1250 * 12"), "1,250 × 12 is 15,000."])
    events = run(agent, "What's 1,250 × 12?")
    assert not of_type(events, "numbers_unsourced") and events[-1]["text"] == "1,250 × 12 is 15,000."


def test_words_after_a_tool_ran_are_not_checked():
    # the model's own sum of a result is left alone: a tool ran, and a retry could undo a right answer
    agent = make_agent([call("calculator", expression="84.50 * 15%"), "The tip is $12.68; $97.18 in all."])
    events = run(agent, "What's a 15% tip on $84.50, and the total?")
    assert not of_type(events, "numbers_unsourced") and len(agent.model.prompts) == 2


def test_once_a_turn_the_words_of_the_retry_stand():
    # a model that takes no grammar (the PyTorch reference) may answer in words again
    agent = make_agent(["It is 75.", "It is still 75."])
    events = run(agent, "What's 25% of 350?")
    assert len(of_type(events, "numbers_unsourced")) == 1
    assert events[-1]["text"] == "It is still 75." and len(agent.model.prompts) == 2


def test_words_after_an_invented_tool_are_checked_too():
    agent = make_agent([call("calculate_tax", amount="$4,250"), "That is 4,250 × 12 = 50,000 a year.",
                        call("calculator", expression="4250 * 12"), "That is $51,000 a year."])
    events = run(agent, "I earn $4,250 a month. How much is that over a year?")
    assert of_type(events, "answer_from_results") and of_type(events, "numbers_unsourced")[0]["numbers"] == ["12", "50,000"]
    assert [event["name"] for event in of_type(events, "tool_result")] == ["calculator"]
    assert events[-1]["text"] == "That is $51,000 a year." and "answered_without_tools" not in events[-1]


def test_a_routed_first_step_is_asked_for_a_call_of_its_routed_tools_that_only_read():
    agent = make_agent(["You have 12 todos.", call("todo_list"), "You have no todos."])
    run(agent, "how many todos do I have?")
    required = callable_in(agent.model.options[1])
    assert "todo_list" in required and "todo_add" not in required and "convert_units" not in required


@pytest.mark.parametrize("options", [{"figures_from_tools": False}, {"tool_calls": "none"}])
def test_the_check_is_off_with_the_option_or_without_calls(options):
    agent = make_agent(["25% of 350 is 75."], **options)
    events = run(agent, "What's 25% of 350?")
    assert events[-1]["text"] == "25% of 350 is 75." and not of_type(events, "numbers_unsourced")


def test_the_date_line_counts_as_given():
    agent = make_agent(["Today is Monday 7 December 2026."])
    run(agent, "What's the date?")
    assert NOW_LINE in agent.model.prompts[0] and len(agent.model.prompts) == 1


def test_a_follow_up_is_asked_for_a_call_of_the_tools_the_conversation_used():
    agent = make_agent([call("calculator", expression="20% of 350"), "20% of 350 is 70.",
                        "25% of 350 is 87.", call("calculator", expression="25% of 350"), "It is 87.5."])
    run(agent, "What's 20% of 350?")
    events = run(agent, "and 25%?")
    assert callable_in(agent.model.options[3]) == {"calculator"}
    assert events[-1]["text"] == "It is 87.5."


def test_after_an_invented_tool_the_tools_whose_arguments_it_wrote_are_asked_for():
    agent = make_agent([call("calculate_income", expression="4250 * 12", required=["expression"]),
                        "That is 50,000.", call("calculator", expression="4250 * 12"), "$51,000."])
    run(agent, "I earn $4,250 a month. How much is that over a year?")
    assert callable_in(agent.model.options[2]) == {"calculator"}


def test_a_host_pages_tool_is_never_asked_for_a_figure():
    # a check of the model's arithmetic is no reason to send the conversation to another page
    agent = make_agent(["It is 75.", call("calculator", expression="25% of 350"), "87.5"])
    agent.add_tool(Tool.from_json_schema("host_lookup", "Look something up on the host page.",
                                         {"type": "object", "properties": {"q": {"type": "string"}}},
                                         lambda arguments: "", sends_elsewhere=True))
    agent.context.settings.enabled_tools = list(agent.context.settings.enabled_tools) + ["host_lookup"]
    run(agent, "What's 25% of 350?")
    required = callable_in(agent.model.options[1])
    assert "calculator" in required and "host_lookup" not in required
    assert "host_lookup" in callable_in(agent.model.options[0])
