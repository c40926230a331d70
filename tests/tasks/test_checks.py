"""Each kind of check passes when the run did what the task asks and fails when it did not,
judged on a real run of the page's agent (built-in tools, fresh store) with a scripted model."""

import pytest

from botpsy_tasks.numbers import numbers_in

from .conftest import xml_call

PERCENT = {"turns": ["What is 17% of 2,340?"]}


@pytest.mark.parametrize("written, value", [
    ("17% of 2,340 is 397.8.", 397.8), ("That comes to $1,200.50 in total", 1200.5), ("It is 397.80", 397.8),
    ("About 22.2 °C", 22.22), ("−3 degrees", -3), ("between 10-20", 20), ("1.5e3 metres", 1500),
])
def test_a_number_is_read_in_any_common_writing(written, value, run_task):
    outcome = run_task({**PERCENT, "checks": [{"answer_number": value}]}, [written])
    assert outcome.passed("answer_number") == [True], outcome.verdicts


def test_a_number_outside_the_tolerance_fails_and_says_which_numbers_it_read(run_task):
    outcome = run_task({**PERCENT, "checks": [{"answer_number": 397.8, "tolerance": 0.01}]}, ["It is 398."])
    assert outcome.passed("answer_number") == [False]
    assert "numbers [398.0]" in outcome.verdicts[0]["why"] and outcome.failures == ["wrong_number"]
    assert numbers_in("1,2,3 and 2,340") == [1, 2, 3, 2340]


def test_contains_takes_alternatives_ignores_case_and_lacks_fails_on_any_of_its_texts(run_task):
    checks = [{"answer_contains": ["celsius", "°C"]}, {"answer_contains": "kelvin"},
              {"answer_lacks": ["I can't", "sorry"]}, {"answer_lacks": "Sorry"}]
    outcome = run_task({**PERCENT, "checks": checks}, ["Sorry, that is 22.2 Celsius."])
    assert [verdict["passed"] for verdict in outcome.verdicts[:4]] == [True, False, False, False]
    assert outcome.failures == ["wrong_words"]


def test_answer_words_fails_on_an_empty_answer(run_task):
    outcome = run_task({**PERCENT, "checks": [{"answer_words": True}]}, [""])
    assert outcome.passed("answer_words") == [False] and outcome.failures == ["no_final_words"]


def test_called_matches_a_call_that_ran_with_matching_arguments(run_task):
    outputs = [xml_call("calculator", expression="0.17 * 2340"), "It is 397.8."]
    checks = [{"called": "calculator"}, {"called": "calculator", "with": {"expression": "2340"}},
              {"called": "calculator", "with": {"expression": ["2,340", "2 340"]}}, {"called": "convert_units"}]
    outcome = run_task({**PERCENT, "checks": checks}, outputs)
    assert outcome.passed("called") == [True, True, False, False]
    assert "calls: calculator" in outcome.verdicts[3]["why"]
    assert set(outcome.failures) == {"wrong_arguments", "wrong_tool"}
    call = outcome.record["turns"][0]["calls"][0]
    assert call["ran"] and call["ok"] and "397.8" in call["result"] and not call["acting"]


def test_no_call_at_all_is_its_own_failure_class(run_task):
    outcome = run_task({**PERCENT, "checks": [{"called": "calculator"}]}, ["I think it is about 400."])
    assert outcome.passed("called") == [False] and outcome.failures == ["no_call"]


def test_not_called_counts_calls_that_never_ran(run_task):
    outputs = [xml_call("calculator", expression="17/100*2340"), xml_call("notes_search", query="percent"),
               "It is 397.8."]
    outcome = run_task({**PERCENT, "checks": [{"not_called": ["notes_search"]}, {"not_called": "todo_list"}]},
                       outputs)
    assert outcome.passed("not_called") == [False, True] and outcome.failures == ["wrong_tool"]


def test_an_acting_call_the_task_did_not_expect_fails_even_when_the_person_denied_it(run_task):
    outputs = [xml_call("notes_create", text="17% of 2,340"), "I could not save it. It is 397.8."]
    # a request, not a question: a question's first step may not call a tool that acts (questions.py)
    outcome = run_task({"turns": ["Work out 17% of 2,340."], "checks": [{"answer_number": 397.8}]}, outputs)
    call = outcome.record["turns"][0]["calls"][0]
    assert call["acting"] and call["asked"] and call["approved"] is False and not call["ran"]
    assert call["refused"] == "Denied" and outcome.record["stored"]["notes"] == []
    assert outcome.passed("answer_number") == [True] and outcome.passed("acting_calls") == [False]
    assert outcome.failures == ["unwanted_acting_call"] and outcome.record["confirmations"] == 1


def test_approved_calls_run_and_asked_checks_the_gate_asked(run_task):
    task = {"turns": ["Make a note: call the dentist on Friday"], "approve": ["notes_create"],
            "checks": [{"asked": "notes_create"}, {"asked": "todo_add"}, {"acting_calls": ["notes_create"]}]}
    outcome = run_task(task, [xml_call("notes_create", text="Call the dentist on Friday"), "Saved."])
    call = outcome.record["turns"][0]["calls"][0]
    assert call["approved"] is True and call["ran"] and call["ok"]
    assert outcome.passed("asked") == [True, False] and outcome.passed("acting_calls") == [True]
    assert outcome.failures == ["not_asked"]


def test_stored_reads_the_tasks_own_store_after_the_last_turn(run_task):
    task = {"turns": ["Remind me to buy milk tomorrow at 8", "and make a note that we are out of milk"],
            "approve": ["todo_add", "notes_create"],
            "setup": {"notes": [{"text": "Gym locker 118"}], "todos": [{"text": "old thing", "done": True}]},
            "checks": [
                {"stored": "todos", "where": {"text": "milk", "due": {"date": "2026-12-08", "time": "08:00"}}},
                {"stored": "todos", "where": {"text": "milk", "due": {"date": "2026-12-09"}}},
                {"stored": "todos", "where": {"done": True}, "count": 1},
                {"stored": "notes", "count": 2},
                {"stored": "notes", "where": {"text": "dentist"}, "exists": False},
                {"stored": "notes", "where": {"text": "milk"}, "exists": False},
                {"stored": "events", "where": {"title": {"absent": True}}, "exists": False}]}
    outputs = [xml_call("todo_add", text="Buy milk", due="tomorrow 8:00"), "Done.",
               xml_call("notes_create", text="We are out of milk"), "Noted."]
    outcome = run_task(task, outputs)
    assert outcome.passed("stored") == [True, False, True, True, True, False, True], outcome.verdicts
    assert "0 of 2 todos where" in outcome.verdicts[1]["why"]
    assert outcome.failures == ["wrong_stored_data"]
    assert [turn["answer"] for turn in outcome.record["turns"]] == ["Done.", "Noted."]


def test_answer_and_call_checks_can_look_at_one_turn(run_task):
    task = {"turns": ["Convert 72 °F to Celsius", "and in Kelvin?"],
            "checks": [{"answer_number": 22.22, "tolerance": 0.06, "turn": 1}, {"answer_number": 295.37},
                       {"called": "convert_units", "turn": 2}, {"not_called": "convert_units", "turn": 1}]}
    outputs = [xml_call("convert_units", value="72", from_unit="degF", to_unit="degC"), "That is 22.2 °C.",
               "That is 295.37 K."]
    outcome = run_task(task, outputs)
    assert [verdict["passed"] for verdict in outcome.verdicts[:4]] == [True, True, False, False]


def test_the_record_says_which_arguments_the_persons_words_about_when_replaced(run_task):
    task = {"turns": ["Remind me to buy milk tomorrow morning at 8"], "approve": ["todo_add"],
            "checks": [{"stored": "todos", "where": {"text": "milk", "due": {"date": "2026-12-08", "time": "08:00"}}}]}
    outcome = run_task(task, [xml_call("todo_add", text="Buy milk", due="tomorrow morning"), "Done."])
    call = outcome.record["turns"][0]["calls"][0]
    assert call["arguments"]["due"] == "tomorrow morning at 8"
    assert call["said_when"]["due"] == {"written": "tomorrow morning", "used": "tomorrow morning at 8",
                                        "said": "tomorrow morning at 8"}
    assert outcome.done
