"""SmoothQuant-style rescaling before int8 dynamic quantization.

q8 quantizes activations at run time (one scale per token), so a few outlier channels flatten every
other channel to a handful of levels. Dividing an input channel j by s_j where it is produced
(a norm weight, an up_proj row) and multiplying the consumers' weight column j by s_j leaves
the function unchanged but moves the outliers into the weights, which int8 per-channel handles:
s_j = max|X_j|^alpha / max|W_j|^(1 - alpha).
"""

from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class SmoothGroup:
    """Linear layers that read the same input, and how to divide that input at its producer."""

    consumers: tuple
    divide_producer: Callable[[torch.Tensor], None]


def divide_norm_weight(norm, weight_offset=0.0):
    """Producer rescale for an RMSNorm whose multiplier is weight + offset."""

    def divide(scale):
        multiplier = norm.weight.data + weight_offset
        norm.weight.data.copy_(multiplier / scale - weight_offset)

    return divide


def divide_linear_rows(linear):
    """Producer rescale for a Linear's output channels (e.g. up_proj feeding down_proj)."""

    def divide(scale):
        linear.weight.data.div_(scale[:, None])
        if linear.bias is not None:
            linear.bias.data.div_(scale)

    return divide


def input_maxima(model, groups, calibration_ids: list) -> list[torch.Tensor]:
    """Per-channel max |input| of each group, over the calibration sequences."""
    maxima = [None] * len(groups)
    hooks = []
    for index, group in enumerate(groups):
        def record(_module, inputs, index=index):
            current = inputs[0].detach().abs().reshape(-1, inputs[0].shape[-1]).amax(0)
            maxima[index] = current if maxima[index] is None else torch.maximum(maxima[index], current)
        hooks.append(group.consumers[0].register_forward_pre_hook(record))
    try:
        with torch.no_grad():
            for ids in calibration_ids:
                model(input_ids=torch.tensor([ids]), use_cache=False)
    finally:
        for hook in hooks:
            hook.remove()
    return maxima


def smooth(model, groups, calibration_ids: list, alpha: float):
    """Rescale `model` in place (same function, friendlier activations for int8)."""
    maxima = input_maxima(model, groups, calibration_ids)
    with torch.no_grad():
        for group, activation in zip(groups, maxima):
            if activation is None:
                continue
            weight = torch.cat([c.weight.abs() for c in group.consumers], dim=0).amax(0)
            scale = activation.clamp(min=1e-5) ** alpha / weight.clamp(min=1e-5) ** (1 - alpha)
            scale = scale.clamp(min=1e-3, max=1e3)
            group.divide_producer(scale)
            for consumer in group.consumers:
                consumer.weight.data.mul_(scale[None, :])
