"""A Qwen3.5 GGUF, as llama.cpp's converter writes it (`qwen35` architecture), exports to the
same model it came from.

No real BotPsy GGUF is available offline, so `write_qwen35_gguf` below converts the built-in
tiny Qwen3.5 the way llama.cpp's `convert_hf_to_gguf.py` does (commit 0024aa74:
`_LinearAttentionVReorderBase` + `Qwen3NextModel.modify_tensors` + `TextModel.prepare_tensors`),
with gguf-py's names, writer and quantizer. The tiny model has 2 key heads and 4 value heads,
so the converter's value-head reorder is exercised too.
"""

import json

import gguf
import numpy as np
import pytest
import torch

from botpsy_export.api import export_model
from botpsy_export.builtins import build_tiny_qwen
from botpsy_export.errors import UnknownArchitectureError, WeightsError
from botpsy_export.gguf_qwen3_5 import load_qwen35_gguf, undo_conversion
from botpsy_web.cli import main

F32, Q8_0 = gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.Q8_0
PROMPT = "<|im_start|>user\nWhat is 12 + 30? Reply briefly, héllo!<|im_end|>\n<|im_start|>assistant\n"


# --- the converter's side, written from its source -------------------------------------------

def reorder_value_heads(tensor, dim, key_heads, per_key, head_dim):
    """Grouped-by-key-head value heads -> tiled order, as `_reorder_v_heads` does."""
    shape = list(tensor.shape)
    view = tensor.reshape(*shape[:dim], key_heads, per_key, head_dim, *shape[dim + 1:])
    return view.transpose(dim, dim + 1).reshape(shape)


def converted_tensors(model):
    """(HF name after the converter's renames, tensor) pairs, every value transform applied."""
    config = model.config
    key_heads, value_heads = config.linear_num_key_heads, config.linear_num_value_heads
    per_key, value_dim = value_heads // key_heads, config.linear_value_head_dim
    query_key_rows = 2 * key_heads * config.linear_key_head_dim
    for name, tensor in model.state_dict().items():
        tensor = tensor.detach().float().clone()
        if name == "lm_head.weight" and config.tie_word_embeddings:
            continue
        if "linear_attn." in name and key_heads != value_heads:
            if ".conv1d" in name:
                tensor = tensor.squeeze()
            if ".in_proj_qkv." in name or ".conv1d" in name:
                values = reorder_value_heads(tensor[query_key_rows:], 0, key_heads, per_key, value_dim)
                tensor = torch.cat([tensor[:query_key_rows], values])
            elif ".in_proj_z." in name:
                tensor = reorder_value_heads(tensor, 0, key_heads, per_key, value_dim)
            elif name.endswith((".in_proj_a.weight", ".in_proj_b.weight", ".A_log", ".dt_bias")):
                tensor = reorder_value_heads(tensor, 0, key_heads, per_key, 1)
            elif ".out_proj." in name:
                tensor = reorder_value_heads(tensor, 1, key_heads, per_key, value_dim)
        if name.endswith(".A_log"):
            tensor = -torch.exp(tensor)
        elif name.endswith(".dt_bias"):
            name = name.removesuffix(".dt_bias") + ".dt_proj.bias"
        elif "conv1d" in name:
            tensor = tensor.squeeze()
        elif name.endswith("norm.weight") and not name.endswith("linear_attn.norm.weight"):
            tensor = tensor + 1
        yield name, tensor


def _write_metadata(writer, config, mtp_blocks=0, full_attention_interval=None):
    rope = config.rope_parameters
    writer.add_block_count(config.num_hidden_layers + mtp_blocks)
    if mtp_blocks:
        writer.add_nextn_predict_layers(mtp_blocks)
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_rope_dimension_sections((list(rope["mrope_section"]) + [0] * 4)[:4])
    writer.add_rope_freq_base(rope["rope_theta"])
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_key_length(config.head_dim)
    writer.add_value_length(config.head_dim)
    writer.add_ssm_conv_kernel(config.linear_conv_kernel_dim)
    writer.add_ssm_state_size(config.linear_key_head_dim)
    writer.add_ssm_group_count(config.linear_num_key_heads)
    writer.add_ssm_time_step_rank(config.linear_num_value_heads)
    writer.add_ssm_inner_size(config.linear_value_head_dim * config.linear_num_value_heads)
    writer.add_full_attention_interval(full_attention_interval or config.layer_types.index("full_attention") + 1)
    writer.add_rope_dimension_count(int(config.head_dim * rope["partial_rotary_factor"]))


def _write_vocab(writer, tokenizer, chat_template, vocab_size):
    """What `_set_vocab_gpt2` + `SpecialVocab` write: tokens by id (padded to the embedding's
    rows with `[PAD<id>]`, as llama.cpp does), types, merges, special ids."""
    backend = json.loads(tokenizer.backend_tokenizer.to_str())
    by_id = {token_id: token for token, token_id in backend["model"]["vocab"].items()}
    by_id |= {added["id"]: added["content"] for added in backend["added_tokens"]}
    tokens = [by_id.get(i, f"[PAD{i}]") for i in range(vocab_size)]
    types = [gguf.TokenType.NORMAL if i in by_id else gguf.TokenType.UNUSED for i in range(vocab_size)]
    for added in backend["added_tokens"]:
        types[added["id"]] = gguf.TokenType.CONTROL if added["special"] else gguf.TokenType.USER_DEFINED
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen35")  # the tiny model has BotPsy's (Qwen3.5's) tokenizer
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in backend["model"]["merges"]])
    writer.add_eos_token_id(tokenizer.convert_tokens_to_ids("<|im_end|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(chat_template)


def _storage_type(gguf_name, data, file_type):
    """`prepare_tensors`: 1-D tensors, norms, conv1d and non-`.weight` tensors stay F32."""
    if data.ndim <= 1 or gguf_name.endswith("_norm.weight") or ".ssm_conv1d." in gguf_name \
            or not gguf_name.endswith(".weight"):
        return F32
    return file_type


def _mtp_block(tensors, layers):
    """Newer llama.cpp files append the multi-token-prediction block as one more `blk.N`,
    counted in block_count and announced by nextn_predict_layers: here a copy of the last layer
    plus a `nextn.eh_proj`, all of which a text export must ignore."""
    last = f"blk.{layers - 1}."
    block = {f"blk.{layers}." + name.removeprefix(last): data for name, data in tensors if name.startswith(last)}
    hidden = tensors[0][1].shape[1]
    block[f"blk.{layers}.nextn.eh_proj.weight"] = np.ones((hidden, 2 * hidden), dtype=np.float32)
    return list(block.items())


def write_qwen35_gguf(model, tokenizer, path, file_type=F32, skip=(), mtp_block=False, layer_flags=False):
    """`file_type`: a ggml type, or a function (gguf name, array) -> (stored array, ggml type)
    for the tensors that are not kept in F32; `mtp_block`: append an MTP block the way newer converters do; `layer_flags`: state the
    layer kinds as `attention.recurrent_layers` instead of leaving them to full_attention_interval."""
    from botpsy_export.architectures.qwen3_5 import Qwen35Architecture

    config = model.config
    arch = gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.QWEN35]
    writer = gguf.GGUFWriter(str(path), arch)
    # with explicit flags, llama.cpp ignores the interval: write a wrong one to prove the flags win
    _write_metadata(writer, config, int(mtp_block), full_attention_interval=2 if layer_flags else None)
    if layer_flags:
        writer.add_array(f"{arch}.attention.recurrent_layers",
                         [kind == "linear_attention" for kind in config.layer_types] + [False] * mtp_block)
    _write_vocab(writer, tokenizer, Qwen35Architecture(model, tokenizer).chat_template(), model.config.vocab_size)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN35, config.num_hidden_layers)
    tensors = [(names.get_name(name, try_suffixes=(".weight", ".bias")), tensor.numpy())
               for name, tensor in converted_tensors(model)]
    if mtp_block:
        tensors += _mtp_block(tensors, config.num_hidden_layers)
    for gguf_name, data in tensors:
        if gguf_name in skip:
            continue
        storage = _storage_type(gguf_name, data, file_type)
        if callable(storage):  # a per-tensor mix, as llama-quantize picks one
            stored, storage = storage(gguf_name, data)
        else:
            stored = gguf.quants.quantize(data, storage)
        writer.add_tensor(gguf_name, stored, raw_dtype=storage)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


# K-quants: gguf-py dequantizes them but cannot quantize, so blocks are random bytes with sane
# fp16 scales (block bytes; byte offsets of the fp16 scales in a block).
K_QUANT_BLOCKS = {gguf.GGMLQuantizationType.Q4_K: (144, (0, 2)), gguf.GGMLQuantizationType.Q6_K: (210, (208,))}


def random_k_quant(shape, qtype, generator):
    rows, columns = shape
    block_bytes, scale_offsets = K_QUANT_BLOCKS[qtype]
    blocks = generator.integers(0, 256, size=(rows, columns // 256, block_bytes), dtype=np.uint8)
    for offset in scale_offsets:
        scales = generator.uniform(1e-3, 1e-2, size=(rows, columns // 256)).astype(np.float16)
        blocks[..., offset:offset + 2] = scales.view(np.uint8).reshape(rows, columns // 256, 2)
    return blocks.reshape(rows, -1)


def q4_k_m_like_mix(seed):
    """Like llama-quantize's Q4_K_M: Q6_K for the embedding, Q4_K where a row is whole 256-value
    blocks, Q8_0 elsewhere. The values are random, not the model's."""
    generator = np.random.default_rng(seed)

    def encode(gguf_name, data):
        if data.shape[1] % 256:
            return gguf.quants.quantize(data, Q8_0), Q8_0
        qtype = gguf.GGMLQuantizationType.Q6_K if gguf_name == "token_embd.weight" else gguf.GGMLQuantizationType.Q4_K
        return random_k_quant(data.shape, qtype, generator), qtype
    return encode


# --- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny():
    return build_tiny_qwen()


@pytest.fixture(scope="module")
def gguf_files(tiny, tmp_path_factory):
    folder = tmp_path_factory.mktemp("gguf")
    model, tokenizer = tiny
    return {"f32": write_qwen35_gguf(model, tokenizer, folder / "tiny-qwen35-f32.gguf"),
            "q8_0": write_qwen35_gguf(model, tokenizer, folder / "tiny-qwen35-q8_0.gguf", Q8_0)}


def _logits(model, tokenizer):
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    with torch.no_grad():
        return model(input_ids=ids).logits[0]


# --- the tests --------------------------------------------------------------------------------

def test_f32_gguf_reads_back_the_original_weights_and_logits(tiny, gguf_files):
    original, tokenizer = tiny
    model, _ = load_qwen35_gguf(gguf_files["f32"])

    assert model.config.layer_types == original.config.layer_types
    assert model.lm_head.weight is model.model.embed_tokens.weight  # tied, as in the source
    reference = original.state_dict()
    for name, tensor in model.state_dict().items():
        # only rounding from the converter's `+ 1` and `-exp` in fp32
        assert torch.allclose(tensor, reference[name], rtol=0, atol=1e-6), name
    assert (_logits(model, tokenizer) - _logits(original, tokenizer)).abs().max() < 1e-5


def test_q8_0_gguf_stays_close_to_the_original(tiny, gguf_files):
    original, tokenizer = tiny
    model, _ = load_qwen35_gguf(gguf_files["q8_0"])

    got, want = _logits(model, tokenizer), _logits(original, tokenizer)
    assert (got - want).abs().max() < 0.1 * want.abs().max()
    assert (got.argmax(-1) == want.argmax(-1)).float().mean() >= 0.9


def test_our_reading_agrees_with_transformers_own_qwen35_loader(gguf_files):
    """transformers 5.24 reads qwen35 GGUFs too, from its own reading of the converter: two
    independent inversions of the same file must give the same weights."""
    from transformers import AutoModelForCausalLM

    path = gguf_files["q8_0"]
    ours, _ = load_qwen35_gguf(path)
    theirs = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    theirs_state = theirs.state_dict()
    for name, tensor in ours.state_dict().items():
        assert torch.allclose(tensor, theirs_state[name], rtol=0, atol=1e-6), name


def test_k_quant_gguf_reads_the_same_as_transformers_loader(tiny, tmp_path):
    """Q4_K / Q6_K blocks (what a Q4_K_M build holds), on a model wide enough for 256-value blocks."""
    from transformers import AutoModelForCausalLM, Qwen3_5ForCausalLM, Qwen3_5TextConfig
    from transformers.integrations.gguf import GgufHeader

    from botpsy_export.builtins import tiny_qwen_config

    _, tokenizer = tiny
    wide = tiny_qwen_config().to_dict() | dict(
        hidden_size=256, intermediate_size=256, head_dim=64, linear_value_head_dim=64,
        rope_parameters=tiny_qwen_config().rope_parameters | {"mrope_section": [4, 2, 2]})
    torch.manual_seed(5)
    original = Qwen3_5ForCausalLM(Qwen3_5TextConfig(**wide)).eval()
    path = write_qwen35_gguf(original, tokenizer, tmp_path / "wide-q4_k_m.gguf", q4_k_m_like_mix(5))
    types = GgufHeader.from_file(str(path)).ggml_types
    assert {types["token_embd.weight"], types["blk.0.attn_qkv.weight"]} == {14, 12}  # Q6_K, Q4_K

    ours, _ = load_qwen35_gguf(path)
    theirs = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    theirs_state = theirs.state_dict()
    for name, tensor in ours.state_dict().items():
        assert torch.isfinite(tensor).all(), name
        assert torch.allclose(tensor, theirs_state[name], rtol=1e-5, atol=1e-6), name


def test_tokenizer_and_chat_template_come_from_the_gguf(tiny, gguf_files):
    _, original_tokenizer = tiny
    _, tokenizer = load_qwen35_gguf(gguf_files["f32"])

    for text in (PROMPT, "  spaces\tand\nnewlines 1234567 ünïcödé 🙂", "<think>\n\n</think>"):
        assert tokenizer(text)["input_ids"] == original_tokenizer(text)["input_ids"], text
    assert "<tool_call>" in tokenizer.chat_template
    assert tokenizer.eos_token == "<|im_end|>"


def test_value_head_reorder_is_undone_exactly(tiny):
    """Every linear-attention tensor the converter reorders comes back in grouped order."""
    model, _ = tiny
    converted = dict(converted_tensors(model))
    for name, tensor in model.state_dict().items():
        if ".linear_attn." not in name:
            continue
        stored = converted[name.removesuffix(".dt_bias") + ".dt_proj.bias" if name.endswith(".dt_bias") else name]
        if name.endswith(("in_proj_z.weight", "out_proj.weight")):
            assert not torch.equal(stored, tensor), f"{name}: the reorder should have moved something"
        assert torch.allclose(undo_conversion(name, stored, model.config), tensor, rtol=0, atol=1e-6), name


def test_exported_gguf_folder_passes_verification_and_keeps_the_contract(tiny, gguf_files, tmp_path):
    original, original_tokenizer = tiny
    out = tmp_path / "out"
    manifest = export_model(gguf_files["q8_0"], out, dtypes="fp32,q8", progress=False)

    assert manifest["architecture"] == "qwen3_5" and manifest["name"] == "tiny-qwen35-q8_0"
    assert manifest["tool_call_format"] == "qwen3_coder_xml"
    assert manifest["eos_token_ids"] == [original_tokenizer.convert_tokens_to_ids("<|im_end|>")]
    assert manifest["vocab_size"] == original.config.vocab_size
    fp32 = manifest["verification"]["fp32"]
    assert fp32["passed"] and fp32["max_abs_logit_diff"] <= 1e-3 and fp32["greedy_match"] == 1.0
    assert np.isfinite(manifest["verification"]["q8"]["max_abs_logit_diff"])
    assert {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
            "onnx/model.onnx", "onnx/model_quantized.onnx"} <= set(manifest["files"])
    assert {c["kind"] for c in manifest["cache"]} == {"key", "value", "conv", "recurrent"}

    from transformers import AutoTokenizer

    exported = AutoTokenizer.from_pretrained(out)
    assert exported(PROMPT)["input_ids"] == original_tokenizer(PROMPT)["input_ids"]
    assert "<tool_call>" in json.loads((out / "tokenizer_config.json").read_text())["chat_template"]
    assert json.loads((out / "config.json").read_text())["layer_types"] == original.config.layer_types


def test_mtp_block_and_explicit_layer_kinds_from_newer_converters(tiny, tmp_path):
    original, tokenizer = tiny
    path = write_qwen35_gguf(original, tokenizer, tmp_path / "mtp.gguf", mtp_block=True, layer_flags=True)
    model, _ = load_qwen35_gguf(path)

    assert model.config.num_hidden_layers == original.config.num_hidden_layers
    assert model.config.layer_types == original.config.layer_types
    assert (_logits(model, tokenizer) - _logits(original, tokenizer)).abs().max() < 1e-5


def test_untied_lm_head_is_read_from_output_weight(tmp_path):
    from transformers import Qwen3_5ForCausalLM

    from botpsy_export.builtins import tiny_qwen_config

    _, tokenizer = build_tiny_qwen()
    config = tiny_qwen_config()
    config.tie_word_embeddings = False
    torch.manual_seed(3)
    original = Qwen3_5ForCausalLM(config).eval()
    model, _ = load_qwen35_gguf(write_qwen35_gguf(original, tokenizer, tmp_path / "untied.gguf"))

    assert model.config.tie_word_embeddings is False
    assert model.lm_head.weight is not model.model.embed_tokens.weight
    assert torch.equal(model.lm_head.weight, original.lm_head.weight)


def test_missing_tensor_is_named(tiny, tmp_path):
    model, tokenizer = tiny
    path = write_qwen35_gguf(model, tokenizer, tmp_path / "partial.gguf", skip={"blk.1.ssm_a"})
    with pytest.raises(WeightsError, match=r"partial.gguf: GGUF lacks tensors blk\.1\.ssm_a"):
        export_model(path, tmp_path / "out", dtypes="fp32", progress=False)


def _write_stub_gguf(path, architecture):
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_unsupported_gguf_architecture_names_the_supported_ones(tmp_path, capsys):
    path = _write_stub_gguf(tmp_path / "mamba.gguf", "mamba")

    expected = r"mamba.gguf: GGUF architecture 'mamba' is not supported; GGUF export supports: llama, qwen2, qwen35"
    with pytest.raises(UnknownArchitectureError, match=expected):
        export_model(path, tmp_path / "out", progress=False)
    assert main(["export", "--model", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "qwen35" in err


def test_vision_projector_gguf_is_told_apart(tmp_path):
    path = _write_stub_gguf(tmp_path / "mmproj-BotPsy-0.8B-f16.gguf", "clip")
    with pytest.raises(UnknownArchitectureError, match=r"vision projector \(mmproj\) GGUF.*text model's .gguf"):
        export_model(path, tmp_path / "out", progress=False)
