"""`--out` only ever holds a complete, verified export: the export writes a hidden folder beside
it and replaces an earlier OUT at the very end. While it runs, after it fails or is killed, the
earlier OUT stays as it was and no model listing (`botpsy-web serve`/`demo`, `build-site`)
offers the half-written folder."""

import json
import os
import subprocess
import sys

import pytest

import botpsy_export.api as api
from botpsy_export.api import export_model
from botpsy_export.errors import OutFolderError
from botpsy_export.out_folder import partial_folder
from botpsy_web.cli import main
from botpsy_web.serve import list_models
from botpsy_web.site.build import model_folders

from .conftest import earlier_export


def listed(models_dir):
    return [model["name"] for model in list_models(models_dir)]


def pid_of_a_finished_process():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_an_export_writes_beside_out_and_replaces_the_earlier_folder_only_at_the_end(tmp_path, monkeypatch):
    out = earlier_export(tmp_path / "tiny")
    killed = partial_folder(out, pid_of_a_finished_process())  # what a killed export leaves
    earlier_export(killed, "killed")
    seen_during_export = {}
    real_export_fp32 = api.export_fp32

    def export_fp32_and_look_around(arch, path):
        seen_during_export["writes into"] = path.parents[1]
        seen_during_export["listed"] = listed(tmp_path)
        seen_during_export["built site takes"] = [p.name for p in model_folders((tmp_path,))]
        seen_during_export["out manifest"] = json.loads((out / "manifest.json").read_text())["name"]
        return real_export_fp32(arch, path)

    monkeypatch.setattr(api, "export_fp32", export_fp32_and_look_around)
    manifest = export_model("tiny-qwen3.5", out, dtypes="fp32", progress=False)

    assert seen_during_export == {"writes into": partial_folder(out, os.getpid()), "listed": ["tiny"],
                                  "built site takes": ["tiny"], "out manifest": "earlier"}
    assert json.loads((out / "manifest.json").read_text()) == manifest
    assert manifest["verification"]["fp32"]["passed"] is True
    # The new folder replaced the earlier one whole: nothing of the old export is mixed in.
    assert not (out / "onnx" / "model_q4.onnx").exists()
    assert (out / "onnx" / "model.onnx").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"]  # the killed run's folder is gone too


def test_an_interrupted_export_removes_its_folder_and_leaves_out_as_it_was(tmp_path, monkeypatch):
    out = earlier_export(tmp_path / "tiny")
    before = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file())
    # A run killed between its final renames left the folder it moved aside.
    earlier_export(tmp_path / f".tiny.replaced-{pid_of_a_finished_process()}")

    def interrupted(arch, path):
        path.write_bytes(b"half a graph")
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "export_fp32", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_model("tiny-qwen3.5", out, dtypes="fp32", verify=False, progress=False)
    assert sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"]
    assert listed(tmp_path) == ["tiny"]


def test_a_new_out_folder_appears_only_when_the_export_is_complete(tmp_path, monkeypatch):
    out = tmp_path / "models" / "tiny"  # its parent does not exist yet either

    def interrupted(arch, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "export_fp32", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_model("tiny-qwen3.5", out, dtypes="fp32", verify=False, progress=False)
    assert list((tmp_path / "models").iterdir()) == []


def test_listings_skip_partial_and_failed_folders_even_with_a_manifest(tmp_path):
    earlier_export(tmp_path / "tiny")
    earlier_export(tmp_path / ".tiny.partial-12345")
    earlier_export(tmp_path / ".tiny.failed")
    assert listed(tmp_path) == ["tiny"]
    assert [p.name for p in model_folders((tmp_path,))] == ["tiny"]


@pytest.mark.parametrize("make_out, complaint", [
    (lambda path: path.write_text("notes"), "is a file, not a folder"),
    (lambda path: (path.mkdir(), (path / "holiday.jpg").write_bytes(b"photo")),
     "exists and holds no manifest.json, so it is no exported folder an export may replace"),
])
def test_out_that_is_no_earlier_export_is_refused_before_any_work(tmp_path, capsys, make_out, complaint):
    out = tmp_path / "out"
    make_out(out)
    status = main(["export", "--model", "no-such-model-is-loaded", "--out", str(out), "--quiet"])
    error = capsys.readouterr().err
    assert status == 2
    assert f"error: --out {out} {complaint}" in error
    assert "no-such-model" not in error  # refused before the source was even looked at
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_empty_out_folder_is_used(tmp_path):
    from botpsy_export.out_folder import check_out_folder

    (tmp_path / "empty").mkdir()
    assert check_out_folder(tmp_path / "empty") == tmp_path / "empty"
    with pytest.raises(OutFolderError, match="is a file system root"):
        check_out_folder("/")
