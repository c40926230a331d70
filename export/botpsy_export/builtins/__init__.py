"""Built-in model sources that work offline, one module each (a name, a loader and what its
revision is made of). `botpsy-web export --model NAME` looks them up here."""

import hashlib
import json
from dataclasses import dataclass
from typing import Callable

from . import qwen2_5_coder, smollm2, tiny_qwen
from .tiny_qwen import build_tiny_qwen, tiny_qwen_config  # noqa: F401  (tests build the toy model directly)


@dataclass(frozen=True)
class Builtin:
    name: str
    load: Callable[..., tuple]                 # (progress: Progress | None) -> (PyTorch model, tokenizer)
    revision_parts: Callable[[], list[str]]    # what the export is made from


BUILTINS: dict[str, Builtin] = {
    module.NAME: Builtin(module.NAME, loader, module.revision_parts)
    for module, loader in ((smollm2, lambda progress=None: smollm2.load_smollm2()),
                           (tiny_qwen, lambda progress=None: tiny_qwen.build_tiny_qwen()),
                           # the only one that downloads: its first load shows the download's bars
                           (qwen2_5_coder, qwen2_5_coder.load_qwen2_5_coder))
}


def builtin_revision(name: str) -> str:
    """A short hash of what a built-in model is made from (its config, weights source and
    tokenizer source): an export made from an older definition has another revision."""
    if name not in BUILTINS:
        raise KeyError(f"{name!r} is not a built-in model ({', '.join(sorted(BUILTINS))})")
    return hashlib.sha256(json.dumps(BUILTINS[name].revision_parts()).encode()).hexdigest()[:12]
