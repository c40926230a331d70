"""The bench's native engine (bench_native.py): the folder's dtype in Python onnxruntime, the
ceiling our runtime is measured against. Its cached greedy decoding must be the model's real
greedy decoding, and the bench's JSON must carry our runtime as a share of it."""

import json
import subprocess
import sys

import numpy as np
import pytest

from botpsy_web import bench_report
from botpsy_web.bench import SCENARIOS
from botpsy_web.bench_native import NativeEngine


# Every scenario but memory, which waits 60 s whatever the model (bench.py's docstring says why).
ALL_BUT_MEMORY = [name for name in SCENARIOS if name != "memory"]


@pytest.fixture(scope="module")
def tiny_folder(exported_model):
    return exported_model("tiny-qwen3.5")


def test_native_engine_decodes_with_its_cache_what_the_whole_sequence_decodes_without(tiny_folder):
    engine = NativeEngine(tiny_folder)
    loaded = engine.call("load", {"dtype": "q8", "threads": 2})
    assert loaded["threads"] == 2 and loaded["loadMs"] > 0
    prompt = [1000, 2000, 3000, 4000, 5000, 6000, 7000]

    run = engine.generate(prompt, 6)

    assert len(run["tokens"]) == 6 and run["promptTokens"] == len(prompt)
    assert 0 < run["ttftMs"] <= run["totalMs"]
    # Each token again, from an empty cache with the whole sequence so far in one call.
    sequence = list(prompt)
    for token in run["tokens"]:
        logits, _ = engine.step(sequence, engine.empty_cache(), processed=0)
        assert int(np.argmax(logits)) == token
        sequence.append(token)


def test_native_engine_answers_the_bench_page_calls_the_scenarios_make(tiny_folder):
    engine = NativeEngine(tiny_folder)
    engine.call("clearCache", "/models/x/", {})
    assert engine.call("load", {"dtype": "fp32", "threads": 1})["dtype"] == "fp32"
    engine.call("startMemory")
    assert engine.call("memoryResult") is None
    engine.call("unload")
    with pytest.raises(RuntimeError, match="not loaded"):
        engine.generate([1, 2, 3], 2)
    with pytest.raises(ValueError, match="no dtype q2"):
        engine.call("load", {"dtype": "q2", "threads": 1})


def test_ratios_are_ours_as_a_share_of_native():
    engines = {"botpsy": {"prefill_tok_s_1024": 100.0, "prefill_tok_s_128": 150.0, "decode_tok_s": 14.0,
                          "decode_tok_s_one_per_call": 12.0, "decode_tok_s_after_1024": 13.0},
               "native": {"prefill_tok_s_1024": 400.0, "prefill_tok_s_128": 200.0, "decode_tok_s": 20.0,
                          "decode_tok_s_after_1024": 26.0}}
    ratios = bench_report.backend_ratios(engines)
    assert ratios["prefill_vs_native"] == pytest.approx(0.25)
    assert ratios["prefill_128_vs_native"] == pytest.approx(0.75)
    assert ratios["decode_vs_native"] == pytest.approx(0.7)
    assert ratios["decode_one_per_call_vs_native"] == pytest.approx(0.6)
    assert ratios["decode_after_1024_vs_native"] == pytest.approx(0.5)
    assert bench_report.backend_ratios({"botpsy": engines["botpsy"]})["prefill_vs_native"] is None


def test_one_bench_run_measures_ours_and_native_and_reports_the_shares(tiny_folder):
    result = subprocess.run(
        [sys.executable, "-m", "botpsy_web.cli", "bench", str(tiny_folder), "--engines", "botpsy,native",
         "--backends", "wasm", "--dtype", "q8", "--repeats", "1", "--scenarios", ",".join(ALL_BUT_MEMORY), "--json"],
        capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    engines = report["backends"]["wasm"]["engines"]
    for engine in ("botpsy", "native"):
        for key in ("prefill_tok_s_128", "prefill_tok_s_1024", "decode_tok_s", "decode_tok_s_after_1024"):
            assert engines[engine][key] > 0, (engine, key)
    assert engines["native"]["threads"] == engines["botpsy"]["threads"]
    assert report["ratios"]["prefill_vs_native"] == pytest.approx(
        engines["botpsy"]["prefill_tok_s_1024"] / engines["native"]["prefill_tok_s_1024"])
    assert report["ratios"]["decode_vs_native"] == pytest.approx(
        engines["botpsy"]["decode_tok_s"] / engines["native"]["decode_tok_s"])
    assert "prefill_vs_native" in result.stdout.splitlines()[-2]
    # the constrained scenario at the page's temperature: the same seeded tokens with or without every mask
    ours = engines["botpsy"]
    assert ours["constrained_same_tokens_sampled_every_mask"] is True
    for key in ("constrained_decode_tok_s_sampled", "constrained_decode_tok_s_sampled_every_mask",
                "constrained_free_decode_tok_s_sampled"):
        assert ours[key] > 0, key
