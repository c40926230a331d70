"""Local Hugging Face folders export in both Qwen3.5 layouts: the text-only Qwen3_5ForCausalLM
and BotPsy's released vision-language Qwen3_5ForConditionalGeneration (its language model)."""

import json

import pytest

from botpsy_export.api import export_model
from botpsy_export.builtins import build_tiny_qwen

from .conftest import tiny_vision_language_model


@pytest.mark.parametrize("layout", ["causal_lm", "conditional_generation"])
def test_local_qwen_folder_exports_and_matches_pytorch(layout, tmp_path):
    text_model, tokenizer = build_tiny_qwen()
    model = text_model if layout == "causal_lm" else tiny_vision_language_model(seed=7)
    source = tmp_path / layout
    model.save_pretrained(source)
    tokenizer.save_pretrained(source)
    assert list(source.glob("*.safetensors")) and not list(source.glob("*.bin"))

    manifest = export_model(source, tmp_path / "out", dtypes="fp32", progress=False)

    assert manifest["architecture"] == "qwen3_5"
    assert manifest["source"] == str(source)
    assert {c["kind"] for c in manifest["cache"]} == {"key", "value", "conv", "recurrent"}
    assert manifest["verification"]["fp32"]["passed"] is True
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["model_type"] == "qwen3_5_text"
    assert "vision_config" not in config
