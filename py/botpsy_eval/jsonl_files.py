"""Per-case JSON-lines files, plain (`.jsonl`) or gzip-compressed (`.jsonl.gz`): the suffix
decides. Compressed files are appended to as further gzip members, which gzip readers
concatenate, so a long eval's file stays compressed while it grows."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import IO


def is_compressed(path: Path) -> bool:
    return Path(path).suffix == ".gz"


def read_text(path: Path) -> str:
    path = Path(path)
    if is_compressed(path):
        return _readable_prefix(path)
    return path.read_text(encoding="utf-8")


def open_for_lines(path: Path, append: bool) -> IO[str]:
    path = Path(path)
    if is_compressed(path):
        return gzip.open(path, "at" if append else "wt", encoding="utf-8")
    return path.open("a" if append else "w", encoding="utf-8")


def drop_partial_last_line(path: Path) -> None:
    """Cut a half-written last line (a run killed mid-write), so appended runs start on a line."""
    path = Path(path)
    if is_compressed(path):
        text = _readable_prefix(path)
        if text and not text.endswith("\n"):
            with gzip.open(path, "wt", encoding="utf-8") as file:
                file.write(text[:text.rfind("\n") + 1])
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[:data.rfind(b"\n") + 1])


def _readable_prefix(path: Path) -> str:
    """Whatever decompresses, member after member, even when the last one was cut short (a run
    killed mid-write, or one still being written: its flushed blocks are readable)."""
    data, text = Path(path).read_bytes(), []
    while data:
        member = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
        text.append(member.decompress(data))
        if not member.eof:
            break
        data = member.unused_data
    return b"".join(text).decode("utf-8", errors="replace")
