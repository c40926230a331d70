"""Native verification computes a q8 graph's int8 products exactly, whatever the host's kernel does."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from botpsy_export.exact_int8 import exact_int8_session, signed_weights_saturate, unsigned_weights

ROWS, DEPTH, COLUMNS = 5, 96, 24


def _matmul_integer_graph(path, weights, weight_zero_point):
    initializers = [numpy_helper.from_array(weights, "w")]
    inputs = ["a", "w"]
    if weight_zero_point is not None:
        initializers += [numpy_helper.from_array(np.array(128, np.uint8), "a_zero_point"),
                         numpy_helper.from_array(weight_zero_point, "w_zero_point")]
        inputs += ["a_zero_point", "w_zero_point"]
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", inputs, ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [ROWS, DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [ROWS, COLUMNS])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


def _extreme_inputs():
    rng = np.random.default_rng(7)
    activations = rng.choice(np.array([0, 1, 254, 255], np.uint8), size=(ROWS, DEPTH))
    weights = rng.choice(np.array([-128, -127, 126, 127], np.int8), size=(DEPTH, COLUMNS))
    return activations, weights


@pytest.mark.parametrize("per_channel_zero_point", [False, True])
def test_the_session_computes_exact_integers(tmp_path, per_channel_zero_point):
    activations, weights = _extreme_inputs()
    zero_point = np.zeros(COLUMNS, np.int8) if per_channel_zero_point else None
    graph = _matmul_integer_graph(tmp_path / "g.onnx", weights, zero_point)
    a = activations.astype(np.int64) - (128 if per_channel_zero_point else 0)
    exact = a @ weights.astype(np.int64)

    got = exact_int8_session(graph, ort.SessionOptions()).run(None, {"a": activations})[0]

    np.testing.assert_array_equal(got, exact)


def test_the_probe_tells_whether_the_plain_kernel_saturates(tmp_path):
    activations, weights = _extreme_inputs()
    graph = _matmul_integer_graph(tmp_path / "g.onnx", weights, None)
    plain = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"]).run(None, {"a": activations})[0]
    exact = activations.astype(np.int64) @ weights.astype(np.int64)
    assert signed_weights_saturate() == (not np.array_equal(plain, exact))


def test_unsigned_weights_keep_the_integers_and_the_zero_points():
    weights = np.array([[-128, 0], [127, -1]], np.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w", "", "zp"], ["y"]), helper.make_node("MatMulInteger", ["a", "v"], ["z"])],
        "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 2]), helper.make_tensor_value_info("z", TensorProto.INT32, [1, 2])],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array([0, -3], np.int8), "zp"),
         numpy_helper.from_array(weights, "v")])
    model = helper.make_model(graph)

    assert unsigned_weights(model) == 2

    tensors = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    np.testing.assert_array_equal(tensors["w"], [[0, 128], [255, 127]])
    np.testing.assert_array_equal(tensors["zp"], [128, 125])
    second = model.graph.node[1]
    assert tensors[second.input[3]] == 128 and second.input[2] == ""
