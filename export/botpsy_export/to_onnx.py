"""Trace an architecture's graph module to an fp32 ONNX file that onnxruntime-web 1.30 accepts."""

import tempfile
from pathlib import Path

import onnx
import torch

from .architectures import Architecture
from .external_data import has_external_data, save_with_external_data

OPSET = 18
MAX_IR_VERSION = 10  # onnxruntime-web 1.30 rejects IR > 13; opset 18 needs >= 8
TRACE_PAST_LENGTH = 3
TRACE_NEW_TOKENS = 2


def model_input_names(arch: Architecture) -> list[str]:
    """The graph's inputs other than the cache (the manifest's `inputs`)."""
    return ["input_ids", "attention_mask"] + (["position_ids"] if arch.takes_position_ids else [])


def graph_input_names(arch: Architecture) -> list[str]:
    return model_input_names(arch) + [s.input for s in arch.state_specs()]


def graph_output_names(arch: Architecture) -> list[str]:
    return ["logits"] + [s.output for s in arch.state_specs()]


def _example_inputs(arch: Architecture):
    past, new = TRACE_PAST_LENGTH, TRACE_NEW_TOKENS
    states = []
    for spec in arch.state_specs():
        shape = list(spec.shape)
        if spec.seq_axis is not None:
            shape[spec.seq_axis] = past
        states.append(torch.randn(shape) * 0.1)
    inputs = [torch.tensor([[5, 7]], dtype=torch.long)[:, :new], torch.ones(1, past + new, dtype=torch.long)]
    if arch.takes_position_ids:
        inputs.append(torch.arange(past, past + new, dtype=torch.long)[None])
    return (*inputs, *states)


def _dynamic_axes(arch: Architecture) -> dict:
    axes = {"input_ids": {1: "sequence"}, "attention_mask": {1: "total_sequence"}}
    if arch.takes_position_ids:
        axes["position_ids"] = {1: "sequence"}
    for spec in arch.state_specs():
        if spec.seq_axis is not None:
            axes[spec.input] = {spec.seq_axis: "past_sequence"}
            axes[spec.output] = {spec.seq_axis: "total_sequence"}
    return axes


def save_model(model: onnx.ModelProto, path: Path, source_dir: Path | None = None) -> list[Path]:
    """Save with the weights in `<name>_data` (then `_data_1`, ... past 1 GiB each:
    external_data.py) beside the graph; returns the files written, graph first.

    Always external, even for small graphs: the appending graph (`appending_graph.py`) is
    saved beside it and points at the same weights files, so the weights are downloaded once.
    Tensors already external are streamed from `source_dir`.
    """
    model.ir_version = min(model.ir_version, MAX_IR_VERSION)
    return save_with_external_data(model, path, source_dir)


def export_fp32(arch: Architecture, path: Path) -> list[Path]:
    """Export the fp32 graph to `path`; returns the files written (graph + external data)."""
    module = arch.graph_module()
    path.parent.mkdir(parents=True, exist_ok=True)
    # The TorchScript exporter may spill one file per parameter: keep that in a scratch folder.
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".trace-") as scratch:
        trace_path = Path(scratch) / "model.onnx"
        with torch.no_grad():
            torch.onnx.export(
                module, _example_inputs(arch), str(trace_path), dynamo=False, opset_version=OPSET,
                input_names=graph_input_names(arch), output_names=graph_output_names(arch),
                dynamic_axes=_dynamic_axes(arch), do_constant_folding=True,
                custom_opsets={"com.microsoft": 1} if arch.uses_contrib_ops else None,
            )
        del module
        model = onnx.load(trace_path, load_external_data=False)
        _check_io(model, arch)
        _declare_output_shapes(model, arch)
        # A 4 GB graph is never held in RAM: its external tensors are streamed into the shards.
        return save_model(model, path, Path(scratch) if has_external_data(model) else None)


def _set_dims(value_info, dims):
    shape = value_info.type.tensor_type.shape
    shape.ClearField("dim")
    for dim in dims:
        if isinstance(dim, str):
            shape.dim.add().dim_param = dim
        else:
            shape.dim.add().dim_value = dim


def _declare_output_shapes(model: onnx.ModelProto, arch: Architecture):
    """Write the true output shapes (the tracer cannot see through contrib ops or the head slice)."""
    outputs = {o.name: o for o in model.graph.output}
    _set_dims(outputs["logits"], [1, 1, arch.config.vocab_size])
    for spec in arch.state_specs():
        dims = list(spec.shape)
        if spec.seq_axis is not None:
            dims[spec.seq_axis] = "total_sequence"
        _set_dims(outputs[spec.output], dims)


def _check_io(model: onnx.ModelProto, arch: Architecture):
    inputs = [i.name for i in model.graph.input]
    outputs = [o.name for o in model.graph.output]
    if inputs != graph_input_names(arch) or outputs != graph_output_names(arch):
        raise RuntimeError(f"traced graph has inputs {inputs} and outputs {outputs}, "
                           f"expected {graph_input_names(arch)} -> {graph_output_names(arch)}")
