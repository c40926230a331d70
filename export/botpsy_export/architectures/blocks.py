"""Tensor functions shared by architecture graphs (batch is always 1 in exported graphs).

Written so that TorchScript tracing keeps every sequence length dynamic: lengths come
from tensors (cumsum of the mask, reshape with -1), never from Python ints.
"""

import torch
import torch.nn.functional as F

MASKED = torch.finfo(torch.float32).min


def rms_norm(x, weight, eps, weight_offset=0.0):
    """RMSNorm; Qwen3.5 stores weight - 1 (weight_offset=1.0), Llama stores weight."""
    normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return normed * (weight + weight_offset)


def rope_tables(position_ids, inv_freq, scaling=1.0):
    """cos/sin [1, T, rotary_dim] for absolute positions; rotary_dim = 2 * len(inv_freq)."""
    freqs = position_ids[..., None].float() * inv_freq
    angles = torch.cat([freqs, freqs], dim=-1)
    return angles.cos() * scaling, angles.sin() * scaling


def apply_rope(x, cos, sin):
    """Rotate the first rotary_dim dims of x [1, H, T, D] (half-split pairing); the rest pass through."""
    rotary_dim = cos.shape[-1]
    cos, sin = cos[:, None], sin[:, None]
    rotated, passthrough = x[..., :rotary_dim], x[..., rotary_dim:]
    first, second = rotated[..., : rotary_dim // 2], rotated[..., rotary_dim // 2 :]
    turned = torch.cat([-second, first], dim=-1)
    return torch.cat([rotated * cos + turned * sin, passthrough], dim=-1)


def cached_attention(query, key, value, past_key, past_value, attention_mask, position_ids, scale):
    """Causal grouped-query attention over [past cache + new tokens].

    query [1, H, T, D]; key/value [1, KV, T, D]; past_* [1, KV, P, D];
    attention_mask [1, P+T] (ones); position_ids [1, T] = P .. P+T-1.
    Returns (output [1, T, H*D], present_key, present_value).

    Attention reads the Concat'd present, so a prompt split across calls sums every query's
    row over the same keys in the same order as one call: bit-identical, which prefix reuse
    relies on (q8 rounds activations per token and would magnify any last-bit difference).
    The softmax is `softmax_in_key_order`, so a query's row also comes out the same whether
    the call runs it alone or with later queries (whose keys it masks).
    The appending graph (`appending_graph.py`) keeps this Concat inside and returns `key` and
    `value` as the cache outputs.
    """
    heads, head_dim = query.shape[1], query.shape[3]
    kv_heads = key.shape[1]
    groups = heads // kv_heads
    present_key = torch.cat([past_key, key], dim=2)
    present_value = torch.cat([past_value, value], dim=2)

    key_positions = attention_mask.cumsum(-1) - 1
    allowed = (key_positions[:, None, :] <= position_ids[:, :, None]) & (attention_mask[:, None, :] > 0)
    bias = torch.zeros_like(allowed, dtype=torch.float32).masked_fill(~allowed, MASKED)

    # A key/value head's query rows (groups x T) go through each MatMul together, so a decode
    # step (T = 1) still gives onnxruntime a MatMul of several rows: a 1-row MatMul takes
    # another path, whose sums over hundreds of keys round differently from the same row's
    # inside a call of several tokens.
    rows = query.reshape(1, kv_heads, -1, head_dim)  # [1, KV, groups * T, D]
    scores = rows @ present_key.transpose(-1, -2) * scale
    scores = scores.reshape(1, kv_heads, groups, -1, scores.shape[-1]) + bias[:, None, None]
    probs = softmax_in_key_order(scores)
    out = probs.reshape(1, kv_heads, -1, probs.shape[-1]) @ present_value
    return out.reshape(1, heads, -1, head_dim).transpose(1, 2).reshape(1, -1, heads * head_dim), \
        present_key, present_value


def softmax_in_key_order(scores):
    """Softmax over the last axis whose sum adds the keys in order, whatever the row's length.

    onnxruntime's Softmax sums a row in SIMD lanes with a scalar tail, so the same scores
    followed by masked keys (exact zeros after exp) can sum in another order: a decode step
    (keys = past + 1) and the same position checked inside a call of several tokens (keys =
    past + k, the later ones masked) then differ in the last bits, which q8's per-token int8
    rounding magnifies into different tokens. The sum here is a MatMul with ones, which
    accumulates along the keys in order (zeros after them add nothing) as long as it has
    more than one row, so the runtime can check guessed tokens several per call and still get
    the bits of one call per token.
    """
    shifted = (scores - scores.amax(-1, keepdim=True)).exp()
    rows = shifted.reshape(1, -1, shifted.shape[-1])  # every head's rows in one MatMul (never 1 row)
    ones = torch.ones_like(rows[:, :1, :]).transpose(-1, -2)  # [1, keys, 1]
    return shifted / (rows @ ones).reshape_as(shifted[..., :1])


def gated_mlp(x, gate_proj, up_proj, down_proj):
    return down_proj(F.silu(gate_proj(x)) * up_proj(x))


class DecoderGraph(torch.nn.Module):
    """What every decoder graph shares: the HF decoder, its RoPE tables and an untied LM head."""

    def __init__(self, model):
        super().__init__()
        config = model.config
        self.decoder = model.model
        self.eps = config.rms_norm_eps
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        rotary = self.decoder.rotary_emb
        self.register_buffer("inv_freq", rotary.inv_freq.detach().clone().float(), persistent=False)
        self.rope_scaling = float(getattr(rotary, "attention_scaling", 1.0))
        # Untied copy: the head is quantized separately from the embedding table.
        self.lm_head_weight = torch.nn.Parameter(model.lm_head.weight.detach().clone(), requires_grad=False)

    def embed(self, input_ids, position_ids):
        """Token embeddings and the (cos, sin) RoPE tables for these positions."""
        hidden = F.embedding(input_ids, self.decoder.embed_tokens.weight)
        return hidden, rope_tables(position_ids, self.inv_freq, self.rope_scaling)

