"""The report's figures and --resume: a stored run stands while the task and the agent's first
prompt are the same, and is judged again with today's checks."""

import json
from dataclasses import asdict, replace
from pathlib import Path

from botpsy_agent.scripted_model import ScriptedModel
from botpsy_tasks.cpython import run_task_in_cpython
from botpsy_tasks.data import read_task_file
from botpsy_tasks.report import format_table, percentile, summarize
from botpsy_tasks.runner import EarlierTaskRuns, TaskResults, TaskSettings, make_run, todays_start

from .conftest import xml_call

TASKS = [
    {"id": "pct", "category": "calculator", "turns": ["What is 17% of 2,340?"], "checks": [{"answer_number": 397.8}]},
    {"id": "note", "category": "notes", "turns": ["Note: dentist on Friday"], "approve": ["notes_create"],
     "checks": [{"stored": "notes", "where": {"text": "dentist"}}]},
    {"id": "kelvin", "category": "units", "turns": ["72 °F in Celsius?", "and in Kelvin?"],
     "checks": [{"answer_number": 295.37}]},
]
SCRIPTS = {"pct": [xml_call("calculator", expression="0.17*2340"), "It is 397.8."],
           "note": [xml_call("notes_create", text="Dentist on Friday"), xml_call("todo_add", text="dentist"), "Saved."],
           "kelvin": ["22.2 °C", "About 300 K."]}


def scripted_runs(agent, task_file):
    tasks = read_task_file(task_file(*TASKS))
    return tasks, [make_run(task, run_task_in_cpython(agent, ScriptedModel(SCRIPTS[task.id]), task.data),
                            ("browser", "q8", "wasm"), "model", "weights", 0.0) for task in tasks]


def test_the_summary_counts_tasks_done_per_category_seconds_generations_and_failure_classes(agent, task_file):
    tasks, runs = scripted_runs(agent, task_file)
    results = TaskResults(TaskSettings(Path("model"), "q8"), "model", tasks, runs)
    summary = summarize(results, "records.jsonl")
    engine = summary["engines"]["browser q8"]
    assert summary["tasks"] == {"calculator": 1, "notes": 1, "units": 1}
    assert engine["done"] == {"calculator": 1, "notes": 0, "units": 0, "overall": 1}
    assert engine["rate"]["overall"] == 1 / 3
    assert engine["failures"] == {"unwanted_acting_call": 1, "wrong_number": 1}
    assert engine["unwanted_acting_calls"] == ["note"] and engine["not_done"] == ["note", "kelvin"]
    assert engine["generations_per_task"] == (2 + 3 + 2) / 3 and engine["confirmations_per_task"] == 2 / 3
    assert engine["median_single_turn_seconds"] is not None and engine["p90_seconds"] >= engine["median_seconds"]
    table = format_table(summary)
    assert "overall (3)" in table and "1/3 (33%)" in table and "acting calls not asked for in note" in table
    assert percentile([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], 0.9) == 9 and percentile([], 0.5) is None


def test_a_stored_run_stands_for_the_same_task_and_first_prompt_and_is_judged_with_todays_checks(
        agent, task_file, tmp_path):
    tasks, runs = scripted_runs(agent, task_file)
    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps({k: v for k, v in asdict(run).items() if k != "reused"}) + "\n"
                               for run in runs) + '{"half a line', encoding="utf-8")
    earlier = EarlierTaskRuns(records)
    kelvin, run = tasks[2], runs[2]
    assert not run.done
    stored = earlier.standing(run.key(), todays_start(agent, kelvin, 0.0))
    assert stored == json.loads(json.dumps(run.record))
    # a wider tolerance in the task's checks: the same record, judged again, now passes
    edited = read_task_file(task_file({**TASKS[2], "checks": [{"answer_number": 295.37, "tolerance": 5}]},
                                      name="edited.jsonl"))[0]
    assert edited.run_digest() == kelvin.run_digest()
    assert make_run(edited, stored, ("browser", "q8", "wasm"), "model", "weights", 0.0, reused=True).done
    # another system prompt: today's agent starts the task otherwise, so the run does not stand
    other = replace(agent, options=replace(agent.options, system_prompt="You are terse."))
    assert earlier.standing(run.key(), todays_start(other, kelvin, 0.0)) is None
    # another message is another task
    changed = read_task_file(task_file({**TASKS[2], "turns": ["72 °F in Celsius?", "and Kelvin?"]},
                                       name="changed.jsonl"))[0]
    assert changed.run_digest() != kelvin.run_digest()
