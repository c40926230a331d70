"""Save a graph with its weights beside it as external data, in shards of at most MAX_SHARD_BYTES.

Why shards: Chromium refuses any single buffer of 2 GiB or more wherever the runtime keeps a
model file (a Cache API `new Response(bytes)`, an OPFS write, a Blob, `crypto.subtle.digest`:
RangeError at 2 GiB - 4 KiB, measured 2026-12-03). An fp32 0.5B model's weights in one 2.5 GB
file loaded but could not be stored, so every visit downloaded them again. Each shard is its own
model file (its own manifest entry, size and sha256, stored and checked on its own).

Shards are named as transformers.js 4.3.2 requests them (`getExternalDataChunkNames`):
`<graph>_data`, `<graph>_data_1`, `<graph>_data_2`, ... (config.json's
`use_external_data_format` gives their number; folder.py). Tensors are never split: a new shard
starts when the next tensor would take the current one past the limit, so a single tensor larger
than the limit gets a shard of its own, larger than the limit (a warning says so).
"""

import logging
import re
from pathlib import Path

import onnx

# 1 GiB: half of Chromium's 2 GiB limit, the wide margin it needs (1.5 GiB was accepted, 2 GiB -
# 4 KiB refused; the spec names no limit and other browsers may differ), and exactly
# web/runtime/storage/sha256.js's SUBTLE_DIGEST_MAX_BYTES, so every shard is hashed natively.
MAX_SHARD_BYTES = 2**30
ALIGNMENT = 4096  # external tensors start on page boundaries (mmap-friendly)
SIZE_THRESHOLD = 1024  # smaller tensors stay inside the graph (as onnx.save_model's default)
COPY_BLOCK = 64 * 2**20

log = logging.getLogger(__name__)


def shard_name(graph_name: str, index: int) -> str:
    """model.onnx, 0 -> model.onnx_data; model.onnx, 2 -> model.onnx_data_2"""
    return f"{graph_name}_data" + (f"_{index}" if index else "")


def all_tensors(model: onnx.ModelProto):
    """Initializers and tensors held in node attributes (large Constants are external too),
    subgraphs included."""
    yield from _graph_tensors(model.graph)


def _graph_tensors(graph):
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("g"):
                yield from _graph_tensors(attribute.g)
            for subgraph in attribute.graphs:
                yield from _graph_tensors(subgraph)


def has_external_data(model: onnx.ModelProto) -> bool:
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in all_tensors(model))


class _Shards:
    """The data files of one graph, written one after the other."""

    def __init__(self, graph_path: Path, limit: int):
        if not isinstance(limit, int) or limit < ALIGNMENT:
            raise ValueError(f"external data shard limit must be an int of at least {ALIGNMENT} bytes, got {limit!r}")
        self.folder, self.graph_name, self.limit = graph_path.parent, graph_path.name, limit
        self.paths: list[Path] = []
        self.handle = None

    def place(self, tensor_name: str, length: int):
        """Open handle positioned where a tensor of `length` bytes goes; returns (file name, offset)."""
        if self.handle is not None and self.handle.tell():
            aligned = self.handle.tell() + (-self.handle.tell() % ALIGNMENT)
            if aligned + length > self.limit:
                self._next()
        if self.handle is None:
            self._next()
        self.handle.write(b"\0" * (-self.handle.tell() % ALIGNMENT))
        if length > self.limit:
            log.warning("tensor %s has %d bytes, more than the %d-byte external data shard limit: it gets a "
                        "shard of its own (%s) that browsers may refuse to store", tensor_name, length,
                        self.limit, self.paths[-1].name)
        return self.paths[-1].name, self.handle.tell()

    def _next(self):
        self.close()
        path = self.folder / shard_name(self.graph_name, len(self.paths))
        self.paths.append(path)
        self.handle = open(path, "wb")

    def close(self):
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def save_with_external_data(model: onnx.ModelProto, path: Path, source_dir: Path | None = None,
                            limit: int | None = None) -> list[Path]:
    """Save `model` to `path` with its weights in shards beside it; returns [graph, *shards].

    Tensors held in memory (raw_data of SIZE_THRESHOLD bytes or more) are moved out one at a
    time (the model is edited in place, and its memory freed as it goes). Tensors already
    external are read from `source_dir` in blocks, so a graph of several GB is never held in
    RAM. `limit` defaults to MAX_SHARD_BYTES (read at call time).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_old_shards(path)
    shards = _Shards(path, MAX_SHARD_BYTES if limit is None else limit)
    try:
        for tensor in all_tensors(model):
            if tensor.data_location == onnx.TensorProto.EXTERNAL:
                _copy_external(tensor, source_dir, shards)
            elif tensor.HasField("raw_data") and len(tensor.raw_data) >= SIZE_THRESHOLD:
                name, offset = shards.place(tensor.name, len(tensor.raw_data))
                shards.handle.write(tensor.raw_data)
                tensor.ClearField("raw_data")
                _point_at(tensor, name, offset, shards.handle.tell() - offset)
    finally:
        shards.close()
    onnx.save_model(model, path)
    return [path, *shards.paths]


def _copy_external(tensor, source_dir: Path | None, shards: _Shards):
    info = {entry.key: entry.value for entry in tensor.external_data}
    if source_dir is None:
        raise ValueError(f"tensor {tensor.name!r} is external ({info.get('location')}) but no folder to read "
                         "it from was given: load the model with its external data, or pass source_dir")
    source_path = Path(source_dir) / info["location"]
    start = int(info.get("offset", 0))
    length = int(info["length"]) if "length" in info else source_path.stat().st_size - start
    name, offset = shards.place(tensor.name, length)
    with open(source_path, "rb") as source:
        source.seek(start)
        remaining = length
        while remaining > 0:
            block = source.read(min(COPY_BLOCK, remaining))
            if not block:
                raise ValueError(f"{source_path} ends before tensor {tensor.name!r} does "
                                 f"({length - remaining} of {length} bytes from offset {start})")
            shards.handle.write(block)
            remaining -= len(block)
    _point_at(tensor, name, offset, length)


def _point_at(tensor, location: str, offset: int, length: int):
    tensor.data_location = onnx.TensorProto.EXTERNAL
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value


def _remove_old_shards(path: Path):
    """Data files an earlier save of this graph left (a smaller export leaves fewer shards)."""
    pattern = re.compile(re.escape(path.name) + r"_data(_\d+)?")
    if path.parent.is_dir():
        for old in path.parent.iterdir():
            if pattern.fullmatch(old.name):
                old.unlink()
