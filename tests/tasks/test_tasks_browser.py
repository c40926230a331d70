"""`botpsy-web tasks` end to end on the real tool-calling model: Qwen2.5-Coder-0.5B q8 (exported
once per test run, shared by the workers) in headless Chromium on WASM, the agent in the agent
worker's Pyodide with the real built-in tools on IndexedDB. Nothing is scripted, so what is
asserted is what the harness guarantees whatever the model writes: every generation and call is
recorded, calls really ran in the worker, the store read afterwards is the task's own, the
task's clock reached the tools, and --resume reads every run back without a browser."""

import json
import subprocess
import sys

TASKS = [
    {"id": "e2e-percent", "category": "calculator", "turns": ["What is 17% of 2,340?"],
     "checks": [{"answer_number": 397.8}]},
    {"id": "e2e-note", "category": "notes", "turns": ["Make a note: Mia's shoe size is 31"],
     "approve": ["notes_create"], "checks": [{"stored": "notes", "where": {"text": "31"}, "count": 1}]},
    {"id": "e2e-clock", "category": "time", "now": "2031-05-14T08:15:00", "timezone": "Asia/Tokyo",
     "setup": {"todos": [{"text": "Water the plants", "due": "tomorrow 9am"}]},
     "turns": ["What's on my todo list?"], "checks": [{"answer_contains": "plants"}]},
]


def test_the_tasks_run_in_the_browser_and_resume_reads_them_back(qwen_coder_folder, tmp_path):
    tasks, records = tmp_path / "tasks.jsonl", tmp_path / "records.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in TASKS), encoding="utf-8")
    command = [sys.executable, "-m", "botpsy_web.cli", "tasks", str(qwen_coder_folder), "--dtype", "q8",
               "--tasks", str(tasks), "--outputs", str(records), "--json", "--no-progress"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1500)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    engine = summary["engines"]["browser q8"]
    assert summary["tasks"] == {"calculator": 1, "notes": 1, "time": 1}
    assert summary["browser_runtime"]["browser q8"]["warmUpTokens"] > 1000  # the tools' prompt, prefilled once
    runs = {run["task_id"]: run for run in map(json.loads, records.read_text().splitlines())}
    assert set(runs) == {task["id"] for task in TASKS}
    assert engine["done"]["overall"] == sum(run["done"] for run in runs.values())
    for run in runs.values():
        record = run["record"]
        assert record["error"] is None and run["engine"] == "browser" and run["dtype"] == "q8"
        assert record["tool_calls"] == "auto" and record["temperature"] == 0.0
        turn = record["turns"][0]
        assert turn["generations"] and turn["final"]  # the turn ended with its final event
        assert "calculator" in turn["generations"][0]["prompt"]  # the page's tools, offered as the page offers them
        assert record["runtime"]["generations"] == len(turn["generations"])  # the runtime's count agrees
        for call in turn["calls"]:
            if call["ran"]:
                assert call["result"] is not None and call["offered"]
        assert run["done"] == all(verdict["passed"] for verdict in run["verdicts"])
    # the note task's store: exactly what its approved calls stored, with the task's clock
    note_calls = [call for call in runs["e2e-note"]["record"]["turns"][0]["calls"]
                  if call["name"] == "notes_create" and call["ran"] and call["ok"]]
    notes = runs["e2e-note"]["record"]["stored"]["notes"]
    assert len(notes) == len(note_calls)
    assert all(note["created"] == "2026-12-07T10:00:00+00:00" for note in notes)
    # the clock task's store: its setup only (fresh per task), due "tomorrow" from its own clock
    clock = runs["e2e-clock"]["record"]["stored"]
    assert clock["notes"] == [] and [todo["due"] for todo in clock["todos"]] == ["2031-05-15T09:00:00+09:00"]

    again = subprocess.run(command[:-1] + ["--resume"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout.strip().splitlines()[-1])["reused_runs"] == 3
    assert "loading q8" not in again.stderr and len(records.read_text().splitlines()) == 3
