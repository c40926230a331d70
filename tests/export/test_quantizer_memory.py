"""q8 quantization keeps one copy of the weights in memory and still writes the graph that
onnxruntime's own `quantize_dynamic` writes (`quantizer_memory.py`)."""

import copy

import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.quant_utils import save_and_reload_model_with_shape_infer

from botpsy_export.quantize import DynamicInt8
from botpsy_export.quantizer_memory import STUB_ABOVE_BYTES, _skeleton, infer_shapes_in_place


def test_shapes_inferred_in_place_match_onnxruntimes_save_and_reload(tiny_qwen):
    model = onnx.load(tiny_qwen / "onnx" / "model.onnx")
    expected = save_and_reload_model_with_shape_infer(copy.deepcopy(model))

    inferred = infer_shapes_in_place(model)

    assert inferred is model
    assert len(model.graph.value_info) > 0
    assert list(model.graph.value_info) == list(expected.graph.value_info)
    assert list(model.graph.output) == list(expected.graph.output)


def test_the_skeleton_holds_no_weight_bytes(tiny_qwen):
    model = onnx.load(tiny_qwen / "onnx" / "model.onnx")
    weights = sum(t.ByteSize() for t in model.graph.initializer if t.ByteSize() > STUB_ABOVE_BYTES)

    skeleton = _skeleton(model)

    assert weights > 0
    assert skeleton.ByteSize() < model.ByteSize() - weights + 64 * len(model.graph.initializer)
    assert [t.name for t in skeleton.graph.initializer] == [t.name for t in model.graph.initializer]
    assert list(skeleton.graph.node) == list(model.graph.node)


def test_q8_graph_is_the_one_quantize_dynamic_writes(tiny_qwen, tmp_path):
    fp32 = tiny_qwen / "onnx" / "model.onnx"
    (tmp_path / "ours").mkdir()
    (tmp_path / "plain").mkdir()
    ours = DynamicInt8(per_token_activations=False).quantize(fp32, tmp_path / "ours" / "model.onnx")
    quantize_dynamic(fp32, tmp_path / "plain" / "model.onnx", op_types_to_quantize=["MatMul", "Gather"],
                     per_channel=True, weight_type=QuantType.QInt8, use_external_data_format=True,
                     extra_options={"MatMulConstBOnly": True})

    assert onnx.load(ours[0]) == onnx.load(tmp_path / "plain" / "model.onnx")
