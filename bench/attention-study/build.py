"""Build A (the export's cached_attention, traced as the export traces it) and B (one
com.microsoft.GroupQueryAttention node) with Qwen2.5-Coder-0.5B's attention dimensions, and random
inputs, into the current folder. Issue 42's attention study: README.md beside this file."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "export"))
import numpy as np, onnx, torch
from onnx import helper, TensorProto as TP
from botpsy_export.architectures.blocks import cached_attention

H, KV, D = 14, 2, 64
HID, KVH = H * D, KV * D
SCALE = D ** -0.5
OPSET = 18  # same as botpsy_export/to_onnx.py


class AttnA(torch.nn.Module):
    """Inputs as the brief; position_ids derived in-graph from the mask (last T of cumsum-1)."""
    def forward(self, query, key, value, past_key, past_value, attention_mask):
        q = query.reshape(1, -1, H, D).transpose(1, 2)
        k = key.reshape(1, -1, KV, D).transpose(1, 2)
        v = value.reshape(1, -1, KV, D).transpose(1, 2)
        positions = attention_mask.cumsum(-1) - 1
        position_ids = positions[:, past_key.shape[2]:]
        return cached_attention(q, k, v, past_key, past_value, attention_mask, position_ids, SCALE)


def build_a(path):
    P, T = 3, 2
    args = (torch.randn(1, T, HID), torch.randn(1, T, KVH), torch.randn(1, T, KVH),
            torch.randn(1, KV, P, D), torch.randn(1, KV, P, D), torch.ones(1, P + T, dtype=torch.long))
    names_in = ["query", "key", "value", "past_key", "past_value", "attention_mask"]
    names_out = ["output", "present_key", "present_value"]
    axes = {"query": {1: "T"}, "key": {1: "T"}, "value": {1: "T"}, "past_key": {2: "P"}, "past_value": {2: "P"},
            "attention_mask": {1: "PT"}, "output": {1: "T"}, "present_key": {2: "PT"}, "present_value": {2: "PT"}}
    with torch.no_grad():
        torch.onnx.export(AttnA(), args, path, dynamo=False, opset_version=OPSET, input_names=names_in,
                          output_names=names_out, dynamic_axes=axes, do_constant_folding=True)
    m = onnx.load(path)
    m.ir_version = min(m.ir_version, 10)
    onnx.save(m, path)
    print("A ops:", sorted({n.op_type for n in m.graph.node}))


def build_b(path):
    vi = helper.make_tensor_value_info
    inputs = [vi("query", TP.FLOAT, [1, "T", HID]), vi("key", TP.FLOAT, [1, "T", KVH]),
              vi("value", TP.FLOAT, [1, "T", KVH]), vi("past_key", TP.FLOAT, [1, KV, "P", D]),
              vi("past_value", TP.FLOAT, [1, KV, "P", D]), vi("attention_mask", TP.INT64, [1, "PT"])]
    outputs = [vi("output", TP.FLOAT, [1, "T", HID]), vi("present_key", TP.FLOAT, [1, KV, "PT", D]),
               vi("present_value", TP.FLOAT, [1, KV, "PT", D])]
    one = helper.make_tensor("one", TP.INT64, [], [1])
    axes1 = helper.make_tensor("axes1", TP.INT64, [1], [1])
    idx1 = helper.make_tensor("idx1", TP.INT64, [], [1])
    nodes = [
        # seqlens_k = ReduceSum(mask, axis 1) - 1 (int32, [1]); total_sequence_length = Shape(mask)[1] (int32 scalar)
        helper.make_node("ReduceSum", ["attention_mask", "axes1"], ["mask_sum"], keepdims=0),
        helper.make_node("Sub", ["mask_sum", "one"], ["seqlens_k64"]),
        helper.make_node("Cast", ["seqlens_k64"], ["seqlens_k"], to=TP.INT32),
        helper.make_node("Shape", ["attention_mask"], ["mask_shape"]),
        helper.make_node("Gather", ["mask_shape", "idx1"], ["total64"], axis=0),
        helper.make_node("Cast", ["total64"], ["total_sequence_length"], to=TP.INT32),
        helper.make_node("GroupQueryAttention",
                         ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"],
                         ["output", "present_key", "present_value"], domain="com.microsoft",
                         num_heads=H, kv_num_heads=KV, scale=SCALE, do_rotary=0),
    ]
    g = helper.make_graph(nodes, "gqa", inputs, outputs, initializer=[one, axes1, idx1])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, path)


build_a("A.onnx")
build_b("B.onnx")

# Fixed-seed inputs for 1024 positions, shared by the Python and Node harnesses.
rng = np.random.default_rng(42)
N = 1024
rng.standard_normal((1, N, HID), dtype=np.float32).tofile("q.bin")
rng.standard_normal((1, N, KVH), dtype=np.float32).tofile("k.bin")
rng.standard_normal((1, N, KVH), dtype=np.float32).tofile("v.bin")
print("ok")
