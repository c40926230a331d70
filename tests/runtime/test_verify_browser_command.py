"""`botpsy-web verify-browser DIR`: prints per-prompt agreement and, with --json, a last line
with backend, dtype, token_agreement and max_abs_logit_diff; bad folders are named."""

import json
import subprocess
import sys

import pytest


def run_command(*args):
    return subprocess.run([sys.executable, "-m", "botpsy_web.cli", "verify-browser", *map(str, args)],
                          capture_output=True, text=True, timeout=1200)


def test_fp32_on_wasm_agrees_on_every_token_and_prints_json(exported_model):
    folder = exported_model("tiny-qwen3.5")
    result = run_command(folder, "--json", "--tokens", "8")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["backend"] == "wasm"
    assert summary["dtype"] == "fp32"
    assert summary["token_agreement"] == 1.0
    assert 0 <= summary["max_abs_logit_diff"] < 1e-3
    assert "tokens agree" in result.stdout


def test_a_folder_without_manifest_is_an_error_that_says_so(tmp_path):
    result = run_command(tmp_path)
    assert result.returncode == 2
    assert "has no manifest.json" in result.stderr


def test_an_unknown_dtype_is_named_with_the_available_ones(exported_model):
    result = run_command(exported_model("tiny-qwen3.5"), "--dtype", "int3")
    assert result.returncode == 2
    assert "'int3'" in result.stderr and "fp32" in result.stderr
