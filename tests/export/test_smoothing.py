"""q8 smoothing rescales weights without changing what the model computes."""

import torch

from botpsy_export.architectures import architecture_for
from botpsy_export.builtins import build_tiny_qwen
from botpsy_export.smoothing import smooth
from botpsy_export.verify import calibration_token_ids, prompt_token_ids


def test_smoothing_keeps_logits_and_moves_scale_into_weights():
    model, tokenizer = build_tiny_qwen()
    arch = architecture_for(model.config.model_type)(model, tokenizer)
    ids = torch.tensor([prompt_token_ids(arch)])
    before = arch.reference_logits(ids)
    norm_before = model.model.layers[0].input_layernorm.weight.clone()
    groups = arch.smoothing_groups()
    assert len(groups) == 3 * model.config.num_hidden_layers

    smooth(model, groups, calibration_token_ids(arch), alpha=0.5)

    torch.testing.assert_close(arch.reference_logits(ids), before, atol=1e-4, rtol=0)
    assert not torch.allclose(model.model.layers[0].input_layernorm.weight, norm_before)
