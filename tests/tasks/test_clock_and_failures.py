"""The task's clock is fixed and reaches the tools; each task starts on an empty store; the failure
classes say why a task was not done."""

import json

from .conftest import xml_call


def test_the_tools_see_the_tasks_fixed_clock_and_time_zone(run_task):
    task = {"turns": ["What time is it, and add lunch on Friday at 1pm"], "now": "2026-03-27T23:30:00",
            "timezone": "Asia/Tokyo", "approve": ["calendar_add_event"],
            "checks": [{"stored": "events", "where": {"start": {"date": "2026-03-27", "time": "13:00"}}}]}
    outputs = [xml_call("current_time") + "\n" + xml_call("calendar_add_event", title="Lunch", start="friday 13:00"),
               "It is 23:30 on Friday; lunch is in."]
    outcome = run_task(task, outputs)
    time_call, event_call = outcome.record["turns"][0]["calls"]
    now = json.loads(time_call["result"])
    assert now["date"] == "2026-03-27" and now["time"].startswith("23:30"), now
    assert outcome.done, outcome.verdicts
    event = outcome.record["stored"]["events"][0]
    assert event["start"] == "2026-03-27T13:00:00+09:00" and event["created"] == "2026-03-27T14:30:00+00:00"
    assert (outcome.record["now"], outcome.record["timezone"]) == ("2026-03-27T23:30:00", "Asia/Tokyo")


def test_setup_data_is_written_by_the_tools_with_the_tasks_clock_and_tasks_do_not_share_a_store(run_task):
    task = {"turns": ["What is on my list?"], "now": "2026-12-07T10:00:00",
            "setup": {"todos": [{"text": "Pay rent", "due": "friday"}],
                      "files": [{"name": "budget.csv", "text": "rent,1200\n", "type": "text/csv"}]},
            "checks": [{"answer_contains": "rent"}]}
    outputs = [xml_call("todo_list") + "\n" + xml_call("files_search", query="rent"), "Pay rent (1200) by Friday."]
    first = run_task(task, outputs)
    listed, found = first.record["turns"][0]["calls"]
    assert json.loads(listed["result"]) == [{"id": "t1", "text": "Pay rent", "done": False,
                                             "due": "2026-12-11T09:00+00:00"}]
    assert "rent,1200" in found["result"] and first.done
    again = run_task({"turns": ["What is on my list?"], "checks": [{"answer_words": True}]},
                     [xml_call("todo_list"), "Nothing."])
    assert again.record["turns"][0]["calls"][0]["result"] == "[]" and again.record["stored"]["todos"] == []


def test_a_tool_that_is_not_offered_is_an_invented_tool(run_task):
    outputs = [xml_call("calculate_units", value="17"), "Sorry."]
    outcome = run_task({"turns": ["What is 17% of 2,340?"], "checks": [{"answer_number": 397.8}]}, outputs)
    call = outcome.record["turns"][0]["calls"][0]
    assert not call["offered"] and call["refused"] == "UnknownTool"
    assert outcome.failures == ["invented_tool", "wrong_number"]


def test_the_same_calls_written_again_are_a_repeated_call(run_task):
    call = xml_call("calculator", expression="17/100*2340")
    outcome = run_task({"turns": ["What is 17% of 2,340?"], "checks": [{"answer_number": 397.8}]},
                       [call, call, "I cannot say.", "I cannot say."])
    assert "repeated_call" in outcome.failures, outcome.record["turns"][0]
    ran = [each for each in outcome.record["turns"][0]["calls"] if each["ran"]]
    assert len(ran) == 1 and "397.8" in ran[0]["result"]


def test_a_failing_model_is_an_error_and_the_run_stops_there(run_task):
    outcome = run_task({"turns": ["one", "two"], "checks": [{"answer_words": True}]}, [])
    assert outcome.record["error"].startswith("turn 1: ") and len(outcome.record["turns"]) == 1
    assert outcome.failures == ["error"] and "the run failed" in outcome.verdicts[0]["why"]


def test_the_record_holds_every_prompt_and_generation(run_task):
    outputs = [xml_call("calculator", expression="0.17*2340"), "It is 397.8."]
    outcome = run_task({"turns": ["What is 17% of 2,340?"], "checks": [{"answer_number": 397.8}]}, outputs)
    generations = outcome.record["turns"][0]["generations"]
    assert [generation["output"] for generation in generations] == outputs
    assert "What is 17% of 2,340?" in generations[0]["prompt"] and "calculator" in generations[0]["prompt"]
    assert generations[1]["prompt"].startswith(generations[0]["prompt"]) and "397.8" in generations[1]["prompt"]
    assert outcome.record["generations"] == 2 and outcome.done
    assert outcome.record["tool_calls"] == "auto" and outcome.record["temperature"] == 0.0
