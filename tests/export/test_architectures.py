"""Architectures are registered classes; their graph modules compute what transformers computes."""

import collections

import pytest
import torch

from botpsy_export.architectures import architecture_for, supported_model_types
from botpsy_export.builtins import build_tiny_qwen
from botpsy_export.errors import UnknownArchitectureError

from .conftest import load_graph_without_weights, read_manifest


def test_registry_knows_llama_and_qwen3_5():
    assert {"llama", "qwen3_5", "qwen3_5_text"} <= set(supported_model_types())
    assert architecture_for("qwen3_5") is architecture_for("qwen3_5_text")
    with pytest.raises(UnknownArchitectureError, match="supported: llama"):
        architecture_for("mamba")


def test_tiny_qwen_has_both_layer_kinds():
    model, _ = build_tiny_qwen()
    assert set(model.config.layer_types) == {"linear_attention", "full_attention"}


@pytest.mark.parametrize("split", [(1,), (7,), (40,), (1, 6, 33), (20, 1, 1, 18)])
def test_tiny_qwen_graph_module_matches_transformers_across_calls(split):
    model, tokenizer = build_tiny_qwen()
    arch = architecture_for(model.config.model_type)(model, tokenizer)
    graph = arch.graph_module()
    ids = torch.randint(0, model.config.vocab_size, (1, sum(split)), generator=torch.Generator().manual_seed(3))
    expected = arch.reference_logits(ids)
    states, done = [spec.zeros() for spec in arch.state_specs()], 0
    with torch.no_grad():
        for count in split:
            inputs = [ids[:, done:done + count], torch.ones(1, done + count, dtype=torch.long)]
            if arch.takes_position_ids:
                inputs.append(torch.arange(done, done + count)[None])
            logits, *states = graph(*inputs, *states)
            done += count
            assert logits.shape == (1, 1, model.config.vocab_size)
            torch.testing.assert_close(logits[0, 0], expected[done - 1], atol=1e-4, rtol=0)


def test_qwen_graph_lowers_delta_net_to_contrib_ops_without_loops(tiny_qwen):
    manifest = read_manifest(tiny_qwen)
    linear_layers = sum(c["kind"] == "recurrent" for c in manifest["cache"])
    assert linear_layers == 3
    for entry in manifest["dtypes"].values():
        graph = load_graph_without_weights(tiny_qwen / entry["file"]).graph
        ops = collections.Counter((n.domain, n.op_type) for n in graph.node)
        assert ops[("com.microsoft", "LinearAttention")] == linear_layers
        assert ops[("com.microsoft", "CausalConvWithState")] == linear_layers
        assert not {"Scan", "Loop", "If"} & {op for _, op in ops}


def _float_matrices(graph):
    """fp32 weight matrices left in a graph (norm vectors and conv kernels are not matrices)."""
    return [t.name for t in graph.initializer if t.data_type == 1 and len(t.dims) == 2
            and min(t.dims) >= 16 and "scale" not in t.name]


# q8 scales activations per token (no DynamicQuantizeLinear, which scales a whole call at once).
@pytest.mark.parametrize("dtype, ops, absent_ops", [("q8", {"MatMulInteger"}, {"DynamicQuantizeLinear"}),
                                                    ("q4", {"MatMulNBits", "GatherBlockQuantized"}, set())])
def test_quantized_graphs_quantize_every_matrix_head_and_embedding_included(any_model, dtype, ops, absent_ops):
    manifest = read_manifest(any_model)
    graph = load_graph_without_weights(any_model / manifest["dtypes"][dtype]["file"]).graph
    graph_ops = {n.op_type for n in graph.node}
    assert ops <= graph_ops
    assert not absent_ops & graph_ops
    assert _float_matrices(graph) == []
    fp32 = load_graph_without_weights(any_model / manifest["dtypes"]["fp32"]["file"]).graph
    assert len(_float_matrices(fp32)) > 0
