"""Qwen3.5 hybrid decoder: Gated-DeltaNet linear attention + gated full attention.

Each DeltaNet layer is lowered to two onnxruntime contrib ops (CausalConvWithState,
LinearAttention), so a prompt of any length runs in one call with linear cost.
Full-attention layers use a KV cache, an output gate, q/k norms and partial RoPE.
"""

from importlib import resources

import torch
import torch.nn.functional as F

from ..contrib_ops import CausalConvWithState, GatedDeltaRule
from ..smoothing import SmoothGroup, divide_linear_rows, divide_norm_weight
from . import register
from .base import Architecture, StateSpec, attention_state_specs
from .blocks import DecoderGraph, apply_rope, cached_attention, gated_mlp, rms_norm

LINEAR = "linear_attention"


def l2_normalize(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def repeat_heads(x, repeats):
    """[1, T, H, D] -> [1, T, H*repeats, D], each head repeated consecutively (repeat_interleave)."""
    if repeats == 1:
        return x
    heads, dim = x.shape[2], x.shape[3]
    return x[:, :, :, None, :].expand(-1, -1, -1, repeats, -1).reshape(1, -1, heads * repeats, dim)


def positions_of_new_tokens(input_ids, attention_mask):
    """Positions [1, T] of the T new tokens: the attended tokens before them, counted from the mask.

    The graph takes no position_ids: transformers.js 4.3.2 feeds Qwen-VL-family graphs
    (qwen3_5 among them) wrong decode positions (past + 2 x prompt length, for text-only
    input), so the graph counts for itself; with an all-ones mask this is past .. past+T-1.
    """
    new = torch.ones_like(input_ids).cumsum(-1)
    before = attention_mask.sum(-1, keepdim=True) - new[:, -1:]
    return before + new - 1


class Qwen35Graph(DecoderGraph):
    def __init__(self, model):
        super().__init__(model)
        config = model.config
        self.layer_types = list(config.layer_types)
        self.k_heads = config.linear_num_key_heads
        self.v_heads = config.linear_num_value_heads
        self.k_dim = config.linear_key_head_dim
        self.v_dim = config.linear_value_head_dim

    def forward(self, input_ids, attention_mask, *past):
        position_ids = positions_of_new_tokens(input_ids, attention_mask)
        hidden, (cos, sin) = self.embed(input_ids, position_ids)
        presents = []
        for index, layer in enumerate(self.decoder.layers):
            x = rms_norm(hidden, layer.input_layernorm.weight, self.eps, 1.0)
            first, second = past[2 * index], past[2 * index + 1]
            if self.layer_types[index] == LINEAR:
                mixed, state_a, state_b = self._delta_net(layer.linear_attn, x, first, second)
            else:
                mixed, state_a, state_b = self._attention(
                    layer.self_attn, x, first, second, attention_mask, position_ids, cos, sin)
            hidden = hidden + mixed
            mlp = layer.mlp
            x = rms_norm(hidden, layer.post_attention_layernorm.weight, self.eps, 1.0)
            hidden = hidden + gated_mlp(x, mlp.gate_proj, mlp.up_proj, mlp.down_proj)
            presents += [state_a, state_b]
        last = rms_norm(hidden[:, -1:, :], self.decoder.norm.weight, self.eps, 1.0)
        return (F.linear(last, self.lm_head_weight), *presents)

    def _delta_net(self, la, x, past_conv, past_recurrent):
        key_size, value_size = self.k_heads * self.k_dim, self.v_heads * self.v_dim
        conv = la.conv1d
        bias = conv.bias if conv.bias is not None else torch.zeros(conv.weight.shape[0])
        conv_out, present_conv = CausalConvWithState.apply(
            la.in_proj_qkv(x).transpose(1, 2), conv.weight, bias, past_conv)
        query, key, value = conv_out.transpose(1, 2).split([key_size, key_size, value_size], dim=-1)
        repeats = self.v_heads // self.k_heads
        query = repeat_heads(l2_normalize(query.reshape(1, -1, self.k_heads, self.k_dim)), repeats)
        key = repeat_heads(l2_normalize(key.reshape(1, -1, self.k_heads, self.k_dim)), repeats)
        beta = torch.sigmoid(la.in_proj_b(x))
        decay = -la.A_log.float().exp() * F.softplus(la.in_proj_a(x) + la.dt_bias)
        core, present_recurrent = GatedDeltaRule.apply(
            query.reshape(1, -1, self.v_heads * self.k_dim), key.reshape(1, -1, self.v_heads * self.k_dim),
            value, past_recurrent, decay, beta, self.v_heads)
        core = core.reshape(1, -1, self.v_heads, self.v_dim)
        gate = la.in_proj_z(x).reshape(1, -1, self.v_heads, self.v_dim)
        core = rms_norm(core, la.norm.weight, la.norm.variance_epsilon) * F.silu(gate)
        return la.out_proj(core.reshape(1, -1, value_size)), present_conv, present_recurrent

    def _attention(self, attn, x, past_key, past_value, attention_mask, position_ids, cos, sin):
        heads, dim = self.heads, self.head_dim
        query, gate = attn.q_proj(x).reshape(1, -1, heads, 2 * dim).chunk(2, dim=-1)
        query = rms_norm(query, attn.q_norm.weight, self.eps, 1.0).transpose(1, 2)
        key = rms_norm(attn.k_proj(x).reshape(1, -1, self.kv_heads, dim), attn.k_norm.weight, self.eps, 1.0)
        value = attn.v_proj(x).reshape(1, -1, self.kv_heads, dim).transpose(1, 2)
        query, key = apply_rope(query, cos, sin), apply_rope(key.transpose(1, 2), cos, sin)
        out, present_key, present_value = cached_attention(
            query, key, value, past_key, past_value, attention_mask, position_ids, dim**-0.5)
        out = out * torch.sigmoid(gate.reshape(1, -1, heads * dim))
        return attn.o_proj(out), present_key, present_value


def language_model_of(full):
    """A Qwen3_5ForCausalLM sharing the text weights of a Qwen3_5ForConditionalGeneration."""
    from transformers import Qwen3_5ForCausalLM

    text = Qwen3_5ForCausalLM(full.config.text_config)
    text.model = full.model.language_model
    text.lm_head = full.lm_head
    return text.eval()


@register
class Qwen35Architecture(Architecture):
    name = "qwen3_5"
    model_types = ("qwen3_5", "qwen3_5_text")
    tool_call_format = "qwen3_coder_xml"
    uses_contrib_ops = True
    chat_template_supports_tools = True
    takes_position_ids = False  # see positions_of_new_tokens

    @classmethod
    def load_pretrained(cls, folder):
        """Text-only layout loads directly; the vision-language layout gives up its language model."""
        import json

        import torch
        from transformers import Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration

        options = dict(dtype=torch.float32, use_safetensors=True, trust_remote_code=False)
        if "text_config" not in json.loads((folder / "config.json").read_text()):
            return Qwen3_5ForCausalLM.from_pretrained(folder, **options)
        full = Qwen3_5ForConditionalGeneration.from_pretrained(folder, **options)
        return language_model_of(full)

    def state_specs(self):
        config = self.config
        conv_channels = 2 * config.linear_num_key_heads * config.linear_key_head_dim + \
            config.linear_num_value_heads * config.linear_value_head_dim
        specs = []
        for layer, layer_type in enumerate(config.layer_types):
            if layer_type == LINEAR:
                specs += [
                    StateSpec(f"past_conv.{layer}", f"present_conv.{layer}", "conv",
                              (1, conv_channels, config.linear_conv_kernel_dim - 1)),
                    StateSpec(f"past_recurrent.{layer}", f"present_recurrent.{layer}", "recurrent",
                              (1, config.linear_num_value_heads, config.linear_key_head_dim,
                               config.linear_value_head_dim)),
                ]
            else:
                specs += attention_state_specs(layer, config.num_key_value_heads, config.head_dim)
        return specs

    def graph_module(self):
        return Qwen35Graph(self.model).eval()

    def smoothing_groups(self):
        groups = []
        for layer, layer_type in zip(self.model.model.layers, self.config.layer_types):
            if layer_type == LINEAR:
                la = layer.linear_attn
                mixers = (la.in_proj_qkv, la.in_proj_z, la.in_proj_b, la.in_proj_a)
            else:
                mixers = (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj)
            mlp = layer.mlp
            groups += [
                SmoothGroup(mixers, divide_norm_weight(layer.input_layernorm, 1.0)),
                SmoothGroup((mlp.gate_proj, mlp.up_proj), divide_norm_weight(layer.post_attention_layernorm, 1.0)),
                SmoothGroup((mlp.down_proj,), divide_linear_rows(mlp.up_proj)),
            ]
        return groups

    def chat_template(self):
        """The checkpoint's own template when it has one; otherwise ours (Qwen3-Coder XML tool calls)."""
        own = getattr(self.tokenizer, "chat_template", None)
        if own and "<tool_call>" in own:
            return own
        return resources.files("botpsy_export.templates").joinpath("qwen3_5_chat.jinja").read_text()
