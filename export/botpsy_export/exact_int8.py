"""A native onnxruntime session that computes a q8 graph's int8 products exactly, as the browser does.

q8 graphs multiply uint8 activations by int8 weights (MatMulInteger, u8 x s8). On an x86 CPU
with AVX2 but without VNNI, onnxruntime's u8 x s8 kernel adds pairs of products in 16 bits
(VPMADDUBSW) and saturates: 255 * 127 * 2 does not fit, and the sums come out wrong. That is
a property of the host, not of the graph; onnxruntime-web's WASM kernel, and VNNI hosts, add
in 32 bits. A verification on such a host would measure the host's kernel instead of the
export. So when the probe below finds saturation, the session is built from a copy of the
graph whose int8 weights are stored as uint8 around a zero point of 128: the same integers
(w + 128 - 128), computed by the u8 x u8 kernel, which widens to 16 bits before multiplying.
"""

import functools
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

_OFFSET = 128


def exact_int8_session(graph_path, options: ort.SessionOptions) -> ort.InferenceSession:
    """A CPU session for `graph_path` whose MatMulInteger sums are exact on this host."""
    if not signed_weights_saturate():
        return ort.InferenceSession(str(graph_path), options, providers=["CPUExecutionProvider"])
    model = onnx.load(str(graph_path), load_external_data=False)
    if not _int8_weight_names(model.graph):
        return ort.InferenceSession(str(graph_path), options, providers=["CPUExecutionProvider"])
    model = onnx.load(str(graph_path))
    unsigned_weights(model)
    with tempfile.TemporaryDirectory(prefix="botpsy-exact-int8-") as scratch:
        copy = Path(scratch) / Path(graph_path).name
        onnx.save(model, str(copy), save_as_external_data=True, location=copy.name + "_data")
        del model
        # onnxruntime reads (or maps) the weights while the session is built; a mapped file stays
        # readable after its folder is removed.
        return ort.InferenceSession(str(copy), options, providers=["CPUExecutionProvider"])


@functools.cache
def signed_weights_saturate() -> bool:
    """Whether this host's u8 x s8 MatMulInteger kernel saturates (AVX2 without VNNI)."""
    return _probe(np.array([[127], [127]], np.int8)) != 255 * 127 * 2


def unsigned_weights(model: onnx.ModelProto) -> int:
    """Rewrite, in place, every MatMulInteger's int8 weight initializer as uint8 around zero point
    128 (its own zero point plus 128). Returns how many were rewritten."""
    graph = model.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    rewritten = 0
    for node in graph.node:
        if node.op_type != "MatMulInteger" or node.input[1] not in initializers:
            continue
        weight = initializers[node.input[1]]
        if weight.data_type != TensorProto.INT8:
            continue
        weight.CopyFrom(_shifted(numpy_helper.to_array(weight), weight.name))
        inputs = list(node.input) + [""] * (4 - len(node.input))
        if inputs[3]:
            zero_point = initializers[inputs[3]]
            if zero_point.data_type == TensorProto.INT8:
                zero_point.CopyFrom(_shifted(numpy_helper.to_array(zero_point), zero_point.name))
        else:
            inputs[3] = f"{weight.name}/zero_point_{_OFFSET}"
            graph.initializer.append(numpy_helper.from_array(np.array(_OFFSET, np.uint8), inputs[3]))
        del node.input[:]
        node.input.extend(inputs)
        rewritten += 1
    return rewritten


def _shifted(values: np.ndarray, name: str) -> onnx.TensorProto:
    return numpy_helper.from_array((values.astype(np.int16) + _OFFSET).astype(np.uint8), name)


def _int8_weight_names(graph) -> set[str]:
    int8 = {tensor.name for tensor in graph.initializer if tensor.data_type == TensorProto.INT8}
    return {node.input[1] for node in graph.node if node.op_type == "MatMulInteger" and node.input[1] in int8}


def _probe(weight: np.ndarray) -> int:
    """255 * w0 + 255 * w1 as this host's kernel computes it."""
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 1])], [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return int(session.run(None, {"a": np.full((1, 2), 255, np.uint8)})[0][0, 0])
