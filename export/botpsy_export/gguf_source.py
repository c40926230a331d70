"""Load a `.gguf` file into a PyTorch model + tokenizer: Qwen3.5/BotPsy through our own reader,
the architectures transformers reads (llama, qwen2, ...) through transformers."""

import os
import shutil
import struct
from pathlib import Path

from .architectures import supported_model_types
from .errors import UnknownArchitectureError, WeightsError

MMPROJ = "clip"  # general.architecture of llama.cpp's vision-projector files


def load_gguf(path: Path, tokenizer_cache: Path | None = None):
    """`tokenizer_cache`: a folder for the tokenizer parsed from this exact file (parsing a 150k
    vocabulary out of GGUF metadata takes minutes on a loaded machine); read when present."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .gguf_qwen3_5 import GGUF_ARCHITECTURE as QWEN35, load_qwen35_gguf

    architecture = gguf_architecture(path)
    if architecture == QWEN35:  # our own reader: transformers' depends on optional packages
        return load_qwen35_gguf(path)
    if architecture == MMPROJ:
        raise UnknownArchitectureError(
            f"{path.name}: a vision projector (mmproj) GGUF, not a language model; pass the text model's .gguf")
    if architecture not in transformers_gguf_architectures():
        raise UnknownArchitectureError(
            f"{path.name}: GGUF architecture {architecture!r} is not supported; GGUF export supports: "
            f"{', '.join(supported_gguf_architectures())}; for other models pass a Hugging Face folder "
            "with safetensors")
    try:
        tokenizer = _gguf_tokenizer(path, tokenizer_cache)
        model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    except ValueError as error:
        raise WeightsError(f"{path.name}: not a readable GGUF file ({error})") from None
    return model, tokenizer


def _gguf_tokenizer(path: Path, cache: Path | None):
    from transformers import AutoTokenizer

    if cache is not None and (cache / "tokenizer.json").is_file():
        return AutoTokenizer.from_pretrained(cache)
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    if cache is None:
        return tokenizer
    partial = cache.with_name(f".{cache.name}.partial-{os.getpid()}")
    tokenizer.save_pretrained(partial)
    try:
        os.replace(partial, cache)
    except OSError:  # another export wrote it meanwhile
        shutil.rmtree(partial, ignore_errors=True)
    # Read back even the first time: the saved folder loads as its model's own tokenizer class,
    # which can differ from the GGUF parse (Qwen2's adds its NFC normalizer), and every export of
    # this file must write the same tokenizer.json, or a re-export's runs cannot be resumed.
    return AutoTokenizer.from_pretrained(cache)


def gguf_architecture(path: Path) -> str:
    """`general.architecture` of a GGUF file, read from its header only."""
    from transformers.integrations.gguf import read_gguf_metadata

    try:
        return read_gguf_metadata(str(path))[0]["general.architecture"]
    except (ValueError, KeyError, IndexError, OSError, UnicodeDecodeError, struct.error) as error:
        raise WeightsError(f"{path.name}: not a readable GGUF file ({error})") from None


def transformers_gguf_architectures() -> set[str]:
    """GGUF architectures transformers loads whose model_type we export (llama for SmolLM2)."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return set(GGUF_SUPPORTED_ARCHITECTURES) & set(supported_model_types())


def supported_gguf_architectures() -> list[str]:
    from .gguf_qwen3_5 import GGUF_ARCHITECTURE as QWEN35

    return sorted(transformers_gguf_architectures() | {QWEN35})
