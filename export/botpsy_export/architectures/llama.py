"""Llama-family decoders (SmolLM2): RMSNorm, full RoPE, grouped-query attention, SwiGLU."""

import torch.nn.functional as F

from ..smoothing import SmoothGroup, divide_linear_rows, divide_norm_weight
from . import register
from .base import Architecture, attention_state_specs
from .blocks import DecoderGraph, apply_rope, cached_attention, gated_mlp, rms_norm


class LlamaGraph(DecoderGraph):
    def forward(self, input_ids, attention_mask, position_ids, *past):
        hidden, (cos, sin) = self.embed(input_ids, position_ids)
        presents = []
        for index, layer in enumerate(self.decoder.layers):
            attn = layer.self_attn
            x = rms_norm(hidden, layer.input_layernorm.weight, self.eps)
            q = attn.q_proj(x).reshape(1, -1, self.heads, self.head_dim).transpose(1, 2)
            k = attn.k_proj(x).reshape(1, -1, self.kv_heads, self.head_dim).transpose(1, 2)
            v = attn.v_proj(x).reshape(1, -1, self.kv_heads, self.head_dim).transpose(1, 2)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            out, present_key, present_value = cached_attention(
                q, k, v, past[2 * index], past[2 * index + 1], attention_mask, position_ids, self.head_dim**-0.5
            )
            hidden = hidden + attn.o_proj(out)
            mlp = layer.mlp
            x = rms_norm(hidden, layer.post_attention_layernorm.weight, self.eps)
            hidden = hidden + gated_mlp(x, mlp.gate_proj, mlp.up_proj, mlp.down_proj)
            presents += [present_key, present_value]
        last = rms_norm(hidden[:, -1:, :], self.decoder.norm.weight, self.eps)
        return (F.linear(last, self.lm_head_weight), *presents)


@register
class LlamaArchitecture(Architecture):
    name = "llama"
    model_types = ("llama",)
    tool_call_format = "hermes_json"

    def state_specs(self):
        config = self.config
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        specs = []
        for layer in range(config.num_hidden_layers):
            specs += attention_state_specs(layer, config.num_key_value_heads, head_dim)
        return specs

    def graph_module(self):
        return LlamaGraph(self.model).eval()

    def smoothing_groups(self):
        groups = []
        for layer in self.model.model.layers:
            attn, mlp = layer.self_attn, layer.mlp
            groups += [
                SmoothGroup((attn.q_proj, attn.k_proj, attn.v_proj), divide_norm_weight(layer.input_layernorm)),
                SmoothGroup((mlp.gate_proj, mlp.up_proj), divide_norm_weight(layer.post_attention_layernorm)),
                SmoothGroup((mlp.down_proj,), divide_linear_rows(mlp.up_proj)),
            ]
        return groups

    @property
    def chat_template_supports_tools(self) -> bool:
        return "tools" in self.chat_template()
