"""The exported folder is the contract with web/ (docs/contracts.md §1): every field web/
reads must be present and agree with the files and graphs actually written."""

import hashlib
import json

import onnx
import onnxruntime as ort

from .conftest import load_graph_without_weights, read_manifest

DTYPE_FILES = {"fp32": "onnx/model.onnx", "q8": "onnx/model_quantized.onnx", "q4": "onnx/model_q4.onnx"}
ONNX_TYPES = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.INT64: "int64"}


def _dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in value_info.type.tensor_type.shape.dim]


def test_manifest_has_every_contract_field(any_model):
    manifest = read_manifest(any_model)
    assert manifest["format_version"] == 1
    assert manifest["name"] == any_model.name and manifest["source"] == any_model.name
    for key in ("architecture", "created", "files", "dtypes", "recommended_dtype", "inputs", "outputs",
                "cache", "vocab_size", "attention_heads", "context_length", "bos_token_id", "eos_token_ids", "stop_strings",
                "message_boundary_token_ids", "tool_call_format", "chat_template_supports_tools",
                "verification"):
        assert key in manifest, key
    assert manifest["inputs"]["input_ids"] == "input_ids"
    assert manifest["inputs"]["attention_mask"] == "attention_mask"
    assert set(manifest["inputs"]) <= {"input_ids", "attention_mask", "position_ids"}
    assert manifest["outputs"] == {"logits": "logits"}
    assert isinstance(manifest["attention_heads"], int) and manifest["attention_heads"] >= 1
    config = json.loads((any_model / "config.json").read_text())
    assert manifest["context_length"] == config.get("text_config", config)["max_position_embeddings"]
    assert set(manifest["recommended_dtype"]) == {"wasm", "webgpu"}
    assert set(manifest["recommended_dtype"].values()) <= set(manifest["dtypes"])


def test_files_are_listed_with_true_sizes_and_hashes(any_model):
    manifest = read_manifest(any_model)
    on_disk = {p.relative_to(any_model).as_posix() for p in any_model.rglob("*") if p.is_file()}
    assert set(manifest["files"]) == on_disk - {"manifest.json"}
    for name, entry in manifest["files"].items():
        data = (any_model / name).read_bytes()
        assert entry["size"] == len(data), name
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), name


def test_dtype_entries_use_transformers_js_file_names(any_model):
    manifest = read_manifest(any_model)
    assert set(manifest["dtypes"]) == set(DTYPE_FILES)
    for dtype, entry in manifest["dtypes"].items():
        assert entry["file"] == DTYPE_FILES[dtype]
        assert entry["file"] in entry["files"]
        assert set(entry["files"]) <= set(manifest["files"])
        assert entry["requires"] == []


def test_cache_entries_match_graph_inputs_and_outputs(any_model):
    manifest = read_manifest(any_model)
    cache = manifest["cache"]
    for dtype, entry in manifest["dtypes"].items():
        graph = load_graph_without_weights(any_model / entry["file"]).graph
        inputs = {i.name: i for i in graph.input}
        outputs = {o.name: o for o in graph.output}
        assert [i.name for i in graph.input] == list(manifest["inputs"].values()) + \
            [c["input"] for c in cache], dtype
        assert [o.name for o in graph.output] == ["logits"] + [c["output"] for c in cache], dtype
        for name in manifest["inputs"].values():
            assert inputs[name].type.tensor_type.elem_type == onnx.TensorProto.INT64
        assert _dims(outputs["logits"]) == [1, 1, manifest["vocab_size"]]
        for c in cache:
            assert c["kind"] in {"key", "value", "conv", "recurrent"}
            assert c["dtype"] == "float32" == ONNX_TYPES[inputs[c["input"]].type.tensor_type.elem_type]
            assert ONNX_TYPES[outputs[c["output"]].type.tensor_type.elem_type] == "float32"
            for value in (inputs[c["input"]], outputs[c["output"]]):
                dims = _dims(value)
                assert len(dims) == len(c["shape"])
                for axis, (declared, actual) in enumerate(zip(c["shape"], dims)):
                    if axis == c["seq_axis"]:
                        assert declared == 0 and isinstance(actual, str)
                    else:
                        assert declared == actual


def test_cache_names_follow_the_contract(any_model):
    for c in read_manifest(any_model)["cache"]:
        layer = c["input"].split(".")[1]
        expected = {
            "key": (f"past_key_values.{layer}.key", f"present.{layer}.key", 2),
            "value": (f"past_key_values.{layer}.value", f"present.{layer}.value", 2),
            "conv": (f"past_conv.{layer}", f"present_conv.{layer}", None),
            "recurrent": (f"past_recurrent.{layer}", f"present_recurrent.{layer}", None),
        }[c["kind"]]
        assert (c["input"], c["output"], c["seq_axis"]) == expected


def test_graphs_load_in_onnxruntime_with_ir_version_web_accepts(any_model):
    manifest = read_manifest(any_model)
    for entry in manifest["dtypes"].values():
        path = any_model / entry["file"]
        assert load_graph_without_weights(path).ir_version <= 13
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        assert session.get_outputs()[0].name == "logits"


def test_tokenizer_and_config_files(any_model):
    manifest = read_manifest(any_model)
    tokenizer_config = json.loads((any_model / "tokenizer_config.json").read_text())
    assert "{%" in tokenizer_config["chat_template"]
    tokenizer = json.loads((any_model / "tokenizer.json").read_text())
    special = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    assert manifest["eos_token_ids"] == [special["<|im_end|>"]]
    assert manifest["message_boundary_token_ids"] == [special["<|im_start|>"]]
    assert tokenizer_config["eos_token"] == "<|im_end|>"
    generation = json.loads((any_model / "generation_config.json").read_text())
    assert generation["eos_token_id"] == manifest["eos_token_ids"]
    config = json.loads((any_model / "config.json").read_text())
    assert config["vocab_size"] == manifest["vocab_size"]
    assert "quantization_config" not in config
