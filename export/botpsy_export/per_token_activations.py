"""Int8 activations quantized per token instead of per tensor.

onnxruntime's dynamic quantization gives each MatMul input ONE scale, computed over every
token in the call (DynamicQuantizeLinear). A token's result then depends on which other
tokens share its call: prefilling 96 tokens at once or as 60 + 36 gives different logits,
which breaks token-identical prefix reuse in the browser, and one outlier token flattens
the rest. This rewrite gives each token (row of the last axis) its own symmetric scale,
absmax / 127, stored as uint8 around a fixed zero point of 128 so the fast u8 x s8
MatMulInteger kernel still applies. Only standard ONNX ops are added.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

_CONSTANTS = {
    "per_token/eps": np.array(1e-8, np.float32),
    "per_token/qmax": np.array(127.0, np.float32),
    "per_token/qmin": np.array(-127.0, np.float32),
    "per_token/offset": np.array(128.0, np.float32),
    "per_token/zero_point": np.array(128, np.uint8),
    "per_token/last_axis": np.array([-1], np.int64),
}


def quantize_activations_per_token(model: onnx.ModelProto) -> int:
    """Rewrite, in place, every DynamicQuantizeLinear that only feeds MatMulInteger.

    Returns how many were rewritten. The scale output keeps its name, now shaped [..., 1],
    so the existing `Cast(int32) * (x_scale * w_scale)` after each MatMulInteger broadcasts.
    """
    graph = model.graph
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))

    new_nodes, rewritten = [], 0
    for node in graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            new_nodes.append(node)
            continue
        x = node.input[0]
        quantized, scale, zero_point = node.output
        users = consumers.get(quantized, []) + consumers.get(zero_point, [])
        if any(user.op_type != "MatMulInteger" for user in users):
            new_nodes.append(node)
            continue
        new_nodes += _per_token_nodes(node.name or quantized, x, quantized, scale, opset)
        for user in consumers.get(zero_point, []):
            for i, name in enumerate(user.input):
                if name == zero_point:
                    user.input[i] = "per_token/zero_point"
        rewritten += 1

    if rewritten:
        graph.initializer.extend(numpy_helper.from_array(value, name) for name, value in _CONSTANTS.items())
        del graph.node[:]
        graph.node.extend(new_nodes)
        # Shapes/types recorded for the old outputs (a scalar scale, ...) are stale now.
        produced = {name for node in new_nodes for name in node.output}
        kept = [info for info in graph.value_info if info.name not in produced]
        del graph.value_info[:]
        graph.value_info.extend(kept)
        _keep_biases_out_of_the_fused_matmul(graph)
    return rewritten


def _keep_biases_out_of_the_fused_matmul(graph):
    """Write each per-token int8 MatMul's constant bias Add as Sub of the negated bias (the same
    sum, exactly).

    onnxruntime (native 1.32 and web, ORT_ENABLE_EXTENDED and up) fuses MatMulInteger -> Cast ->
    Mul(scales) -> Add(bias) into MatMulIntegerToFloat, and that fused bias comes out wrong with
    per-token activation scales: a tiny Qwen2 (q/k/v biases) lost 1.9 in its logits against
    0.03 unfused. The fusion only takes an Add, so a Sub stays a separate node.
    """
    producer = {name: node for node in graph.node for name in node.output}
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    negated = []
    for node in graph.node:
        if node.op_type != "Add" or not any(name in initializers for name in node.input):
            continue
        bias_name = next(name for name in node.input if name in initializers)
        other = next((name for name in node.input if name != bias_name), None)
        if other is None or not _is_per_token_matmul_output(other, producer):
            continue
        bias = numpy_helper.to_array(initializers[bias_name])
        if bias.dtype != np.float32:
            continue
        negated_name = f"{bias_name}/negated"
        negated.append(numpy_helper.from_array(-bias, negated_name))
        node.op_type = "Sub"
        del node.input[:]
        node.input.extend([other, negated_name])
    graph.initializer.extend(negated)


def _is_per_token_matmul_output(name: str, producer: dict) -> bool:
    """Whether `name` is Mul(Cast(MatMulInteger with the per-token zero point), scales)."""
    mul = producer.get(name)
    if mul is None or mul.op_type != "Mul":
        return False
    for cast_name in mul.input:
        cast = producer.get(cast_name)
        if cast is not None and cast.op_type == "Cast":
            matmul = producer.get(cast.input[0])
            if matmul is not None and matmul.op_type == "MatMulInteger" and "per_token/zero_point" in matmul.input:
                return True
    return False


def _per_token_nodes(prefix: str, x: str, quantized: str, scale: str, opset: int) -> list:
    def name(suffix):
        return f"{prefix}/per_token/{suffix}"

    if opset >= 18:
        absmax = helper.make_node("ReduceMax", [name("abs"), "per_token/last_axis"], [name("absmax")], keepdims=1)
    else:
        absmax = helper.make_node("ReduceMax", [name("abs")], [name("absmax")], axes=[-1], keepdims=1)
    return [
        helper.make_node("Abs", [x], [name("abs")]),
        absmax,
        helper.make_node("Max", [name("absmax"), "per_token/eps"], [name("absmax_nonzero")]),
        helper.make_node("Div", [name("absmax_nonzero"), "per_token/qmax"], [scale]),
        helper.make_node("Div", [x, scale], [name("scaled")]),
        helper.make_node("Round", [name("scaled")], [name("rounded")]),
        helper.make_node("Clip", [name("rounded"), "per_token/qmin", "per_token/qmax"], [name("clipped")]),
        helper.make_node("Add", [name("clipped"), "per_token/offset"], [name("shifted")]),
        helper.make_node("Cast", [name("shifted")], [quantized], to=TensorProto.UINT8),
    ]
