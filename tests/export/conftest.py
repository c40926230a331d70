"""Shared helpers for export tests: the exported folders come from tests/conftest.py's
`exported_model` fixture (dtypes fp32, q8, q4; BOTPSY_TEST_MODELS reuses them)."""

import json

import onnx
import pytest

BUILTIN_MODELS = ["tiny-qwen3.5", "smollm2-135m"]


def tiny_vision_language_model(seed: int):
    """tiny-qwen3.5's text model inside the layout BotPsy's release uses
    (Qwen3_5ForConditionalGeneration, with a toy vision tower), random weights from `seed`."""
    import torch
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    from botpsy_export.builtins import tiny_qwen_config

    torch.manual_seed(seed)
    config = Qwen3_5Config(
        text_config=tiny_qwen_config().to_dict(),
        vision_config={"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "out_hidden_size": 64, "patch_size": 4, "num_position_embeddings": 16},
        tie_word_embeddings=True,
    )
    return Qwen3_5ForConditionalGeneration(config).eval()


def read_manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def earlier_export(folder, note="earlier"):
    """A complete folder as an earlier export left it (a manifest and a graph it lists)."""
    (folder / "onnx").mkdir(parents=True)
    (folder / "onnx" / "model_q4.onnx").write_bytes(b"old graph")
    (folder / "manifest.json").write_text(json.dumps({
        "format_version": 1, "name": note, "architecture": "qwen3_5", "source": note,
        "files": {"onnx/model_q4.onnx": {"size": 9, "sha256": "0" * 64}},
        "dtypes": {"q4": {"file": "onnx/model_q4.onnx", "files": ["onnx/model_q4.onnx"]}},
    }))
    return folder


def load_graph_without_weights(path):
    return onnx.load(path, load_external_data=False)


@pytest.fixture(scope="session")
def tiny_qwen(exported_model):
    return exported_model("tiny-qwen3.5")


@pytest.fixture(scope="session")
def smollm2(exported_model):
    return exported_model("smollm2-135m")


@pytest.fixture(scope="session", params=BUILTIN_MODELS)
def any_model(request, exported_model):
    return exported_model(request.param)
