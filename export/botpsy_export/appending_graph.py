"""The appending graph: a standard graph whose seq-axis cache outputs hold only the new positions.

The standard graph returns present = Concat(past, new) for every key/value cache, which
transformers.js needs. A runtime that keeps the cache in its own growable buffer only needs
`new`: in the appending graph each cache output is `new` itself. The Concat stays inside,
where attention reads it, so both graphs compute the same thing from the same past, bit for
bit (only what comes out differs). Same input and output names; conv and recurrent states are
unchanged. The graph is edited without reading
its weights and saved beside the standard graph, pointing at the same external weights file.
"""

from pathlib import Path

import onnx

from .architectures import StateSpec
from .errors import AppendingGraphError

SUFFIX = ".appending.onnx"
NEW_POSITIONS_DIM = "sequence"  # the name input_ids uses for the number of new tokens


def appending_path(standard_path: Path) -> Path:
    """onnx/model_q4.onnx -> onnx/model_q4.appending.onnx"""
    return standard_path.with_name(standard_path.name.removesuffix(".onnx") + SUFFIX)


def make_appending(model: onnx.ModelProto, state_specs: list[StateSpec]) -> onnx.ModelProto:
    """Turn `model` (edited in place, and returned) into its appending graph.

    For each spec with a seq_axis, the node producing `spec.output` must be
    Concat(spec.input, X) along seq_axis. Its result is renamed to an inner value (what reads
    it inside the graph follows), an Identity(X) makes the output, and the output's seq dim
    becomes "sequence"; a Concat nothing reads any more is dropped. Raises
    AppendingGraphError naming the output otherwise.
    """
    graph = model.graph
    producers = {name: node for node in graph.node for name in node.output}
    outputs = {value.name: value for value in graph.output}
    output_names = [value.name for value in graph.output]
    for spec in state_specs:
        if spec.seq_axis is None:
            continue
        concat = producers.get(spec.output)
        where = f"cache output {spec.output!r}"
        if spec.output not in outputs:
            raise AppendingGraphError(f"{where} is not an output of the graph")
        if concat is None or concat.op_type != "Concat":
            found = concat.op_type if concat is not None else "a graph input or initializer"
            raise AppendingGraphError(f"{where} is made by {found}, expected Concat({spec.input}, new)")
        axis = next((a.i for a in concat.attribute if a.name == "axis"), None)
        rank = len(spec.shape)
        if axis is None or axis % rank != spec.seq_axis:
            raise AppendingGraphError(f"{where}: its Concat joins along axis {axis}, "
                                      f"expected the seq axis {spec.seq_axis}")
        if len(concat.input) != 2 or concat.input[0] != spec.input:
            raise AppendingGraphError(f"{where}: its Concat takes {list(concat.input)}, "
                                      f"expected [{spec.input!r}, <new positions>]")
        if output_names.count(spec.output) != 1:
            raise AppendingGraphError(f"{where} appears {output_names.count(spec.output)} times among the outputs")
        inner = f"{spec.output}/past_and_new"
        concat.output[0] = inner
        readers = [node for node in graph.node if spec.output in node.input]
        for node in readers:
            node.input[:] = [inner if name == spec.output else name for name in node.input]
        identity = onnx.helper.make_node("Identity", [concat.input[1]], [spec.output],
                                         name=f"{spec.output}/new_positions")
        graph.node.append(identity)  # X is made before the Concat that read it: order holds
        if not readers:
            graph.node.remove(concat)
        dims = outputs[spec.output].type.tensor_type.shape.dim
        if len(dims) != rank:
            raise AppendingGraphError(f"{where} declares {len(dims)} dims, the cache spec has {rank}")
        dims[spec.seq_axis].Clear()
        dims[spec.seq_axis].dim_param = NEW_POSITIONS_DIM
    # Shapes inferred for the standard graph would contradict the new output shapes.
    stale = [value for value in graph.value_info if value.name in outputs]
    for value in stale:
        graph.value_info.remove(value)
    return model


def write_appending_graph(standard_path: Path, state_specs: list[StateSpec]) -> Path:
    """Write the appending graph of the graph at `standard_path` beside it and check it.

    The weights are never read: the graph keeps its references to the standard graph's
    external data file (same folder, same offsets)."""
    model = onnx.load(standard_path, load_external_data=False)
    make_appending(model, state_specs)
    path = appending_path(Path(standard_path))
    onnx.save_model(model, path)
    onnx.checker.check_model(str(path))
    return path
