"""Qwen2 / Qwen2.5 decoders: Llama's graph, with biases on the q/k/v projections (their
nn.Linear layers apply them; smoothing rescales input columns only, so biases stay as they are)."""

from ..errors import UnknownArchitectureError
from . import register
from .llama import LlamaArchitecture


@register
class Qwen2Architecture(LlamaArchitecture):
    name = "qwen2"
    model_types = ("qwen2",)
    tool_call_format = "hermes_json"

    def __init__(self, model, tokenizer):
        super().__init__(model, tokenizer)
        sliding = [i for i, kind in enumerate(getattr(self.config, "layer_types", None) or [])
                   if kind != "full_attention"]
        if sliding:  # Qwen2.5's released configs keep use_sliding_window off
            raise UnknownArchitectureError(
                f"qwen2 with sliding-window attention (layers {sliding[:4]}...) is not supported; "
                "only full-attention Qwen2 models export")
