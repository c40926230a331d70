"""Appending graphs (docs/contracts.md §1): beside each dtype's graph, the same graph whose
key/value cache outputs hold only the new positions, for a runtime that keeps the cache in its
own buffer (web/runtime on WASM). Same names, same weights file, and the same nodes on the same
inputs: driven as the runtime drives it, it gives the standard graph's logits bit for bit. One
input more, num_logits: how many of the call's last positions get logits (the runtime checks
several guessed tokens in one call with it)."""

import json
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from botpsy_export.appending_graph import APPENDING_INPUTS, add_num_logits_input, appending_path, make_appending
from botpsy_export.architectures import StateSpec
from botpsy_export.errors import AppendingGraphError
from botpsy_export.runner import AppendingStepper, OnnxStepper
from botpsy_export.verify_appending import verify_appending_graph

from .conftest import BUILTIN_MODELS, load_graph_without_weights, read_manifest
from .test_half_precision import EXPORTED_DTYPES as HALF_FOLDER_DTYPES

GREEDY_TOKENS = 12


@pytest.fixture(scope="module", params=[(name, dtypes) for name in BUILTIN_MODELS
                                        for dtypes in (("fp32", "q8", "q4"), HALF_FOLDER_DTYPES)],
                ids=lambda param: f"{param[0]}-{'-'.join(param[1])}")
def folder(request, exported_model):
    """Every exported folder the export tests use: all five dtypes, both architectures."""
    return exported_model(*request.param)


def _specs(manifest):
    return [StateSpec(c["input"], c["output"], c["kind"], tuple(c["shape"]), c["seq_axis"])
            for c in manifest["cache"]]


def _dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value_info.type.tensor_type.shape.dim]


def _external_tensors(graph):
    return {tensor.name: {entry.key: entry.value for entry in tensor.external_data}
            for tensor in graph.initializer if tensor.data_location == TensorProto.EXTERNAL}


# --- the folder ------------------------------------------------------------------

def test_every_dtype_has_an_appending_graph_with_the_standard_graphs_names(folder):
    manifest = read_manifest(folder)
    for dtype, entry in manifest["dtypes"].items():
        assert entry["appending_file"] == entry["file"].removesuffix(".onnx") + ".appending.onnx", dtype
        assert entry["appending_file"] in manifest["files"] and entry["appending_file"] not in entry["files"]
        standard = load_graph_without_weights(folder / entry["file"]).graph
        appending = load_graph_without_weights(folder / entry["appending_file"]).graph
        assert [(i.name, _dims(i)) for i in appending.input] == \
            [(i.name, _dims(i)) for i in standard.input] + [("num_logits", [1])]
        assert manifest["appending_inputs"] == {"num_logits": "num_logits"} == APPENDING_INPUTS
        assert [o.name for o in appending.output] == [o.name for o in standard.output]
        outputs = {o.name: o for o in appending.output}
        standard_outputs = {o.name: o for o in standard.output}
        assert _dims(outputs["logits"]) == [1, "num_logits", manifest["vocab_size"]]
        for c in manifest["cache"]:
            expected = _dims(standard_outputs[c["output"]])
            if c["seq_axis"] is not None:
                expected[c["seq_axis"]] = "sequence"  # the new tokens, as input_ids counts them
            assert _dims(outputs[c["output"]]) == expected, (dtype, c["output"])


def test_the_cache_concats_stay_inside_and_identities_return_the_new_positions(folder):
    manifest = read_manifest(folder)
    growing = {c["output"] for c in manifest["cache"] if c["seq_axis"] is not None}
    assert growing
    for entry in manifest["dtypes"].values():
        standard = load_graph_without_weights(folder / entry["file"]).graph
        appending = load_graph_without_weights(folder / entry["appending_file"]).graph
        producers = {name: node for node in appending.node for name in node.output}
        assert {producers[name].op_type for name in growing} == {"Identity"}, entry["file"]
        for name in growing:  # attention still reads past + new, under an inner name
            assert any(f"{name}/past_and_new" in node.input for node in appending.node), (entry["file"], name)
        # plus num_logits: a Neg gives the head's Slice its start instead of a Constant -1
        expected = Counter(node.op_type for node in standard.node) + Counter({"Identity": len(growing), "Neg": 1})
        expected -= Counter({"Constant": 1})
        assert Counter(node.op_type for node in appending.node) == expected, entry["file"]


def test_one_weights_file_per_dtype_shared_by_both_graphs(folder):
    manifest = read_manifest(folder)
    onnx_files = {name for name in manifest["files"] if name.startswith("onnx/")}
    expected = set()
    for dtype, entry in manifest["dtypes"].items():
        data = entry["file"] + "_data"
        assert entry["files"] == [entry["file"], data], dtype
        expected |= {entry["file"], data, entry["appending_file"]}
        standard = _external_tensors(load_graph_without_weights(folder / entry["file"]).graph)
        appending = _external_tensors(load_graph_without_weights(folder / entry["appending_file"]).graph)
        assert standard and appending == standard, dtype  # same tensors, same file, same offsets
        assert {info["location"] for info in appending.values()} == {data.removeprefix("onnx/")}
        # no second copy of the weights: the appending graph is a small file
        assert manifest["files"][entry["appending_file"]]["size"] < 0.1 * manifest["files"][data]["size"], dtype
    assert onnx_files == expected


def test_config_tells_transformers_js_which_graphs_have_external_data(folder):
    manifest = read_manifest(folder)
    config = json.loads((folder / "config.json").read_text())
    expected = {entry["file"].removeprefix("onnx/"): len(entry["files"]) - 1 for entry in manifest["dtypes"].values()}
    assert config["transformers.js_config"]["use_external_data_format"] == expected


def test_appending_graphs_are_verified_against_the_standard_graphs(folder):
    manifest = read_manifest(folder)
    for dtype in manifest["dtypes"]:
        result = manifest["verification"][dtype]["appending"]
        assert result["passed"] is True, (dtype, result)
        assert result["max_abs_logit_diff"] == 0.0 and result["greedy_tokens_equal"] is True, (dtype, result)
        assert result["positions_scored_in_one_call"] == 9, (dtype, result)
        assert result["one_call_greedy_agreement"] >= 0.75, (dtype, result)


def test_verification_catches_an_appending_graph_that_computes_something_else(smollm2):
    manifest = read_manifest(smollm2)
    fp32, q4 = manifest["dtypes"]["fp32"], manifest["dtypes"]["q4"]
    prompt = list(range(100, 120))
    result = verify_appending_graph(smollm2 / fp32["file"], smollm2 / q4["appending_file"], _specs(manifest),
                                    prompt, "fp32")
    assert result["passed"] is False
    assert result["max_abs_logit_diff"] > 0.01


# --- running it ------------------------------------------------------------------

def _random_past_feeds(stepper, specs, past, token_ids, rng):
    """Feeds for `token_ids` after a random past of `past` positions."""
    feeds = {"input_ids": np.asarray([token_ids], dtype=np.int64),
             "attention_mask": np.ones((1, past + len(token_ids)), dtype=np.int64)}
    stepper.length = past
    if "position_ids" in {i.name for i in stepper.session.get_inputs()}:
        feeds["position_ids"] = stepper.input_feeds(token_ids)["position_ids"]
    for spec in specs:
        shape = list(spec.shape)
        if spec.seq_axis is not None:
            shape[spec.seq_axis] = past
        feeds[spec.input] = rng.standard_normal(shape).astype(np.float32)
    return feeds


@pytest.mark.parametrize("model_name", BUILTIN_MODELS)
def test_cache_outputs_hold_only_the_new_positions(exported_model, model_name):
    folder = exported_model(model_name)
    manifest = read_manifest(folder)
    specs = _specs(manifest)
    for dtype, entry in manifest["dtypes"].items():
        standard = OnnxStepper(folder / entry["file"], specs)
        appending = OnnxStepper(folder / entry["appending_file"], specs)
        feeds = _random_past_feeds(standard, specs, past=5, token_ids=[11, 12, 13], rng=np.random.default_rng(1))
        full = dict(zip([o.name for o in standard.session.get_outputs()], standard.session.run(None, feeds)))
        feeds_appending = {**feeds, "num_logits": np.array([1], dtype=np.int64)}
        new = dict(zip([o.name for o in appending.session.get_outputs()], appending.session.run(None, feeds_appending)))
        np.testing.assert_array_equal(new["logits"], full["logits"])
        for spec in specs:
            if spec.seq_axis is None:
                np.testing.assert_array_equal(new[spec.output], full[spec.output])
            else:
                assert new[spec.output].shape[spec.seq_axis] == 3, (dtype, spec.output)
                tail = np.take(full[spec.output], range(5, 8), axis=spec.seq_axis)
                np.testing.assert_array_equal(new[spec.output], tail)


def _greedy(stepper, prompt, count):
    """The prompt in two calls, then `count` greedy tokens one by one."""
    stepper.feed(prompt[:8])
    tokens, logits = [], stepper.feed(prompt[8:])
    rows = [logits]
    for _ in range(count):
        tokens.append(int(np.argmax(logits)))
        logits = stepper.feed(tokens[-1:])
        rows.append(logits)
    return tokens, np.stack(rows)


def test_driven_as_the_runtime_drives_it_it_gives_the_standard_graphs_logits_exactly(folder):
    """Past fed = the processed positions, the returned new positions appended: every dtype,
    q8 included, gives the standard graph's logits bit for bit, so reuse stays token-exact."""
    manifest = read_manifest(folder)
    specs = _specs(manifest)
    prompt = list(np.random.default_rng(5).integers(3, manifest["vocab_size"], size=21))
    for dtype, entry in manifest["dtypes"].items():
        appending = AppendingStepper(folder / entry["appending_file"], specs)
        tokens, logits = _greedy(appending, prompt, GREEDY_TOKENS)
        assert appending.length == len(prompt) + GREEDY_TOKENS
        expected_tokens, expected = _greedy(OnnxStepper(folder / entry["file"], specs), prompt, GREEDY_TOKENS)
        np.testing.assert_array_equal(logits, expected, err_msg=dtype)
        assert tokens == expected_tokens, dtype
        assert np.abs(logits[0] - logits[-1]).max() > 0.01, "the logits should move as the cache grows"


def test_a_cut_back_cache_goes_on_like_a_fresh_run(smollm2):
    """Truncating (attention-only models) is keeping the first positions of each cache: going
    on from there equals the standard graph fed the kept prefix and the new tokens in one call."""
    manifest = read_manifest(smollm2)
    specs = _specs(manifest)
    prompt = list(np.random.default_rng(9).integers(3, manifest["vocab_size"], size=30))
    for dtype in ("fp32", "q8"):
        entry = manifest["dtypes"][dtype]
        appending = AppendingStepper(smollm2 / entry["appending_file"], specs)
        appending.feed(prompt)
        appending.states = [np.take(state, range(18), axis=spec.seq_axis) for spec, state in zip(specs, appending.states)]
        appending.length = 18
        continued = appending.feed([101, 102, 103])
        expected = OnnxStepper(smollm2 / entry["file"], specs).feed(prompt[:18] + [101, 102, 103])
        assert np.abs(continued - expected).max() < 1e-3, dtype
        assert np.argmax(continued) == np.argmax(expected), dtype


@pytest.mark.parametrize("model_name", BUILTIN_MODELS)
def test_one_call_scoring_several_positions_gives_each_its_logits(exported_model, model_name):
    """The rows of a num_logits=k call are the logits one call per position gives, in order
    (fp32: up to the kernels' rounding for a different call length)."""
    folder = exported_model(model_name)
    manifest = read_manifest(folder)
    specs = _specs(manifest)
    fp32 = manifest["dtypes"]["fp32"]
    prompt, extra = list(range(100, 120)), [7, 300, 42, 42, 1000, 5]
    one_by_one = AppendingStepper(folder / fp32["appending_file"], specs)
    rows = [one_by_one.feed(prompt)] + [one_by_one.feed([token]) for token in extra]
    together = AppendingStepper(folder / fp32["appending_file"], specs)
    together.feed(prompt[:-1])
    scored = together.feed_scoring(prompt[-1:] + extra, len(extra) + 1)
    assert scored.shape == (len(extra) + 1, manifest["vocab_size"])
    np.testing.assert_allclose(scored, np.stack(rows), atol=1e-3, rtol=0)
    assert together.length == one_by_one.length
    for spec, a, b in zip(specs, together.states, one_by_one.states):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=0, err_msg=spec.output)


# --- the surgery on small graphs ---------------------------------------------------

def _head(vocab=3):
    """hidden [1, T, 4] -> Slice(last position) -> MatMul(W) -> logits [1, 1, 3]."""
    value = lambda name, dims: helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)
    ints = lambda name, values: helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, TensorProto.INT64, [len(values)], values))
    weight = np.arange(4 * vocab, dtype=np.float32).reshape(4, vocab) / 10
    nodes = [ints("starts", [-1]), ints("ends", [2**63 - 1]), ints("axes", [1]),
             helper.make_node("Slice", ["hidden", "starts", "ends", "axes"], ["last"]),
             helper.make_node("MatMul", ["last", "weight"], ["logits"])]
    graph = helper.make_graph(nodes, "head", [value("hidden", [1, "sequence", 4])], [value("logits", [1, 1, vocab])],
                              [numpy_helper.from_array(weight, "weight")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model, weight


def test_num_logits_widens_the_heads_last_position_slice(tmp_path):
    model, weight = _head()
    add_num_logits_input(model)
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["hidden", "num_logits"]
    assert _dims(model.graph.output[0]) == [1, "num_logits", 3]
    assert "starts" not in {name for node in model.graph.node for name in node.output}  # nothing reads it now
    path = tmp_path / "head.onnx"
    onnx.save(model, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    hidden = np.random.default_rng(0).standard_normal((1, 5, 4)).astype(np.float32)
    for count in (1, 3, 5):
        (logits,) = session.run(None, {"hidden": hidden, "num_logits": np.array([count], np.int64)})
        np.testing.assert_allclose(logits, hidden[:, -count:] @ weight, rtol=1e-6)


def test_num_logits_refuses_a_head_without_a_last_position_slice():
    model, _ = _head()
    model.graph.node[3].input[1] = "ends"  # the Slice no longer starts at -1
    with pytest.raises(AppendingGraphError, match="no Slice.*'logits'"):
        add_num_logits_input(model)


SPEC = StateSpec("past_key_values.0.key", "present.0.key", "key", (1, 2, 0, 4), 2)


def _graph(nodes, extra_outputs=()):
    value = lambda name, dims: helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)
    graph = helper.make_graph(
        nodes, "cache",
        [value("past_key_values.0.key", [1, 2, "past_sequence", 4]), value("new", [1, 2, "sequence", 4])],
        [value("present.0.key", [1, 2, "total_sequence", 4]), *extra_outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model


def test_surgery_returns_the_new_positions_and_drops_a_concat_nothing_reads(tmp_path):
    model = _graph([helper.make_node("Relu", ["new"], ["key"]),
                    helper.make_node("Concat", ["past_key_values.0.key", "key"], ["present.0.key"], axis=2)])
    make_appending(model, [SPEC])
    onnx.checker.check_model(model)
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    new = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    (present,) = session.run(None, {"past_key_values.0.key": np.ones((1, 2, 5, 4), np.float32), "new": new})
    np.testing.assert_array_equal(present, np.maximum(new, 0))
    assert _dims(model.graph.output[0]) == [1, 2, "sequence", 4]
    assert "Concat" not in {node.op_type for node in model.graph.node}
    assert appending_path(tmp_path / "model_q4.onnx").name == "model_q4.appending.onnx"


@pytest.mark.parametrize("nodes, extra_outputs, message", [
    ([helper.make_node("Add", ["past_key_values.0.key", "new"], ["present.0.key"])], (), "made by Add"),
    ([helper.make_node("Concat", ["past_key_values.0.key", "new"], ["present.0.key"], axis=1)], (),
     "axis 1"),
    ([helper.make_node("Concat", ["new", "past_key_values.0.key"], ["present.0.key"], axis=2)], (),
     "expected \\['past_key_values.0.key'"),
], ids=["not-a-concat", "wrong-axis", "past-not-first"])
def test_surgery_refuses_a_graph_without_the_pattern_naming_the_output(nodes, extra_outputs, message):
    with pytest.raises(AppendingGraphError, match=f"present.0.key.*{message}"):
        make_appending(_graph(nodes, extra_outputs), [SPEC])


def test_surgery_keeps_a_concat_read_inside_the_graph(tmp_path):
    """Attention reads past + new: that still gets the Concat, the output gets `new`."""
    other = helper.make_tensor_value_info("other", TensorProto.FLOAT, [1, 2, "total_sequence", 4])
    model = _graph([helper.make_node("Concat", ["past_key_values.0.key", "new"], ["present.0.key"], axis=-2),
                    helper.make_node("Relu", ["present.0.key"], ["other"])], (other,))
    make_appending(model, [SPEC])
    onnx.checker.check_model(model)
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    past, new = (rng.standard_normal((1, 2, n, 4)).astype(np.float32) for n in (5, 3))
    present, inside = session.run(None, {"past_key_values.0.key": past, "new": new})
    np.testing.assert_array_equal(present, new)
    np.testing.assert_array_equal(inside, np.maximum(np.concatenate([past, new], axis=2), 0))
