"""`botpsy-web bench --scenarios`: a run measures the scenarios asked for (load always), says which
in its report, and refuses a name it does not know before starting a browser."""

import json
import subprocess
import sys

import pytest

from botpsy_web.bench import SCENARIOS, run_bench


@pytest.fixture(scope="module")
def tiny_folder(exported_model):
    return exported_model("tiny-qwen3.5")


def test_an_unknown_scenario_is_refused_with_the_known_ones(tiny_folder):
    with pytest.raises(ValueError, match="unknown scenario.*prefil;.*" + ", ".join(SCENARIOS)):
        run_bench(tiny_folder, engines=["botpsy"], scenarios=["prefil"])


def test_a_run_of_one_scenario_measures_it_and_nothing_else(tiny_folder):
    result = subprocess.run(
        [sys.executable, "-m", "botpsy_web.cli", "bench", str(tiny_folder), "--engines", "botpsy",
         "--backends", "wasm", "--dtype", "q8", "--repeats", "1", "--scenarios", "prefill", "--json"],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["scenarios"] == ["prefill"]
    figures = report["backends"]["wasm"]["engines"]["botpsy"]
    assert figures["load_cached_s"] > 0 and figures["prefill_tok_s_1024"] > 0
    assert not any(key.startswith(("decode_", "memory_", "agent_", "returning_visitor", "constrained_")) for key in figures), figures
    assert "scenarios: prefill" in result.stdout
