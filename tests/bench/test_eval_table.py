"""bench/eval_table.py: one table from several records files, multi-turn ones included."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def multi_turn_line(engine, dtype, mode, case_id, correct, seconds=10.0, calls=3):
    return {"engine": engine, "dtype": dtype, "tool_calls": mode, "category": case_id.rsplit("_", 1)[0],
            "case_id": case_id, "correct": correct, "error_type": "" if correct else "multi_turn:x", "reason": "",
            "no_call_turns_ok": True, "turns": 2, "turns_expected": 2, "steps_per_turn": [2, 3], "calls_ran": calls,
            "calls_refused": 0, "forced_quit": False, "failed": False, "seconds": seconds,
            "outputs_digest": f"{case_id}-digest",
            "transcript": f"runs-transcripts/{engine}-{dtype}-{mode}/{case_id}.json",
            "model": "m", "weights": "w", "backend": "wasm", "max_tokens": 128, "max_steps": 21}


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def table(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "eval_table.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT)


def test_multi_turn_columns_are_cut_to_the_cases_they_share_and_a_rerun_counts_once(tmp_path):
    browser = write(tmp_path / "runs.jsonl", [
        multi_turn_line("browser", "q8", "free", "multi_turn_base_1", True),
        multi_turn_line("browser", "q8", "free", "multi_turn_base_2", False),
        multi_turn_line("browser", "q8", "free", "multi_turn_base_2", True, seconds=5.0)])   # a rerun
    torch = write(tmp_path / "runs-pytorch.jsonl", [
        multi_turn_line("pytorch", "fp32", "free", f"multi_turn_base_{n}", n == 1) for n in (1, 2, 3)])

    refused = table(browser, torch)
    assert refused.returncode != 0 and "--common" in refused.stderr

    shared = table(browser, torch, "--common")
    assert shared.returncode == 0, shared.stderr
    assert "1 earlier line(s) of a case run again left out" in shared.stderr
    summary = json.loads(shared.stdout.splitlines()[-1])
    assert summary["cases"] == {"multi_turn_base": 2}
    assert summary["accuracy"]["browser"]["q8"]["free"]["overall"] == 1.0     # the rerun's verdict
    assert summary["accuracy"]["pytorch"]["free"]["overall"] == 0.5
    assert summary["seconds_per_engine"]["browser"]["q8"]["free"] == 15.0
    assert "multi_turn_base" in shared.stdout and "q8 free" in shared.stdout

    picked = table(browser, torch, "--columns", "pytorch-fp32-free")
    assert picked.returncode == 0, picked.stderr
    assert json.loads(picked.stdout.splitlines()[-1])["cases"] == {"multi_turn_base": 3}
    missing = table(browser, torch, "--columns", "browser-fp32-free")
    assert missing.returncode != 0
    assert ("no records for column(s) browser-fp32-free; the files hold: browser-q8-free, pytorch-fp32-free"
            in missing.stderr)


def test_single_turn_and_multi_turn_records_are_not_mixed_and_a_bad_line_is_named(tmp_path):
    torch = multi_turn_line("pytorch", "fp32", "free", "multi_turn_base_1", True)
    multi = write(tmp_path / "multi.jsonl", [torch])
    single_line = {"engine": "pytorch", "dtype": "fp32", "tool_calls": "free", "category": "simple_python",
                   "case_id": "simple_python_1", "prompt": "p", "output": "", "token_ids": [], "calls": [],
                   "unparsed": [], "correct": True,
                   "reason": "", "prompt_tokens": 10, "output_tokens": 2, "stop_reason": "eos", "seconds": 1.0}
    single = write(tmp_path / "single.jsonl", [single_line])
    mixed = table(multi, single)
    assert mixed.returncode != 0 and "mix single-turn and multi-turn" in mixed.stderr

    broken = write(tmp_path / "broken.jsonl", [torch, {"engine": "pytorch", "case_id": "x"}])
    bad = table(broken)
    assert bad.returncode != 0 and f"{broken} line 2 is not a record of botpsy-web eval" in bad.stderr
    assert "Traceback" not in bad.stderr
