"""BFCL v4 multi-turn cases in headless Chromium: the environment is built and run in Pyodide,
in the agent worker (web/agent/agent-worker.js `evalMultiTurnCase`, with the eval's bundle);
a model that writes the ground truth gets exactly the transcript CPython gets (results, state
diffs, prompts) and passes BFCL's checker; `botpsy-web eval` runs a multi_turn_base case end
to end on an exported folder, browser fp32 writes PyTorch's text at every step, and the
transcript file has the documented shape."""

import asyncio
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.scripted_model import ScriptedModel
from botpsy_eval.multi_turn.checker import score_transcript
from botpsy_eval.multi_turn.conversation import run_conversation
from botpsy_eval.multi_turn.data import load_category
from botpsy_eval.multi_turn.environment import Environment
from botpsy_web import REPO_ROOT

PAGE = "/tests/pages/agent-host.html"
TEMPLATE_URL = "/tests/agent/templates/qwen35_style.jinja"
SETTINGS = {"max_tokens": 64, "max_steps": 21, "tool_calls": "free"}
# A trading bot with MathAPI (mpmath is imported in Pyodide), and a long-context file system.
CASES = (("multi_turn_base", "multi_turn_base_144"), ("multi_turn_long_context", "multi_turn_long_context_3"))


def without_timings(value):
    if isinstance(value, dict):
        return {key: without_timings(item) for key, item in value.items() if key != "seconds"}
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value


def ground_truth_outputs(case) -> list[str]:
    environment = Environment(case.involved_classes, case.initial_config, case.long_context)
    outputs = []
    for calls in case.ground_truth:
        if calls:
            outputs.append("\n".join(
                "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"
                for name, arguments in map(environment.named_call, calls)))
        outputs.append("Done.")
    return outputs


def in_cpython_thread(coroutine):
    """Playwright's sync API keeps an event loop running in this thread: run ours in another."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(scope="module")
def eval_bundle():
    from botpsy_web.build_py import build_eval_bundle

    return build_eval_bundle()


def test_the_environment_runs_in_the_agent_workers_pyodide_exactly_as_in_cpython(
        browser, open_guarded_page, server, eval_bundle):
    cases = [next(case for case in load_category(category) if case.id == case_id) for category, case_id in CASES]
    scripts = [ground_truth_outputs(case) for case in cases]
    context, page, guard = open_guarded_page(browser)
    page.set_default_timeout(300_000)
    page.goto(server + PAGE)
    page.evaluate("options => window.startAgent(options)", {
        "outputs": [output for script in scripts for output in script], "templateUrl": TEMPLATE_URL,
        "toolCallFormat": "hermes_json", "storeName": "botpsy-test-multi-turn",
        "bundleUrl": "/static/build/" + eval_bundle.name})
    template = (REPO_ROOT / TEMPLATE_URL.lstrip("/")).read_text(encoding="utf-8")
    chat_format = ChatFormat(template, "hermes_json", True)
    for case, script in zip(cases, scripts):
        in_browser = page.evaluate(
            "([caseJson, settingsJson]) => window.agentTest.agent.worker.call('evalMultiTurnCase', {caseJson, settingsJson})",
            [json.dumps(case.for_the_agent()), json.dumps(SETTINGS)])
        in_cpython = in_cpython_thread(run_conversation(case.for_the_agent(), ScriptedModel(script), chat_format,
                                                        SETTINGS))
        assert without_timings(in_browser) == without_timings(in_cpython)
        calls = [call for turn in in_browser["turns"] for step in turn["steps"] for call in step["calls"]]
        assert calls and all(call["ran"] and not call["result"].startswith("Error") for call in calls)
        assert score_transcript(case, in_browser).correct
    changed = [call for turn in in_browser["turns"] for step in turn["steps"] for call in step["calls"]
               if call["name"] == "cp"]
    assert changed and all(call["state_diff"] for call in changed)  # the long-context file system changed
    context.close()
    guard.assert_clean()


def test_eval_runs_a_multi_turn_case_end_to_end_on_an_exported_folder(exported_model, tmp_path):
    folder = exported_model("tiny-qwen3.5")
    records = tmp_path / "records.jsonl"
    command = [sys.executable, "-m", "botpsy_web.cli", "eval", str(folder), "--dtype", "fp32", "--categories",
               "multi_turn_base", "--limit", "1", "--max-tokens", "8", "--tool-calls", "free,constrained",
               "--reference", "pytorch", "--torch-threads", "1", "--outputs", str(records), "--json", "--no-progress"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BFCL v4 multi-turn accuracy" in result.stdout
    summary = json.loads(result.stdout.strip().splitlines()[-1])["multi_turn"]
    assert summary["cases"] == {"multi_turn_base": 1} and summary["max_steps_per_turn"] == 21
    for scores in (*summary["accuracy"]["browser"]["fp32"].values(), summary["accuracy"]["pytorch"]["free"]):
        assert set(scores) == {"multi_turn_base", "overall"}
    assert summary["failed_cases"] == {"browser": {"fp32": {"free": 0, "constrained": 0}}, "pytorch": {"free": 0}}
    same = summary["same_outputs_as_pytorch"]  # every generation of the conversation: PyTorch's text
    assert same["compared"] == 1 and same["browser"]["fp32"]["free"] == 1
    runs = [json.loads(line) for line in records.read_text().splitlines()]
    assert sorted((run["engine"], run["tool_calls"]) for run in runs) == [
        ("browser", "constrained"), ("browser", "free"), ("pytorch", "free")]
    case = next(case for case in load_category("multi_turn_base") if case.id == runs[0]["case_id"])
    for run in runs:
        transcript = json.loads(open(run["transcript"], encoding="utf-8").read())
        assert transcript["case_id"] == case.id and transcript["tool_calls"] == run["tool_calls"]
        assert [turn["user"] for turn in transcript["turns"]] == [messages[-1]["content"] for messages in case.turns]
        assert all(1 <= len(turn["steps"]) <= 21 for turn in transcript["turns"])
        assert run["steps_per_turn"] == [len(turn["steps"]) for turn in transcript["turns"]]
        for turn in transcript["turns"]:
            for step in turn["steps"]:
                assert set(step) == {"step", "prompt_chars", "output", "calls", "seconds"}
        assert "<tools>" in transcript["first_prompt"] and all(name in transcript["first_prompt"]
                                                               for name in transcript["functions"])

    # --resume: the browser's and PyTorch's transcripts began with the prompt (and grammar) CPython
    # renders today, so every run is read back: no browser, no model, no new line
    before = records.read_text()
    again = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    resumed = json.loads(again.stdout.strip().splitlines()[-1])["multi_turn"]
    assert resumed["reused_runs"] == 3 and records.read_text() == before
    assert resumed["accuracy"] == summary["accuracy"]

    # --resume with one run missing: the browser opens for it alone and the other two are read back
    # (judged before the browser opened: the judging replays their conversations under asyncio)
    kept = [line for line in before.splitlines() if json.loads(line)["tool_calls"] != "constrained"]
    records.write_text("".join(line + "\n" for line in kept))
    third = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=1800)
    assert third.returncode == 0, third.stdout + third.stderr
    resumed = json.loads(third.stdout.strip().splitlines()[-1])["multi_turn"]
    assert resumed["reused_runs"] == 2 and resumed["accuracy"] == summary["accuracy"]
    def verdicts(text):
        return sorted((run["engine"], run["tool_calls"], run["case_id"], run["correct"], run["outputs_digest"])
                      for run in map(json.loads, text.splitlines()))
    assert verdicts(records.read_text()) == verdicts(before)
