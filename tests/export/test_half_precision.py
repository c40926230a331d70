"""fp16 and q4f16 (docs/contracts.md §1): half-precision graphs for WebGPU adapters with
shader-f16. Their inputs, outputs and every cache tensor stay float32, the recurrent and conv
state never pass through fp16, they are verified like every dtype, and the manifest never
recommends them to a backend that may be unable to run them."""

import itertools

import numpy as np
import onnx
import pytest

from botpsy_export.api import BACKEND_PREFERENCES, recommend
from botpsy_export.architectures import StateSpec
from botpsy_export.half_precision import to_half_precision
from botpsy_export.quantize import VARIANTS
from botpsy_export.runner import OnnxStepper

from .conftest import BUILTIN_MODELS, load_graph_without_weights, read_manifest
from .test_runs_in_onnxruntime_web import external_data_files, run_in_web

HALF_DTYPES = ("fp16", "q4f16")
EXPORTED_DTYPES = ("fp32", "q4") + HALF_DTYPES  # q4: what q4f16 is compared with
FLOAT, FLOAT16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
STATE_OPS = {"LinearAttention", "CausalConvWithState"}


@pytest.fixture(scope="module", params=BUILTIN_MODELS)
def half_folder(request, exported_model):
    return exported_model(request.param, EXPORTED_DTYPES)


@pytest.fixture(scope="module")
def tiny_half_folder(exported_model):
    return exported_model("tiny-qwen3.5", EXPORTED_DTYPES)


def _types_of_values(graph: onnx.GraphProto) -> dict:
    types = {value.name: value.type.tensor_type.elem_type
             for value in itertools.chain(graph.input, graph.output, graph.value_info)}
    types.update({tensor.name: tensor.data_type for tensor in graph.initializer})
    for node in graph.node:
        if node.op_type == "Cast":
            types[node.output[0]] = next(a.i for a in node.attribute if a.name == "to")
    return types


# --- the folder ------------------------------------------------------------------

def test_half_dtypes_use_transformers_js_names_and_require_shader_f16(half_folder):
    manifest = read_manifest(half_folder)
    assert set(manifest["dtypes"]) == set(EXPORTED_DTYPES)
    assert manifest["dtypes"]["fp16"]["file"] == "onnx/model_fp16.onnx"
    assert manifest["dtypes"]["q4f16"]["file"] == "onnx/model_q4f16.onnx"
    for dtype in HALF_DTYPES:
        entry = manifest["dtypes"][dtype]
        assert entry["requires"] == ["shader-f16"]
        assert entry["file"] in entry["files"] and set(entry["files"]) <= set(manifest["files"])
        assert "fp16" in entry["quantization"]
    assert manifest["dtypes"]["fp32"]["requires"] == []
    sizes = {d: sum(manifest["files"][name]["size"] for name in manifest["dtypes"][d]["files"])
             for d in EXPORTED_DTYPES}
    assert sizes["q4f16"] <= sizes["q4"] and sizes["q4f16"] < sizes["fp16"] < 0.6 * sizes["fp32"]


def test_recommendations_never_need_shader_f16_when_another_dtype_exists(half_folder):
    manifest = read_manifest(half_folder)
    # WASM runs fp16 graphs (and faster than fp32); WebGPU needs shader-f16 for them
    assert manifest["recommended_dtype"] == {"wasm": "fp16", "webgpu": "q4"}
    assert manifest["recommended_dtype_shader_f16"] == {"webgpu": "q4f16"}


@pytest.mark.parametrize("size", range(1, len(VARIANTS) + 1))
def test_webgpu_is_never_recommended_a_dtype_needing_shader_f16_if_another_was_exported(size):
    for dtypes in itertools.combinations(VARIANTS, size):
        plain = [d for d in dtypes if not getattr(VARIANTS[d], "requires", ())]
        recommended = recommend(BACKEND_PREFERENCES, dtypes)
        assert set(recommended.values()) <= set(dtypes)
        if plain:
            assert recommended["webgpu"] in plain, dtypes


# --- the graphs ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_inputs_outputs_and_cache_stay_float32_while_weights_are_fp16(half_folder, dtype):
    manifest = read_manifest(half_folder)
    graph = load_graph_without_weights(half_folder / manifest["dtypes"][dtype]["file"]).graph
    inputs = {value.name: value.type.tensor_type.elem_type for value in graph.input}
    outputs = {value.name: value.type.tensor_type.elem_type for value in graph.output}
    assert outputs["logits"] == FLOAT
    for entry in manifest["cache"]:
        assert entry["dtype"] == "float32"
        assert inputs[entry["input"]] == FLOAT and outputs[entry["output"]] == FLOAT, entry["input"]
    initializers = {tensor.name: tensor.data_type for tensor in graph.initializer}
    # fp16: the MatMul weights themselves; q4f16: the scales of the 4-bit blocks
    weight_op, weight_input = ("MatMul", 1) if dtype == "fp16" else ("MatMulNBits", 2)
    weights = {node.input[weight_input] for node in graph.node if node.op_type == weight_op} & set(initializers)
    assert weights, f"no {weight_op} with constant weights in the {dtype} graph"
    assert {initializers[name] for name in weights} == {FLOAT16}


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_recurrent_and_conv_state_never_pass_through_fp16(tiny_half_folder, dtype):
    manifest = read_manifest(tiny_half_folder)
    graph = load_graph_without_weights(tiny_half_folder / manifest["dtypes"][dtype]["file"]).graph
    types = _types_of_values(graph)
    producers = {output: node for node in graph.node for output in node.output}
    users = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    fixed_size = [entry for entry in manifest["cache"] if entry["kind"] in ("conv", "recurrent")]
    assert fixed_size
    for entry in fixed_size:
        assert {node.op_type for node in users[entry["input"]]} <= STATE_OPS, entry["input"]
        producer = producers[entry["output"]]
        while producer.op_type == "Identity":
            producer = producers[producer.input[0]]
        assert producer.op_type in STATE_OPS, entry["output"]
    for node in graph.node:
        if node.op_type in STATE_OPS:
            assert all(types.get(name) == FLOAT for name in node.input if name), (node.name, node.input)


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_no_value_is_rounded_to_fp16_and_straight_back(half_folder, dtype):
    manifest = read_manifest(half_folder)
    graph = load_graph_without_weights(half_folder / manifest["dtypes"][dtype]["file"]).graph
    casts = {node.output[0]: node for node in graph.node if node.op_type == "Cast"}
    target = lambda node: next(a.i for a in node.attribute if a.name == "to")
    round_trips = [cast.name for cast in casts.values() if target(cast) == FLOAT
                   and cast.input[0] in casts and target(casts[cast.input[0]]) == FLOAT16]
    assert round_trips == []


def test_a_graph_with_unnamed_nodes_is_refused_with_a_clear_error(tmp_path):
    helper = onnx.helper
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "unnamed",
        [helper.make_tensor_value_info("x", FLOAT, [1])], [helper.make_tensor_value_info("y", FLOAT, [1])])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(ValueError, match="unique name"):
        to_half_precision(path)


# --- verification ----------------------------------------------------------------

def test_verification_figures_are_reported_and_sane(half_folder):
    verification = read_manifest(half_folder)["verification"]
    assert verification["fp32"]["passed"]
    for dtype in HALF_DTYPES:
        result = verification[dtype]
        assert result["finite"] and result["passed"], dtype
        assert set(result["checks"]) == {"prefill_1_then_decode", "prefill_7_then_decode",
                                         "prefill_300_then_decode", "split_150_150"}
        assert 0.0 <= result["greedy_match"] <= 1.0
    fp16 = verification["fp16"]
    assert fp16["top1_agreement"] >= 0.95, fp16
    assert fp16["max_abs_logit_diff"] < 0.25, fp16
    # fp16 scales and activations cost q4 next to nothing: same top-1 agreement within 2 of 33 positions
    assert abs(verification["q4f16"]["top1_agreement"] - verification["q4"]["top1_agreement"]) <= 0.061, verification


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_half_graphs_run_in_onnxruntime_web_wasm_like_native(tiny_half_folder, dtype, tmp_path):
    manifest = read_manifest(tiny_half_folder)
    graph = tiny_half_folder / manifest["dtypes"][dtype]["file"]
    specs = [StateSpec(c["input"], c["output"], c["kind"], tuple(c["shape"]), c["seq_axis"])
             for c in manifest["cache"]]
    native = OnnxStepper(graph, specs)
    native.feed([17, 4, 902, 33, 1200, 8, 15])
    feeds = native.input_feeds([99])
    feeds.update({spec.input: state.copy() for spec, state in zip(specs, native.states)})
    expected = native.feed([99])

    web = run_in_web(graph, feeds, tmp_path, external_data_files(tiny_half_folder, manifest["dtypes"][dtype]))
    np.testing.assert_allclose(web["logits"].ravel(), expected, atol=1e-2, rtol=0)
    for spec, state in zip(specs, native.states):
        np.testing.assert_allclose(web[spec.output], state, atol=1e-2, rtol=0)
