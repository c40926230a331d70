"""When the fp32 graph does not reproduce PyTorch, the command says so and exits non-zero."""

import json

import botpsy_export.verify as verify
from botpsy_web.cli import main


def test_cli_exits_1_and_keeps_the_manifest_when_fp32_parity_fails(tmp_path, monkeypatch, capsys):
    # A tolerance no real graph meets stands in for a broken export.
    monkeypatch.setattr(verify, "FP32_MAX_ABS_DIFF", 0.0)
    monkeypatch.setattr(verify, "FP32_TORCH_NOISE_FACTOR", 0.0)
    out = tmp_path / "tiny"
    status = main(["export", "--model", "tiny-qwen3.5", "--out", str(out), "--dtype", "fp32", "--quiet"])
    captured = capsys.readouterr()
    assert status == 1
    assert "error: fp32 parity failed" in captured.err
    assert "FAILED" in captured.err  # the summary table is printed too
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["verification"]["fp32"]["passed"] is False
    assert manifest["verification"]["fp32"]["max_abs_logit_diff"] > 0


def test_cli_exits_1_when_an_appending_graph_disagrees_with_its_standard_graph(tmp_path, monkeypatch, capsys):
    import botpsy_export.verify_appending as verify_appending

    monkeypatch.setattr(verify_appending, "MAX_ABS_LOGIT_DIFF", -1.0)  # no graph meets it
    out = tmp_path / "tiny"
    status = main(["export", "--model", "tiny-qwen3.5", "--out", str(out), "--dtype", "fp32", "--quiet"])
    captured = capsys.readouterr()
    assert status == 1
    assert "error: the fp32 appending graph disagrees with the fp32 standard graph" in captured.err
    assert "fp32 FAILED" in captured.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["verification"]["fp32"]["passed"] is True
    assert manifest["verification"]["fp32"]["appending"]["passed"] is False
