"""Read a llama.cpp `qwen35` GGUF (BotPsy / Qwen3.5 text model) into a `Qwen3_5ForCausalLM`.

Every tensor is dequantized to fp32 (any ggml type gguf-py can dequantize: F32, F16, BF16,
Q8_0, Q4_0, Q4_K, Q6_K, ...), renamed back to its Hugging Face name with gguf-py's own
`TensorNameMap`, and has llama.cpp's conversion undone. The steps follow llama.cpp's
`convert_hf_to_gguf.py` at commit 0024aa7417efd50a7c2a79e049dfbbbceb0beaaf: class
`Qwen3_5TextModel` -> `_LinearAttentionVReorderBase` -> `Qwen3NextModel` -> `TextModel`.
Two details of newer files follow llama.cpp's qwen35 model loader (src/models/qwen35.cpp,
`load_arch_hparams`) instead: an MTP block counted in block_count and announced by
`nextn_predict_layers`, and per-layer `attention.recurrent_layers` flags. No real BotPsy GGUF was available to check against; tests/export/test_gguf_qwen3_5.py writes
the built-in tiny Qwen3.5 the converter's way and checks that this reader gives it back.

The metadata and raw tensor bytes are read with transformers' GGUF header reader, which skips
the vocabulary: gguf-py's `GGUFReader` decodes every token first (9 s for SmolLM2's 49k here,
so about five times that for Qwen3.5's 248k). transformers 5.24 can also load `qwen35` files
itself, but when the optional `kernels` package is installed it keeps quantized layers packed
(its own GgufLinear-style modules, which our graphs, smoothing and quantizers do not expect);
this reader always gives plain fp32 `nn.Linear` weights. The tests check that both readings
give the same weights.
"""

import numpy as np
import torch

from .errors import WeightsError

GGUF_ARCHITECTURE = "qwen35"
LINEAR, FULL = "linear_attention", "full_attention"
DEFAULT_FULL_ATTENTION_INTERVAL = 4  # llama.cpp's default when the key is absent


def load_qwen35_gguf(path):
    """(Qwen3_5ForCausalLM in fp32, tokenizer) from a `qwen35` GGUF file."""
    from transformers.integrations.gguf import GgufHeader, load_gguf_state_dict, read_gguf_metadata

    metadata, _ = read_gguf_metadata(str(path))
    header = GgufHeader.from_file(str(path))
    shapes = {info.name: info.shape for info in header.tensors}
    config = text_config(metadata, shapes, path.name)
    stored = load_gguf_state_dict(header)
    model = _build_model(config, restored_state_dict(stored, header.ggml_types, config, path.name))
    return model, _tokenizer(path)


def text_config(metadata: dict, tensor_shapes: dict, file_name: str = "GGUF"):
    """A `Qwen3_5TextConfig` from the keys `Qwen3NextModel.set_gguf_parameters` and
    `TextModel.set_gguf_parameters` write (prefixed `qwen35.`)."""
    from transformers import Qwen3_5TextConfig

    def key(name, default=None):
        value = metadata.get(f"{GGUF_ARCHITECTURE}.{name}", default)
        if value is None:
            raise WeightsError(f"{file_name}: GGUF metadata lacks {GGUF_ARCHITECTURE}.{name}")
        return value

    if "token_embd.weight" not in tensor_shapes:
        raise WeightsError(f"{file_name}: GGUF has no token_embd.weight tensor")
    # Newer files count multi-token-prediction blocks in block_count; the decoder stack does not.
    layers = key("block_count") - key("nextn_predict_layers", 0)
    head_dim = key("attention.key_length")
    value_heads = key("ssm.time_step_rank")
    kv_heads = key("attention.head_count_kv")
    rope_sections = list(key("rope.dimension_sections"))
    while rope_sections and rope_sections[-1] == 0:  # padded to four by the converter
        rope_sections.pop()
    ids = {name: metadata.get(f"tokenizer.ggml.{name}_token_id") for name in ("bos", "eos", "padding")}
    return Qwen3_5TextConfig(
        vocab_size=tensor_shapes["token_embd.weight"][0],
        hidden_size=key("embedding_length"),
        intermediate_size=key("feed_forward_length"),
        num_hidden_layers=layers,
        layer_types=_layer_types(metadata, layers),
        num_attention_heads=key("attention.head_count"),
        num_key_value_heads=max(kv_heads) if isinstance(kv_heads, list) else kv_heads,
        head_dim=head_dim,
        rms_norm_eps=key("attention.layer_norm_rms_epsilon"),
        max_position_embeddings=key("context_length"),
        linear_conv_kernel_dim=key("ssm.conv_kernel"),
        linear_key_head_dim=key("ssm.state_size"),  # the converter writes linear_key_head_dim here
        linear_num_key_heads=key("ssm.group_count"),
        linear_num_value_heads=value_heads,
        linear_value_head_dim=key("ssm.inner_size") // value_heads,  # stored as heads x head dim
        rope_parameters={
            "rope_type": "default",
            "rope_theta": key("rope.freq_base"),
            # the converter stores the rotary width in dimensions, not as a fraction of the head
            "partial_rotary_factor": key("rope.dimension_count") / head_dim,
            "mrope_section": rope_sections,
            "mrope_interleaved": True,  # llama.cpp runs qwen35 with interleaved M-RoPE only
        },
        # the converter writes output.weight only when the checkpoint has its own LM head
        tie_word_embeddings="output.weight" not in tensor_shapes,
        bos_token_id=ids["bos"], eos_token_id=ids["eos"], pad_token_id=ids["padding"],
    )


def _layer_types(metadata: dict, layers: int) -> list[str]:
    """Which layers are DeltaNet: an explicit per-layer flag list when present, otherwise
    llama.cpp's rule that every `full_attention_interval`-th layer is full attention."""
    recurrent = metadata.get(f"{GGUF_ARCHITECTURE}.attention.recurrent_layers")
    if isinstance(recurrent, list):
        return [LINEAR if flag else FULL for flag in recurrent[:layers]]
    interval = metadata.get(f"{GGUF_ARCHITECTURE}.full_attention_interval", DEFAULT_FULL_ATTENTION_INTERVAL)
    return [FULL if (index + 1) % interval == 0 else LINEAR for index in range(layers)]


def gguf_names(hf_names, config) -> dict[str, str]:
    """HF state-dict name -> GGUF tensor name, through the converter's own renames and gguf-py's
    TensorNameMap for MODEL_ARCH.QWEN35 (so names stay right if gguf-py's table moves)."""
    import gguf

    table = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN35, config.num_hidden_layers)
    names = {}
    for hf_name in hf_names:
        if hf_name == "lm_head.weight" and config.tie_word_embeddings:
            continue  # tied: llama.cpp reuses token_embd and stores no output.weight
        # Qwen3NextModel.modify_tensors renames `dt_bias` to `dt_proj.bias` before mapping.
        source = hf_name.removesuffix(".dt_bias") + ".dt_proj.bias" if hf_name.endswith(".dt_bias") else hf_name
        mapped = table.get_name(source, try_suffixes=(".weight", ".bias"))
        if mapped is None:
            raise WeightsError(f"no GGUF name for {hf_name} in gguf-py's qwen35 tensor table")
        names[hf_name] = mapped
    return names


def restored_state_dict(stored: dict, ggml_types: dict, config, file_name: str = "GGUF") -> dict:
    """fp32 HF state dict from the GGUF tensors `stored` ({gguf name: lazy tensor})."""
    from transformers import Qwen3_5ForCausalLM
    from transformers.initialization import no_init_weights

    with torch.device("meta"), no_init_weights():
        expected = {name: tuple(p.shape) for name, p in Qwen3_5ForCausalLM(config).state_dict().items()}
    names = gguf_names(expected, config)
    missing = sorted(gguf for gguf in names.values() if gguf not in stored)
    if missing:
        raise WeightsError(f"{file_name}: GGUF lacks tensors {', '.join(missing[:4])}"
                           f"{' ...' if len(missing) > 4 else ''}")
    state = {}
    for hf_name, gguf_name in names.items():
        values = _dequantized(stored[gguf_name], ggml_types[gguf_name])
        tensor = undo_conversion(hf_name, values, config)
        if tuple(tensor.shape) != expected[hf_name]:
            raise WeightsError(f"{file_name}: {gguf_name} has shape {tuple(tensor.shape)} after "
                               f"conversion, the config implies {expected[hf_name]} for {hf_name}")
        state[hf_name] = tensor
    return state


def _dequantized(lazy, ggml_type: int) -> torch.Tensor:
    import gguf

    raw = lazy[...]
    if raw.dtype != torch.uint8:  # F32 / F16 / BF16, already typed
        return raw.float()
    values = gguf.quants.dequantize(raw.numpy(), gguf.GGMLQuantizationType(ggml_type))
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))


def undo_conversion(hf_name: str, tensor: torch.Tensor, config) -> torch.Tensor:
    """Invert, for one tensor, what llama.cpp's converter did to it (numbered as in the converter)."""
    # (1) Qwen3NextModel.modify_tensors stored A_log as -exp(A_log): take it back with log(-x).
    if hf_name.endswith(".A_log"):
        tensor = torch.log(-tensor)
    # (2) Qwen3NextModel.modify_tensors added 1 to every `*norm.weight` except the gated
    #     DeltaNet norm (linear_attn.norm), folding Qwen3.5's (1 + w) RMSNorm scale into w.
    elif hf_name.endswith("norm.weight") and not hf_name.endswith("linear_attn.norm.weight"):
        tensor = tensor - 1
    # (3) _LinearAttentionVReorderBase moved value heads from grouped-by-key-head order to tiled
    #     order (only when key and value head counts differ); put them back.
    tensor = _ungroup_value_heads(hf_name, tensor, config)
    # (4) Qwen3NextModel.modify_tensors squeezed the depthwise conv1d weight [C, 1, K] to [C, K].
    if hf_name.endswith("linear_attn.conv1d.weight"):
        tensor = tensor.unsqueeze(1)
    return tensor.contiguous()


def _tiled_to_grouped(tensor: torch.Tensor, dim: int, key_heads: int, per_key: int, head_dim: int):
    """Inverse of the converter's `_reorder_v_heads`: it viewed `dim` as [key_heads, per_key,
    head_dim] and swapped the first two; here the stored [per_key, key_heads, head_dim] view
    is swapped back."""
    shape = list(tensor.shape)
    view = tensor.reshape(*shape[:dim], per_key, key_heads, head_dim, *shape[dim + 1:])
    return view.transpose(dim, dim + 1).reshape(shape)


def _ungroup_value_heads(hf_name: str, tensor: torch.Tensor, config) -> torch.Tensor:
    key_heads, value_heads = config.linear_num_key_heads, config.linear_num_value_heads
    if ".linear_attn." not in hf_name or key_heads == value_heads:
        return tensor
    per_key, value_dim = value_heads // key_heads, config.linear_value_head_dim
    query_key_rows = 2 * key_heads * config.linear_key_head_dim
    ungroup = lambda t, dim, head_dim: _tiled_to_grouped(t, dim, key_heads, per_key, head_dim)  # noqa: E731
    if hf_name.endswith((".in_proj_qkv.weight", ".conv1d.weight")):
        # fused q|k|v rows (and conv channels): only the value block was reordered
        return torch.cat([tensor[:query_key_rows], ungroup(tensor[query_key_rows:], 0, value_dim)])
    if hf_name.endswith(".in_proj_z.weight"):
        return ungroup(tensor, 0, value_dim)
    if hf_name.endswith((".in_proj_a.weight", ".in_proj_b.weight", ".A_log", ".dt_bias")):
        return ungroup(tensor, 0, 1)  # one row / value per value head
    if hf_name.endswith(".out_proj.weight"):
        return ungroup(tensor, 1, value_dim)  # consumes the value dimension: columns
    return tensor  # linear_attn.norm: one weight shared by every head


def _build_model(config, state: dict):
    from transformers import Qwen3_5ForCausalLM
    from transformers.initialization import no_init_weights

    with no_init_weights():
        model = Qwen3_5ForCausalLM(config)
    result = model.load_state_dict(state, strict=False, assign=True)
    allowed_missing = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if set(result.missing_keys) - allowed_missing or result.unexpected_keys:
        raise WeightsError(f"GGUF weights do not fit Qwen3.5: missing {result.missing_keys}, "
                           f"unexpected {result.unexpected_keys}")
    if config.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    return model.float().eval()


def _tokenizer(path):
    """transformers builds it from the GGUF vocabulary, merges, token types and special ids
    (its table knows llama.cpp's `qwen35` pre-tokenizer split); the chat template comes
    from `tokenizer.chat_template` when the file has one."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    except (ValueError, KeyError) as error:
        raise WeightsError(f"{path.name}: cannot build a tokenizer from the GGUF metadata ({error})") from None
