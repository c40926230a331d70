"""The appending graph: a standard graph whose seq-axis cache outputs hold only the new positions.

The standard graph returns present = Concat(past, new) for every key/value cache, which
transformers.js needs. A runtime that keeps the cache in its own growable buffer only needs
`new`: in the appending graph each cache output is `new` itself. The Concat stays inside,
where attention reads it, so both graphs compute the same thing from the same past, bit for
bit (only what comes out differs). Same output names; conv and recurrent states are
unchanged.

The appending graph takes one input more, `num_logits` (int64 [1]): how many of the call's last
positions get logits ([1, num_logits, vocab]; 1 gives what the standard graph gives). A runtime
that guesses several tokens ahead checks them all in one call with it (prompt-lookup decoding in
web/runtime/draft-decoding.js).

The graph is edited without reading its weights and saved beside the standard graph, pointing
at the same external data files (every shard, same offsets).
"""

from pathlib import Path

import onnx
from onnx import numpy_helper

from .architectures import StateSpec
from .errors import AppendingGraphError

SUFFIX = ".appending.onnx"
NEW_POSITIONS_DIM = "sequence"  # the name input_ids uses for the number of new tokens
NUM_LOGITS = "num_logits"  # the input (and the logits dim) saying how many last positions get logits
APPENDING_INPUTS = {NUM_LOGITS: NUM_LOGITS}  # role -> name of the inputs only appending graphs take


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


def _constant_ints(name: str, producers: dict, initializers: dict):
    """The int values of a Constant node's output or an initializer, else None."""
    if name in initializers:
        return numpy_helper.to_array(initializers[name]).reshape(-1).tolist()
    node = producers.get(name)
    if node is not None and node.op_type == "Constant":
        value = next((a for a in node.attribute if a.name == "value"), None)
        if value is not None:
            return numpy_helper.to_array(value.t).reshape(-1).tolist()
    return None


def _last_position_slice(graph, logits: str):
    """The head's cut of the hidden states to the last position: of the Slice nodes taking
    starts [-1] on axis 1, the one nearest (upstream) to the logits output."""
    producers = {name: node for node in graph.node for name in node.output}
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    frontier, visited = [logits], set()
    while frontier:
        following = []
        for value in frontier:
            node = producers.get(value)
            if node is None or id(node) in visited:
                continue
            visited.add(id(node))
            if node.op_type == "Slice" and len(node.input) >= 4 and \
                    _constant_ints(node.input[1], producers, initializers) == [-1] and \
                    _constant_ints(node.input[3], producers, initializers) == [1]:
                return node
            following.extend(node.input)
        frontier = following
    return None


def add_num_logits_input(model: onnx.ModelProto, logits: str = "logits") -> onnx.ModelProto:
    """Make the head score the last `num_logits` positions instead of only the last one
    (`model` edited in place, and returned). Raises AppendingGraphError when the head has no
    last-position Slice to widen."""
    graph = model.graph
    head_slice = _last_position_slice(graph, logits)
    if head_slice is None:
        raise AppendingGraphError(f"no Slice(starts=[-1], axes=[1]) leads to {logits!r}: "
                                  "cannot give the graph a num_logits input")
    negated = f"{NUM_LOGITS}/negated"
    graph.node.insert(0, onnx.helper.make_node("Neg", [NUM_LOGITS], [negated], name=negated))
    old_starts, head_slice.input[1] = head_slice.input[1], negated
    if not any(old_starts in node.input for node in graph.node):
        for node in [node for node in graph.node if old_starts in node.output]:
            graph.node.remove(node)
    graph.input.append(onnx.helper.make_tensor_value_info(NUM_LOGITS, onnx.TensorProto.INT64, [1]))
    output = next(value for value in graph.output if value.name == logits)
    dims = output.type.tensor_type.shape.dim
    dims[1].Clear()
    dims[1].dim_param = NUM_LOGITS
    # Shapes recorded between the Slice and the logits said 1 position.
    downstream, frontier = set(), {head_slice.output[0]}
    while frontier:
        downstream |= frontier
        frontier = {out for node in graph.node if set(node.input) & frontier for out in node.output} - downstream
    for value in [value for value in graph.value_info if value.name in downstream]:
        graph.value_info.remove(value)
    return model


def write_appending_graph(standard_path: Path, state_specs: list[StateSpec]) -> Path:
    """Write the appending graph of the graph at `standard_path` beside it and check it.

    The weights are never read: the graph keeps its references to the standard graph's
    external data files (same folder, same shards, same offsets)."""
    model = onnx.load(standard_path, load_external_data=False)
    make_appending(model, state_specs)
    add_num_logits_input(model)
    path = appending_path(Path(standard_path))
    onnx.save_model(model, path)
    onnx.checker.check_model(str(path))
    return path
