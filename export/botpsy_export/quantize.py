"""Quantization variants as frozen, validated settings; each turns the fp32 graph into its dtype.

All variants quantize every constant-weight MatMul, the (untied) LM head included, and the
embedding table. States stay fp32; activations too, except in fp16 and q4f16.
"""

import contextlib
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import onnx

from .half_precision import to_half_precision
from .per_token_activations import quantize_activations_per_token
from .to_onnx import save_model


@contextlib.contextmanager
def _quiet_quantizer_logs():
    """onnxruntime's quantizers log advice on the root logger; keep the CLI output clean."""
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(previous)


@dataclass(frozen=True)
class Fp32:
    name: ClassVar[str] = "fp32"
    file: ClassVar[str] = "onnx/model.onnx"

    def describe(self) -> str:
        return "fp32 weights"


@dataclass(frozen=True)
class DynamicInt8:
    """q8: int8 weights, activations quantized at run time (MatMulInteger).

    The embedding becomes an int8 Gather + DequantizeLinear. Runs on onnxruntime-web WASM.
    `per_token_activations` gives each token its own activation scale
    (`per_token_activations.py`), so a token's logits do not depend on how the prompt was
    split into calls (needed for token-identical prefix reuse). `smoothing_alpha` (None: off)
    rescales the model first (`smoothing.py`): outlier channels otherwise dominate a token's range.
    """

    name: ClassVar[str] = "q8"
    file: ClassVar[str] = "onnx/model_quantized.onnx"
    per_channel: bool = True
    quantize_embedding: bool = True
    smoothing_alpha: float | None = 0.8
    per_token_activations: bool = True

    def __post_init__(self):
        flags = (self.per_channel, self.quantize_embedding, self.per_token_activations)
        if not all(isinstance(flag, bool) for flag in flags):
            raise TypeError("DynamicInt8: per_channel, quantize_embedding and per_token_activations must be bools")
        alpha = self.smoothing_alpha
        if alpha is not None and not (isinstance(alpha, float) and 0.0 < alpha < 1.0):
            raise ValueError(f"DynamicInt8: smoothing_alpha must be None or a float in (0, 1), got {alpha!r}")

    def describe(self) -> str:
        smoothing = f", smoothed alpha {self.smoothing_alpha}" if self.smoothing_alpha else ""
        activations = "per-token" if self.per_token_activations else "per-tensor"
        weights = "per-channel" if self.per_channel else "per-tensor"
        return f"int8 dynamic MatMulInteger ({weights} weights, {activations} activations{smoothing})"

    def quantize(self, fp32_path: Path, out_path: Path) -> list[Path]:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        from .quantizer_memory import value_info_without_weight_copies

        op_types = ["MatMul"] + (["Gather"] if self.quantize_embedding else [])
        with (tempfile.TemporaryDirectory(dir=out_path.parent, prefix=".q8-") as scratch, _quiet_quantizer_logs(),
              value_info_without_weight_copies()):
            scratch_path = Path(scratch) / "model.onnx"
            quantize_dynamic(
                fp32_path, scratch_path, op_types_to_quantize=op_types, per_channel=self.per_channel,
                weight_type=QuantType.QInt8, use_external_data_format=True,
                extra_options={"MatMulConstBOnly": True},
            )
            model = onnx.load(scratch_path)
            if self.per_token_activations:
                quantize_activations_per_token(model)
            return save_model(model, out_path)


@dataclass(frozen=True)
class BlockInt4:
    """q4: 4-bit block-quantized weights (MatMulNBits), embedding as GatherBlockQuantized."""

    name: ClassVar[str] = "q4"
    file: ClassVar[str] = "onnx/model_q4.onnx"
    block_size: int = 32
    symmetric: bool = True
    accuracy_level: int | None = None
    quantize_embedding: bool = True

    def __post_init__(self):
        size = self.block_size
        if not isinstance(size, int) or size < 16 or size & (size - 1):
            raise ValueError(f"BlockInt4: block_size must be a power of two >= 16, got {size!r}")
        if self.accuracy_level not in (None, 0, 1, 2, 3, 4):
            raise ValueError(f"BlockInt4: accuracy_level must be None or 0-4, got {self.accuracy_level!r}")

    def describe(self) -> str:
        return f"int4 MatMulNBits, block {self.block_size}, {'symmetric' if self.symmetric else 'asymmetric'}"

    def quantize(self, fp32_path: Path, out_path: Path) -> list[Path]:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        op_types = ("MatMul", "Gather") if self.quantize_embedding else ("MatMul",)
        with _quiet_quantizer_logs():
            quantizer = MatMulNBitsQuantizer(
                onnx.load(fp32_path), bits=4, block_size=self.block_size, is_symmetric=self.symmetric,
                accuracy_level=self.accuracy_level, op_types_to_quantize=op_types,
                quant_axes=(("MatMul", 0), ("Gather", 1)),
            )
            quantizer.process()
        return save_model(quantizer.model.model, out_path)


@dataclass(frozen=True)
class Fp16:
    """fp16: half-precision weights and activations for WebGPU adapters with `shader-f16`.

    Inputs, outputs (logits, every cache tensor) and the numerically fragile nodes stay fp32
    (`half_precision.py`).
    """

    name: ClassVar[str] = "fp16"
    file: ClassVar[str] = "onnx/model_fp16.onnx"
    requires: ClassVar[tuple] = ("shader-f16",)

    def describe(self) -> str:
        return "fp16 weights and activations (norms, RoPE angles, DeltaNet, inputs and outputs fp32)"

    def quantize(self, fp32_path: Path, out_path: Path) -> list[Path]:
        return save_model(to_half_precision(fp32_path), out_path)


@dataclass(frozen=True)
class BlockInt4Half(BlockInt4):
    """q4f16: the fp16 graph with its weights block-quantized to 4 bits (fp16 scales)."""

    name: ClassVar[str] = "q4f16"
    file: ClassVar[str] = "onnx/model_q4f16.onnx"
    requires: ClassVar[tuple] = ("shader-f16",)
    starts_from: ClassVar[str] = "fp16"  # export_model passes that graph when it wrote it already

    def describe(self) -> str:
        return super().describe() + " on the fp16 graph (fp16 scales and activations)"

    def quantize(self, fp32_path: Path, out_path: Path) -> list[Path]:
        with tempfile.TemporaryDirectory(dir=out_path.parent, prefix=".q4f16-") as scratch:
            half_path = Path(scratch) / "model_fp16.onnx"
            Fp16().quantize(fp32_path, half_path)
            return self.quantize_from(half_path, out_path)

    def quantize_from(self, fp16_path: Path, out_path: Path) -> list[Path]:
        """Quantize an fp16 graph written by `Fp16` (skips converting the fp32 graph again)."""
        return super().quantize(fp16_path, out_path)


VARIANTS = {variant.name: variant for variant in (Fp32(), DynamicInt8(), BlockInt4(), Fp16(), BlockInt4Half())}


def variant_for(name: str):
    try:
        return VARIANTS[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; choose from {', '.join(VARIANTS)}") from None
