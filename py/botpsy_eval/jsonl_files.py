"""Per-case JSON-lines files, plain (`.jsonl`) or gzip-compressed (`.jsonl.gz`): the suffix
decides. Compressed files are appended to as further gzip members, which gzip readers
concatenate, so a long eval's file stays compressed while it grows."""

from __future__ import annotations

import gzip
import json
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


class RunLines:
    """A long run's JSON-lines file, one line per case run as it ends. Each line is appended by
    path (opened, written, closed), so a file replaced while the run goes on (a `git stash` or
    checkout, an editor's save) receives the later lines, not a deleted copy the run still held
    open. With append, a half-written last line (a run killed mid-write) is dropped first;
    without, the file starts empty."""

    def __init__(self, path: Path, append: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if append and self.path.exists():
            drop_partial_last_line(self.path)
        else:
            open_for_lines(self.path, append).close()

    def append(self, entry: dict) -> None:
        with open_for_lines(self.path, append=True) as file:
            file.write(json.dumps(entry, ensure_ascii=False) + "\n")


def drop_partial_last_line(path: Path) -> None:
    """Cut a half-written last line (a run killed mid-write), so appended runs start on a line.
    A compressed file is rewritten as one whole gzip member holding its whole lines: a member
    left unterminated by a killed writer would otherwise sit before the next one appended."""
    path = Path(path)
    if is_compressed(path):
        text = _readable_prefix(path)
        with gzip.open(path, "wt", encoding="utf-8") as file:
            file.write(text[:text.rfind("\n") + 1])
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[:data.rfind(b"\n") + 1])


GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 12


def _readable_prefix(path: Path) -> str:
    """Every whole line that decompresses, member after member. A member cut short (a run killed
    mid-write, or one still being written: its flushed blocks are readable) gives its whole lines,
    and reading goes on at the next member, if one was appended after it."""
    data, text, position = Path(path).read_bytes(), [], 0
    while position < len(data):
        decompressed, end, complete = _one_member(data, position)
        if complete:
            text.append(decompressed)
            position = end
            continue
        text.append(decompressed[:decompressed.rfind(b"\n") + 1])
        following = data.find(GZIP_MAGIC, max(end, position + len(GZIP_MAGIC)))
        if following < 0:
            break
        position = following
    return b"".join(text).decode("utf-8", errors="replace")


def _one_member(data: bytes, start: int) -> tuple[bytes, int, bool]:
    """(what the member at `start` decompresses to, where reading stopped, whether it ended)."""
    member, out, index = zlib.decompressobj(wbits=31), bytearray(), start
    while index < len(data):
        chunk = data[index:index + _CHUNK]
        before = member.copy()
        try:
            out += member.decompress(chunk)
        except zlib.error:  # the member was cut and another follows: take what this chunk still gives
            for offset in range(len(chunk)):
                try:
                    out += before.decompress(chunk[offset:offset + 1])
                except zlib.error:
                    return bytes(out), index + offset, False
            return bytes(out), index + len(chunk), False
        if member.eof:
            return bytes(out), index + len(chunk) - len(member.unused_data), True
        index += len(chunk)
    return bytes(out), index, False
