"""Weights are written in shards of at most MAX_SHARD_BYTES (external_data.py): Chromium cannot
store or hash one buffer of 2 GiB or more, so Qwen2.5-Coder-0.5B's fp32 weights in one 2.5 GB file
were downloaded again on every visit. Each shard is a model file of its own in the manifest (size,
sha256), named as transformers.js requests them (`model.onnx_data`, `model.onnx_data_1`, ...);
onnxruntime loads and verifies the folder as before, and the appending graph reads the same
shards. The limit is lowered here so that the tiny model gets several shards."""

import hashlib
import json
import logging
from collections import defaultdict

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from botpsy_export import external_data
from botpsy_export.api import export_model
from botpsy_export.architectures import StateSpec
from botpsy_export.quantize import Fp16
from botpsy_export.runner import OnnxStepper

from .conftest import load_graph_without_weights, read_manifest

SHARD_LIMIT = 256 * 2**10  # the tiny model's small tensors fill several shards; its embedding and head exceed it
SHARDED_DTYPES = ("fp32", "q8", "q4")
PROMPT = [3, 14, 15, 92, 65, 35, 89, 79, 32, 38]


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """tiny-qwen3.5 exported (and verified) with the shard limit lowered to SHARD_LIMIT."""
    out = tmp_path_factory.mktemp("sharded") / "tiny-qwen3.5"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(external_data, "MAX_SHARD_BYTES", SHARD_LIMIT)
        export_model("tiny-qwen3.5", out, dtypes=SHARDED_DTYPES, verify=True, progress=False)
    return out


def _external_tensors(path):
    """name -> (location, offset, length) of every external tensor of the graph at `path`."""
    graph = load_graph_without_weights(path)
    found = {}
    for tensor in external_data.all_tensors(graph):
        if tensor.data_location == TensorProto.EXTERNAL:
            info = {entry.key: entry.value for entry in tensor.external_data}
            found[tensor.name] = (info["location"], int(info["offset"]), int(info["length"]))
    return found


def _specs(manifest):
    return [StateSpec(c["input"], c["output"], c["kind"], tuple(c["shape"]), c["seq_axis"])
            for c in manifest["cache"]]


# --- the folder ------------------------------------------------------------------

def test_each_dtype_has_several_shards_named_as_transformers_js_requests_them(sharded):
    manifest = read_manifest(sharded)
    config = json.loads((sharded / "config.json").read_text())
    counts = config["transformers.js_config"]["use_external_data_format"]
    assert set(manifest["dtypes"]) == set(SHARDED_DTYPES)
    for dtype, entry in manifest["dtypes"].items():
        graph, *data = entry["files"]
        assert graph == entry["file"], dtype
        assert len(data) >= 3, (dtype, data)
        # transformers.js 4.3.2 getExternalDataChunkNames: `${name}_data`, then `${name}_data_${i}`
        assert data == [f"{graph}_data"] + [f"{graph}_data_{i}" for i in range(1, len(data))], dtype
        assert counts[graph.removeprefix("onnx/")] == len(data), dtype


def test_every_shard_is_listed_with_its_size_and_sha256(sharded):
    manifest = read_manifest(sharded)
    on_disk = {path.relative_to(sharded).as_posix() for path in (sharded / "onnx").iterdir()}
    listed = {path for path in manifest["files"] if path.startswith("onnx/")}
    assert on_disk == listed
    for entry in manifest["dtypes"].values():
        for path in entry["files"][1:]:
            data = (sharded / path).read_bytes()
            assert manifest["files"][path] == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}, path


def test_shards_stay_within_the_limit_unless_a_single_tensor_is_larger(sharded):
    manifest = read_manifest(sharded)
    oversized = 0
    for dtype, entry in manifest["dtypes"].items():
        by_shard = defaultdict(list)
        for name, (location, offset, length) in _external_tensors(sharded / entry["file"]).items():
            by_shard[location].append((offset, length, name))
        assert sorted(by_shard) == sorted(path.removeprefix("onnx/") for path in entry["files"][1:]), dtype
        for location, tensors in by_shard.items():
            size = manifest["files"]["onnx/" + location]["size"]
            tensors.sort()
            if size > SHARD_LIMIT:  # only a tensor that alone passes the limit
                assert len(tensors) == 1 and tensors[0][:2] == (0, size), (dtype, location, tensors)
                oversized += 1
            for (offset, length, name), following in zip(tensors, tensors[1:] + [(size, 0, None)]):
                assert offset % external_data.ALIGNMENT == 0 and offset + length <= following[0], (location, name)
            assert tensors[-1][0] + tensors[-1][1] == size, location  # no padding after the last tensor
    assert oversized >= 2  # the embedding and the LM head: the single-tensor rule was exercised


def test_the_appending_graph_reads_the_standard_graphs_shards(sharded):
    manifest = read_manifest(sharded)
    for dtype, entry in manifest["dtypes"].items():
        standard = _external_tensors(sharded / entry["file"])
        assert _external_tensors(sharded / entry["appending_file"]) == standard, dtype
        assert entry["appending_file"] not in entry["files"]
        assert manifest["files"][entry["appending_file"]]["size"] < 0.1 * sum(
            manifest["files"][path]["size"] for path in entry["files"][1:]), dtype


# --- onnxruntime -----------------------------------------------------------------

def test_the_sharded_export_passes_the_same_verification(sharded):
    manifest = read_manifest(sharded)
    for dtype in SHARDED_DTYPES:
        result = manifest["verification"][dtype]
        assert result["passed"] is True, (dtype, result)
        assert result["appending"]["passed"] is True and result["appending"]["max_abs_logit_diff"] == 0.0, dtype
    assert manifest["verification"]["fp32"]["greedy_match"] == 1.0


@pytest.mark.parametrize("dtype", SHARDED_DTYPES)
def test_sharded_graphs_compute_exactly_what_one_data_file_computes(sharded, tmp_path, dtype):
    """Against the same graph and weights saved with one data file (the default limit)."""
    manifest = read_manifest(sharded)
    sharded_graph = sharded / manifest["dtypes"][dtype]["file"]
    whole = external_data.save_with_external_data(onnx.load(sharded_graph), tmp_path / sharded_graph.name)
    assert len(whole) == 2
    results = []
    for graph in (sharded_graph, whole[0]):
        stepper = OnnxStepper(graph, _specs(manifest))
        logits = [stepper.feed(PROMPT)]
        for _ in range(4):
            logits.append(stepper.feed([int(np.argmax(logits[-1]))]))
        results.append(np.stack(logits))
    np.testing.assert_array_equal(results[0], results[1])


def test_half_precision_reads_and_writes_shards(sharded, tmp_path):
    """fp16 (not in the sharded export above) converts the sharded fp32 graph into sharded fp16
    weights that compute what the fp16 graph of one data file computes."""
    manifest = read_manifest(sharded)
    fp32_graph = sharded / manifest["dtypes"]["fp32"]["file"]
    merged = external_data.save_with_external_data(onnx.load(fp32_graph), tmp_path / "fp32" / fp32_graph.name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(external_data, "MAX_SHARD_BYTES", SHARD_LIMIT)
        sharded_half = Fp16().quantize(fp32_graph, tmp_path / "sharded" / "model_fp16.onnx")
    whole_half = Fp16().quantize(merged[0], tmp_path / "whole" / "model_fp16.onnx")
    assert len(sharded_half) >= 4 and len(whole_half) == 2
    outputs = [OnnxStepper(files[0], _specs(manifest)).feed(PROMPT) for files in (sharded_half, whole_half)]
    np.testing.assert_array_equal(outputs[0], outputs[1])


# --- the writer ------------------------------------------------------------------

def _identity_graph(sizes):
    """A graph returning each of its float initializers (named t0, t1, ...) of `sizes` bytes."""
    rng = np.random.default_rng(7)
    arrays = {f"t{i}": rng.standard_normal(size // 4).astype(np.float32) for i, size in enumerate(sizes)}
    graph = helper.make_graph(
        [helper.make_node("Identity", [name], [f"{name}_out"]) for name in arrays], "identities", [],
        [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [len(a)]) for name, a in arrays.items()],
        [numpy_helper.from_array(a, name) for name, a in arrays.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model, arrays


def test_a_tensor_larger_than_the_limit_gets_a_shard_of_its_own_and_a_warning(tmp_path, caplog):
    kib = 2**10
    model, arrays = _identity_graph([100 * kib, 100 * kib, 300 * kib, 10 * kib, 200 * kib])
    with caplog.at_level(logging.WARNING, logger=external_data.__name__):
        files = external_data.save_with_external_data(model, tmp_path / "model.onnx", limit=SHARD_LIMIT)
    assert [path.name for path in files] == ["model.onnx", "model.onnx_data", "model.onnx_data_1", "model.onnx_data_2"]
    placed = {name: location for name, (location, _, _) in _external_tensors(files[0]).items()}
    assert placed == {"t0": "model.onnx_data", "t1": "model.onnx_data", "t2": "model.onnx_data_1",
                      "t3": "model.onnx_data_2", "t4": "model.onnx_data_2"}
    # t4 starts on the page boundary after t3's 10 KiB
    assert [path.stat().st_size for path in files[1:]] == [200 * kib, 300 * kib, 12 * kib + 200 * kib]
    assert len(caplog.records) == 1 and "t2" in caplog.text and "model.onnx_data_1" in caplog.text
    session = ort.InferenceSession(str(files[0]))
    for name, output in zip(arrays, session.run(None, {})):
        np.testing.assert_array_equal(output, arrays[name])


def test_saving_again_with_fewer_shards_leaves_no_stale_one(tmp_path):
    model, _ = _identity_graph([200 * 2**10] * 3)
    external_data.save_with_external_data(model, tmp_path / "model.onnx", limit=SHARD_LIMIT)
    assert len(list(tmp_path.glob("model.onnx_data*"))) == 3
    model, arrays = _identity_graph([200 * 2**10] * 3)
    files = external_data.save_with_external_data(model, tmp_path / "model.onnx", limit=2**20)
    assert sorted(tmp_path.iterdir()) == sorted(files) and len(files) == 2
    np.testing.assert_array_equal(ort.InferenceSession(str(files[0])).run(["t2_out"], {})[0], arrays["t2"])


def test_misuse_is_refused_with_what_was_wrong(tmp_path):
    model, _ = _identity_graph([8 * 2**10])
    with pytest.raises(ValueError, match="shard limit must be an int of at least 4096 bytes"):
        external_data.save_with_external_data(model, tmp_path / "model.onnx", limit=100)
    external_data.save_with_external_data(model, tmp_path / "saved" / "model.onnx")
    skeleton = onnx.load(tmp_path / "saved" / "model.onnx", load_external_data=False)
    with pytest.raises(ValueError, match="tensor 't0' is external .* no folder to read it from"):
        external_data.save_with_external_data(skeleton, tmp_path / "again" / "model.onnx")
