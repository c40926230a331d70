"""Shared helpers for export tests: the exported folders come from tests/conftest.py's
`exported_model` fixture (dtypes fp32, q8, q4; BOTPSY_TEST_MODELS reuses them)."""

import json

import onnx
import pytest

BUILTIN_MODELS = ["tiny-qwen3.5", "smollm2-135m"]


def read_manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


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
