"""Quantization settings are frozen, validated data."""

import dataclasses

import pytest

from botpsy_export.quantize import VARIANTS, BlockInt4, DynamicInt8, variant_for


def test_variants_by_name_and_file():
    assert {name: v.file for name, v in VARIANTS.items()} == {
        "fp32": "onnx/model.onnx", "q8": "onnx/model_quantized.onnx", "q4": "onnx/model_q4.onnx",
        "fp16": "onnx/model_fp16.onnx", "q4f16": "onnx/model_q4f16.onnx"}
    assert variant_for("q4").block_size == 32


def test_settings_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        BlockInt4().block_size = 64


@pytest.mark.parametrize("size", [0, 8, 48, "32"])
def test_block_size_must_be_a_power_of_two_of_at_least_16(size):
    with pytest.raises(ValueError, match="block_size must be a power of two >= 16"):
        BlockInt4(block_size=size)


def test_bad_accuracy_level_and_flags():
    with pytest.raises(ValueError, match="accuracy_level"):
        BlockInt4(accuracy_level=7)
    with pytest.raises(TypeError, match="must be bools"):
        DynamicInt8(per_channel="yes")


def test_unknown_dtype_names_the_choices():
    with pytest.raises(ValueError, match="unknown dtype 'fp8'; choose from fp32, q8, q4"):
        variant_for("fp8")
