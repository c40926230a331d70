"""Turn an fp32 graph into an fp16 one that still computes the numerically fragile parts in fp32.

Uses onnxruntime's own converter (`onnxruntime.transformers.float16`), which inserts a Cast
on every edge between an fp16 node and a node kept in fp32. Kept in fp32, and why:
- graph inputs and outputs (`keep_io_types`): logits stay float32 so sampling code is the
  same for every dtype, and every cache tensor (KV, conv, recurrent) stays float32, so one
  manifest `cache` list describes every dtype of a folder ("the recurrent state stays fp32");
- `LinearAttention` and `CausalConvWithState`: the DeltaNet recurrence accumulates over the
  whole conversation, and onnxruntime-web's fp16 support for these contrib ops is unverified;
- the DeltaNet gates (`Softplus`, `Exp`): the decay is compounded over every token;
- squares and their sums (`Pow`, `ReduceMean`, `ReduceSum`, `Sqrt`): RMSNorm and the q/k L2
  norms square activations, and an outlier channel of ~300 already overflows fp16 (max 65504);
- the RoPE angles (`Cos`, `Sin` and every node that feeds them): position x frequency rounded
  to fp16 is off by up to 0.125 rad at position 300 and by up to 8 rad at position 30000;
- the Concat(past, new) that makes a key/value cache output (`cache_output_concats`);
- every node fed only by the above (a norm's `+ eps` and `1 / sqrt`, the DeltaNet decay
  `-exp(A) * softplus(..)`, q/k/v from the DeltaNet conv to the recurrence): cheap elementwise work.
Everything else (the MatMuls, the embedding, attention, the MLP) runs in fp16. The converter
casts to fp16 and back between two neighbouring fp32 nodes; `drop_round_trip_casts` removes
those pairs (x^2 would overflow in between).
"""

from pathlib import Path

import onnx
from onnxruntime.transformers.float16 import convert_float_to_float16

FP32_OP_TYPES = frozenset({
    "LinearAttention", "CausalConvWithState",
    "Softplus", "Exp",
    "Pow", "ReduceMean", "ReduceSum", "Sqrt",
})
FP32_WITH_ANCESTORS_OP_TYPES = frozenset({"Cos", "Sin"})


def fp32_node_names(model: onnx.ModelProto) -> list[str]:
    """Nodes that stay fp32: the op types above, every ancestor of a RoPE Cos/Sin, and every
    node fed only by those (and constants): the `+ eps` and `1 / sqrt` of a norm, the decay
    `-exp(A) * softplus(..)`, the q/k/v between the DeltaNet conv and its recurrence."""
    nodes = model.graph.node
    producers = {output: node for node in nodes for output in node.output}
    keep = {node.name for node in nodes if node.op_type in FP32_OP_TYPES}
    keep |= {node.name for node in cache_output_concats(model)}
    pending = [node for node in nodes if node.op_type in FP32_WITH_ANCESTORS_OP_TYPES]
    while pending:
        node = pending.pop()
        if node.name not in keep:
            keep.add(node.name)
            pending.extend(producers[name] for name in node.input if name in producers)
    constants = {node.name for node in nodes if node.op_type == "Constant"}
    for node in nodes:  # graph order: a node's producers were decided before it
        fed_by = {producers[name].name for name in node.input if name in producers}
        if node.name not in constants and fed_by & keep and fed_by <= keep | constants:
            keep.add(node.name)
    users = {}
    for node in nodes:
        for name in node.input:
            users.setdefault(name, set()).add(node.name)
    keep |= {node.name for node in nodes if node.op_type == "Constant"
             and users.get(node.output[0]) and users[node.output[0]] <= keep}  # e.g. eps: not rounded
    return sorted(keep)


def cache_output_concats(model: onnx.ModelProto) -> list:
    """The Concat(past, new) nodes that make a graph output (a key/value cache).

    Kept fp32, so they read the float32 past input as is and stay the plain
    Concat(past input, new) pattern that `appending_graph.py` looks for (attention reads the
    Concat through a Cast to fp16). The values are the same: the past went through fp16 and
    back, exactly."""
    outputs = {value.name for value in model.graph.output}
    return [node for node in model.graph.node if node.op_type == "Concat" and node.output[0] in outputs]


def drop_round_trip_casts(model: onnx.ModelProto, fp32_nodes) -> int:
    """Bypass every Cast-to-fp16 + Cast-to-fp32 pair the converter put after an fp32 value.

    The converter casts each blocked node's outputs to fp16, and back to fp32 for a blocked
    neighbour or a float32 graph output: a precision loss for nothing (x^2 overflows fp16,
    the recurrent state would be rounded to fp16 on every call). Returns how many pairs.
    """
    graph = model.graph
    fp32_values = {name for node in graph.node if node.name in fp32_nodes for name in node.output}
    fp32_values |= {value.name for value in graph.input if value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    casts = {node.output[0]: node for node in graph.node if node.op_type == "Cast"}
    graph_outputs = {value.name for value in graph.output}
    bypassed, pairs = {}, 0
    for cast in casts.values():
        first = casts.get(cast.input[0])
        if _cast_target(cast) == onnx.TensorProto.FLOAT and first is not None \
                and _cast_target(first) == onnx.TensorProto.FLOAT16 and first.input[0] in fp32_values:
            if cast.output[0] in graph_outputs:  # keep the output's name: pass the fp32 value through
                cast.op_type = "Identity"
                del cast.attribute[:]
                cast.input[0] = first.input[0]
            else:
                bypassed[cast.output[0]] = first.input[0]
            pairs += 1
    for node in graph.node:
        for index, name in enumerate(node.input):
            if name in bypassed:
                node.input[index] = bypassed[name]
    _remove_unused_nodes(graph)
    _name_outputs_at_their_producers(graph)
    return pairs


def _name_outputs_at_their_producers(graph):
    """Fold each Identity that only renames a value into a graph output: the node making the
    value gets the output's name (the cache Concat stays a Concat that makes `present.*`)."""
    graph_outputs = {value.name for value in graph.output}
    producers = {name: node for node in graph.node for name in node.output}
    for identity in [node for node in graph.node if node.op_type == "Identity"]:
        value, output = identity.input[0], identity.output[0]
        producer = producers.get(value)
        if output in graph_outputs and producer is not None and value not in graph_outputs:
            producer.output[list(producer.output).index(value)] = output
            for node in graph.node:  # e.g. the Cast that takes the cache to fp16 for attention
                node.input[:] = [output if name == value else name for name in node.input]
            for info in graph.value_info:
                if info.name == value:
                    graph.value_info.remove(info)
                    break
            graph.node.remove(identity)


def _cast_target(node) -> int:
    return next(attribute.i for attribute in node.attribute if attribute.name == "to")


def _remove_unused_nodes(graph):
    """Drop nodes none of whose outputs is used (the bypassed casts), until none is left."""
    while True:
        used = {name for node in graph.node for name in node.input} | {value.name for value in graph.output}
        unused = [node for node in graph.node if not any(name in used for name in node.output)]
        if not unused:
            return
        for node in unused:
            graph.node.remove(node)


def _check_node_names(model: onnx.ModelProto):
    names = [node.name for node in model.graph.node]
    if "" in names or len(set(names)) != len(names):
        raise ValueError("half precision needs every node of the graph to have a unique name "
                         "(the fp32 node list is by name)")


def to_half_precision(fp32_path: Path) -> onnx.ModelProto:
    """The fp16 graph of the fp32 graph at `fp32_path`, float32 at its inputs and outputs.

    Given a path, the converter infers shapes file to file (`infer_shapes_path`), which works
    past the 2 GB protobuf limit that in-memory inference hits.
    """
    skeleton = onnx.load(fp32_path, load_external_data=False)
    _check_node_names(skeleton)
    fp32_nodes = fp32_node_names(skeleton)
    del skeleton
    half = convert_float_to_float16(str(fp32_path), keep_io_types=True, node_block_list=fp32_nodes)
    drop_round_trip_casts(half, set(fp32_nodes))
    sort_topologically(half.graph)
    return half


def sort_topologically(graph):
    """Reorder the nodes so each comes after the producers of its inputs, as the ONNX spec
    (and onnx.checker) wants: the converter appends the Casts it inserts at the end.
    Kahn's algorithm, keeping the original order among nodes that are ready."""
    import heapq

    nodes = list(graph.node)
    producer = {name: index for index, node in enumerate(nodes) for name in node.output}
    waiting_on = [0] * len(nodes)
    dependents = [[] for _ in nodes]
    for index, node in enumerate(nodes):
        for name in set(node.input):
            if name in producer:
                waiting_on[index] += 1
                dependents[producer[name]].append(index)
    ready = [index for index, count in enumerate(waiting_on) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for dependent in dependents[index]:
            waiting_on[dependent] -= 1
            if waiting_on[dependent] == 0:
                heapq.heappush(ready, dependent)
    if len(order) != len(nodes):
        raise ValueError("the graph has a cycle: its nodes cannot be sorted")
    copies = [onnx.NodeProto() for _ in order]
    for copy, index in zip(copies, order):
        copy.CopyFrom(nodes[index])
    del graph.node[:]
    graph.node.extend(copies)
