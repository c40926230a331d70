"""A tokenizer parsed out of a GGUF file can be kept in a folder and read back unchanged."""

from pathlib import Path

from botpsy_export.builtins.smollm2 import smollm2_gguf_path
from botpsy_export.gguf_source import _gguf_tokenizer


def test_a_gguf_tokenizer_is_parsed_once_then_read_from_its_cache_folder(tmp_path):
    """Qwen2.5-Coder's tokenizer (151,936 entries) takes minutes to parse out of GGUF metadata on
    a loaded machine; here SmolLM2's: the second load reads the saved folder, same tokenizer."""
    gguf, cache = Path(smollm2_gguf_path()), tmp_path / "tokenizer"
    parsed = _gguf_tokenizer(gguf, cache)
    assert (cache / "tokenizer.json").is_file() and [p.name for p in tmp_path.iterdir()] == ["tokenizer"]
    cached = _gguf_tokenizer(gguf, cache)
    text = "<|im_start|>user\nWhat is 17% of 2,340?<|im_end|>\n"
    assert cached(text)["input_ids"] == parsed(text)["input_ids"]
    assert cached.chat_template == parsed.chat_template and cached.eos_token == parsed.eos_token
