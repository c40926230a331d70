"""Local Hugging Face folders export in both Qwen3.5 layouts: the text-only Qwen3_5ForCausalLM
and BotPsy's released vision-language Qwen3_5ForConditionalGeneration (its language model)."""

import json

import pytest
import torch

from botpsy_export.api import export_model
from botpsy_export.builtins import build_tiny_qwen, tiny_qwen_config


def _tiny_vision_language_model():
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    torch.manual_seed(7)
    config = Qwen3_5Config(
        text_config=tiny_qwen_config().to_dict(),
        vision_config={"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "out_hidden_size": 64, "patch_size": 4, "num_position_embeddings": 16},
        tie_word_embeddings=True,
    )
    return Qwen3_5ForConditionalGeneration(config).eval()


@pytest.mark.parametrize("layout", ["causal_lm", "conditional_generation"])
def test_local_qwen_folder_exports_and_matches_pytorch(layout, tmp_path):
    text_model, tokenizer = build_tiny_qwen()
    model = text_model if layout == "causal_lm" else _tiny_vision_language_model()
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
