"""`botpsy-web eval DIR`: BFCL cases through the agent's prompts, the real browser runtime and
the agent's parser, scored; the JSON summary has the documented shape, the per-case outputs
file holds what each engine was given and wrote, and browser fp32 gives PyTorch's tokens."""

import json
import subprocess
import sys

from tokenizers import Tokenizer

from botpsy_eval.data import load_cases
from botpsy_eval.pipeline import chat_format_for, render_case
from botpsy_eval.resume import weights_identity

CATEGORIES = ("simple_python", "live_irrelevance")


def run_eval(*args):
    return subprocess.run([sys.executable, "-m", "botpsy_web.cli", "eval", *map(str, args)],
                          capture_output=True, text=True, timeout=1800)


def test_tiny_qwen_runs_end_to_end_in_the_browser_and_matches_pytorch(exported_model, tmp_path):
    folder = exported_model("tiny-qwen3.5")  # Qwen3.5's XML tool calls, as a BotPsy folder
    outputs = tmp_path / "outputs.jsonl"
    result = run_eval(folder, "--dtype", "fp32", "--categories", ",".join(CATEGORIES), "--limit", 3,
                      "--max-tokens", 12, "--tool-calls", "free,constrained", "--reference", "pytorch", "--torch-threads", 1,
                      "--outputs", outputs, "--json", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Single-turn AST accuracy" in result.stdout and "simple_python" in result.stdout

    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["model"] == folder.name
    assert summary["cases"] == {"simple_python": 3, "live_irrelevance": 3}
    browser = summary["accuracy"]["browser"]["fp32"]
    assert set(browser) == {"free", "constrained"}  # grammar-constrained calls: the runtime's tool-call-grammar
    for scores in (browser["free"], browser["constrained"], summary["accuracy"]["pytorch"]["free"]):
        assert set(scores) == {*CATEGORIES, "overall"}
        assert all(0.0 <= value <= 1.0 for value in scores.values())
    assert set(summary["unparsed_calls"]) == {"browser", "pytorch"}
    assert isinstance(summary["unparsed_calls"]["browser"]["fp32"]["free"], int)
    assert summary["failed_generations"] == {"browser": {"fp32": {"free": 0, "constrained": 0}}, "pytorch": {"free": 0}}
    assert summary["seconds"] > 0
    assert summary["fp32_vs_pytorch"] == {"compared": 6, "same_tokens": 6, "differing": []}
    assert summary["same_tokens"]["baseline"] == "pytorch free" and summary["same_tokens"]["browser"]["fp32"]["free"] == 6
    assert summary["accuracy"]["browser"]["fp32"]["free"] == summary["accuracy"]["pytorch"]["free"]

    runs = [json.loads(line) for line in outputs.read_text().splitlines()]
    assert sorted((run["engine"], run["tool_calls"], run["case_id"]) for run in runs) == sorted(
        (engine, mode, case.id) for engine, mode in (("browser", "free"), ("browser", "constrained"), ("pytorch", "free"))
        for case in load_cases(CATEGORIES, 3))
    chat_format = chat_format_for(folder)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    cases = {case.id: case for case in load_cases(CATEGORIES, 3)}
    for run in runs:
        case = cases[run["case_id"]]
        assert run["prompt"] == render_case(chat_format, case).prompt
        if case.functions:
            assert "<tools>" in run["prompt"]
            assert all(function["name"].replace(".", "_") in run["prompt"] for function in case.functions)
        # the runtime was given exactly that text: its token count is the prompt's
        assert run["prompt_tokens"] == len(tokenizer.encode(run["prompt"], add_special_tokens=False).ids)
        assert 1 <= run["output_tokens"] == len(run["token_ids"]) <= 12
        assert isinstance(run["correct"], bool) and isinstance(run["output"], str)
        assert (run["model"], run["backend"]) == (folder.name, "wasm" if run["engine"] == "browser" else "cpu")
        assert run["weights"] == weights_identity(folder, (run["engine"], run["dtype"], run["tool_calls"]))

    # the same command again with --resume: every run is read back (no browser, no PyTorch), same scores
    resumed = run_eval(folder, "--dtype", "fp32", "--categories", ",".join(CATEGORIES), "--limit", 3,
                       "--max-tokens", 12, "--tool-calls", "free,constrained", "--reference", "pytorch",
                       "--outputs", outputs, "--resume", "--json", "--no-progress")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "18 stored run(s); 0 generation(s) to go" in resumed.stderr
    again = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert again["reused_runs"] == 18 and again["browser_runtime"] == {}
    assert again["accuracy"] == summary["accuracy"] and again["fp32_vs_pytorch"] == summary["fp32_vs_pytorch"]
    assert len(outputs.read_text().splitlines()) == 18  # nothing written twice


def test_a_folder_without_manifest_is_named(tmp_path):
    result = run_eval(tmp_path)
    assert result.returncode == 2 and "has no manifest.json" in result.stderr


def test_bad_options_are_named_with_what_would_be_right(exported_model, tmp_path):
    folder = exported_model("tiny-qwen3.5")
    unknown_category = run_eval(folder, "--categories", "simple_java")
    assert unknown_category.returncode == 2 and "'simple_java'" in unknown_category.stderr
    assert "live_relevance" in unknown_category.stderr
    unknown_dtype = run_eval(folder, "--dtype", "int3")
    assert unknown_dtype.returncode == 2 and "'int3'" in unknown_dtype.stderr and "fp32" in unknown_dtype.stderr
    resume_without_file = run_eval(folder, "--resume")
    assert resume_without_file.returncode == 2 and "--outputs FILE" in resume_without_file.stderr
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text('{"case_id": "simple_python_0"}\n')
    overwrite = run_eval(folder, "--outputs", earlier)
    assert overwrite.returncode == 2 and "already holds runs: add --resume" in overwrite.stderr
    assert earlier.read_text() == '{"case_id": "simple_python_0"}\n'
    unknown_mode = run_eval(folder, "--tool-calls", "loose")
    assert unknown_mode.returncode == 2 and "free" in unknown_mode.stderr and "constrained" in unknown_mode.stderr


def test_ctrl_c_keeps_the_finished_cases_and_resume_goes_on_from_them(exported_model, tmp_path):
    """Ctrl-C in a terminal (SIGINT to the whole process group, the browser's driver included)."""
    import os
    import signal
    import time

    folder = exported_model("tiny-qwen3.5")
    outputs = tmp_path / "outputs.jsonl"
    args = [folder, "--dtype", "fp32", "--categories", ",".join(CATEGORIES), "--limit", 3, "--max-tokens", 12,
            "--outputs", outputs, "--no-progress"]
    process = subprocess.Popen([sys.executable, "-m", "botpsy_web.cli", "eval", *map(str, args)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 600
    while not (outputs.exists() and outputs.read_text().count("\n") >= 2) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    assert f"stopped: every finished case is in {outputs}; the same command with --resume" in stderr
    kept = outputs.read_text().count("\n")
    assert 2 <= kept < 6

    resumed = run_eval(*args, "--resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{kept} stored run(s); {6 - kept} generation(s) to go" in resumed.stderr
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary["reused_runs"] == kept and summary["cases"] == {"simple_python": 3, "live_irrelevance": 3}
    assert sorted(json.loads(line)["case_id"] for line in outputs.read_text().splitlines()) == sorted(
        case.id for case in load_cases(CATEGORIES, 3))
