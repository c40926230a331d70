"""Keep onnxruntime's dynamic int8 quantizer at one copy of the fp32 graph in memory.

`ONNXQuantizer.__init__` (onnxruntime 1.32) refreshes its shape information with
`save_and_reload_model_with_shape_infer`: a deepcopy of the whole model, saved and loaded
back. With a 3.8 GB graph that holds the weights two and three times over (the 12.8 GB
peak of the real-dims export). Shape inference reads only the graph, so
`value_info_without_weight_copies` runs it on a skeleton whose large initializers are
stubs and writes the inferred shapes into the model itself; the quantized graph is the same.
"""

import contextlib
from unittest import mock

import onnx

STUB_ABOVE_BYTES = 1 << 16  # weights; shape-like constants (Reshape targets, axes) are far smaller


def infer_shapes_in_place(model: onnx.ModelProto) -> onnx.ModelProto:
    """What `save_and_reload_model_with_shape_infer` returns, without copying a weight."""
    inferred = onnx.shape_inference.infer_shapes(_skeleton(model))
    del model.graph.value_info[:]
    model.graph.value_info.extend(inferred.graph.value_info)
    for output, inferred_output in zip(model.graph.output, inferred.graph.output):
        output.CopyFrom(inferred_output)
    return model


def _skeleton(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every large initializer replaced by an external-data stub of its type and shape."""
    skeleton = onnx.ModelProto()
    _copy_fields(model, skeleton, skip=("graph",))
    _copy_fields(model.graph, skeleton.graph, skip=("initializer",))
    for tensor in model.graph.initializer:
        if tensor.ByteSize() <= STUB_ABOVE_BYTES:
            skeleton.graph.initializer.add().CopyFrom(tensor)
            continue
        stub = skeleton.graph.initializer.add(name=tensor.name, data_type=tensor.data_type)
        stub.dims.extend(tensor.dims)
        stub.data_location = onnx.TensorProto.EXTERNAL
        stub.external_data.add(key="location", value="stub-never-read")
    return skeleton


def _copy_fields(source, target, skip=()):
    for field, value in source.ListFields():
        if field.name in skip:
            continue
        if _is_repeated(field):
            getattr(target, field.name).extend(value)
        elif field.message_type is not None:
            getattr(target, field.name).CopyFrom(value)
        else:
            setattr(target, field.name, value)


def _is_repeated(field) -> bool:
    if hasattr(field, "is_repeated"):  # protobuf >= 5.28; `label` is gone in 7
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


@contextlib.contextmanager
def value_info_without_weight_copies():
    """While active, onnxruntime's quantizers infer shapes in place instead of copying the model."""
    from onnxruntime.quantization import base_quantizer, onnx_quantizer

    with mock.patch.object(onnx_quantizer, "save_and_reload_model_with_shape_infer", infer_shapes_in_place), \
            mock.patch.object(base_quantizer, "save_and_reload_model_with_shape_infer", infer_shapes_in_place):
        yield
