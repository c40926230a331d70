"""onnxruntime contrib ops used by linear-attention layers, as traceable torch functions.

Each op is an autograd.Function: `forward` is a plain-torch reference (used when the
wrapper runs in PyTorch and while tracing), `symbolic` emits the single
`com.microsoft` node that onnxruntime (native and web 1.30) executes.
Only attributes that onnxruntime-web 1.30 understands are emitted.
"""

import torch
import torch.nn.functional as F

MS_DOMAIN = "com.microsoft"


def _typed_like(value, like):
    """Give a contrib-op output the type/shape of a tensor it mirrors (torch cannot infer it)."""
    value.setType(like.type())
    return value


class CausalConvWithState(torch.autograd.Function):
    """Depthwise causal conv1d + SiLU with a carried state of the last kernel-1 inputs.

    x: [B, C, T], weight: [C, 1, K], bias: [C], past_state: [B, C, K-1]
    -> (y [B, C, T], present_state). The bias is always given (zeros when the layer has
    none): the TorchScript exporter cannot leave an optional input empty.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, past_state):
        kernel = weight.shape[-1]
        full = torch.cat([past_state, x], dim=-1)
        y = F.conv1d(full, weight, bias, groups=x.shape[1])
        present = full[:, :, full.shape[-1] - (kernel - 1):]
        return F.silu(y), present

    @staticmethod
    def symbolic(g, x, weight, bias, past_state):
        y, present = g.op(
            f"{MS_DOMAIN}::CausalConvWithState", x, weight, bias, past_state,
            activation_s="silu", outputs=2,
        )
        return _typed_like(y, x), _typed_like(present, past_state)


class GatedDeltaRule(torch.autograd.Function):
    """Gated delta rule linear attention (`LinearAttention`, update_rule gated_delta).

    query/key: [B, T, H*Dk] (already L2-normalised), value: [B, T, H*Dv],
    past_state: [B, H, Dk, Dv] fp32, decay (log space): [B, T, H], beta: [B, T, H].
    heads: H as a Python int. Returns (output [B, T, H*Dv], present_state). Scale is 1/sqrt(Dk).
    """

    @staticmethod
    def forward(ctx, query, key, value, past_state, decay, beta, heads):
        batch, steps, _ = query.shape
        dk, dv = past_state.shape[2], past_state.shape[3]
        q = query.reshape(batch, steps, heads, dk) * dk**-0.5
        k = key.reshape(batch, steps, heads, dk)
        v = value.reshape(batch, steps, heads, dv)
        state = past_state
        outputs = []
        for t in range(steps):
            state = state * decay[:, t, :, None, None].exp()
            predicted = torch.einsum("bhkv,bhk->bhv", state, k[:, t])
            delta = (v[:, t] - predicted) * beta[:, t, :, None]
            state = state + torch.einsum("bhk,bhv->bhkv", k[:, t], delta)
            outputs.append(torch.einsum("bhkv,bhk->bhv", state, q[:, t]))
        out = torch.stack(outputs, dim=1).reshape(batch, steps, heads * dv)
        return out, state

    @staticmethod
    def symbolic(g, query, key, value, past_state, decay, beta, heads):
        out, present = g.op(
            f"{MS_DOMAIN}::LinearAttention", query, key, value, past_state, decay, beta,
            q_num_heads_i=heads, kv_num_heads_i=heads, update_rule_s="gated_delta", outputs=2,
        )
        return _typed_like(out, value), _typed_like(present, past_state)
