"""When the fp32 graph does not reproduce PyTorch, the command says so and exits non-zero. The
failed folder is kept beside --out for inspection (`.OUT.failed`, which no model listing
offers); --out itself, and an earlier export there, stay as they were."""

import json

import botpsy_export.verify as verify
from botpsy_web.cli import main
from botpsy_web.serve import list_models

from .conftest import earlier_export


def test_cli_exits_1_and_keeps_the_manifest_when_fp32_parity_fails(tmp_path, monkeypatch, capsys):
    # A tolerance no real graph meets stands in for a broken export.
    monkeypatch.setattr(verify, "FP32_MAX_ABS_DIFF", 0.0)
    monkeypatch.setattr(verify, "FP32_TORCH_NOISE_FACTOR", 0.0)
    out = earlier_export(tmp_path / "tiny")
    earlier = (out / "manifest.json").read_text()
    status = main(["export", "--model", "tiny-qwen3.5", "--out", str(out), "--dtype", "fp32", "--quiet"])
    captured = capsys.readouterr()
    assert status == 1
    assert "error: fp32 parity failed" in captured.err
    assert f"{out} was left as it was" in captured.err
    assert "FAILED" in captured.err  # the summary table is printed too
    assert (out / "manifest.json").read_text() == earlier
    assert [model["name"] for model in list_models(tmp_path)] == ["tiny"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tiny.failed", "tiny"]
    manifest = json.loads((tmp_path / ".tiny.failed" / "manifest.json").read_text())
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
    assert not out.exists()
    manifest = json.loads((tmp_path / ".tiny.failed" / "manifest.json").read_text())
    assert manifest["verification"]["fp32"]["passed"] is True
    assert manifest["verification"]["fp32"]["appending"]["passed"] is False
