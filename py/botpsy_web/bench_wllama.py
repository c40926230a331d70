"""wllama, the GGUF peer of `botpsy-web bench` (bench/engine-wllama.js).

wllama 3.13 is llama.cpp compiled to WASM; it runs the GGUF the folder was exported from
(`--gguf PATH`, by default the GGUF the manifest's `source` names: a .gguf path, or a built-in
model whose weights come from a GGUF). The bench's server gains one route for it,
/bench-gguf/<file name>, so the page loads it from this machine like every other file; wllama
keeps it in OPFS, so its "load from cache" is OPFS -> WASM heap. It runs on WASM only, with
the same thread count as the other engines (2 when the page is cross-origin isolated).
"""

from __future__ import annotations

import importlib
import threading
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from botpsy_web import REPO_ROOT
from botpsy_web.serve import BotpsyRequestHandler

ENGINE = "wllama"
GGUF_URL_PREFIX = "/bench-gguf/"
# Built-in export sources whose weights are a GGUF: name -> "module:function returning its path".
BUILTIN_GGUFS = {
    "smollm2-135m": "botpsy_export.builtins.smollm2:smollm2_gguf_path",
    "qwen2.5-coder-0.5b": "botpsy_export.builtins.qwen2_5_coder:qwen2_5_coder_gguf_path",
    "qwen2.5-coder-1.5b": "botpsy_export.builtins.qwen2_5_coder_1_5b:gguf_path",
}
CONTEXT_MARGIN_TOKENS = 64  # beyond the longest prompt plus its reply, for the KV cache's size


def gguf_for_folder(manifest: dict, requested: Path | None) -> Path:
    """The GGUF wllama runs: `requested` (--gguf), else the one the manifest's source names.
    Raises ValueError saying what to pass when there is none."""
    if requested is not None:
        path = Path(requested).expanduser()
        if not path.is_file():
            raise ValueError(f"--gguf {requested}: no such file")
        if path.suffix != ".gguf":
            raise ValueError(f"--gguf {requested}: not a .gguf file")
        return path.resolve()
    source = str(manifest.get("source", ""))
    if source.endswith(".gguf"):
        path = Path(source).expanduser()
        if path.is_file():
            return path.resolve()
        raise ValueError(f"the folder was exported from {source}, which is not on this machine: pass --gguf PATH")
    if source in BUILTIN_GGUFS:
        module_name, function = BUILTIN_GGUFS[source].split(":")
        return Path(getattr(importlib.import_module(module_name), function)()).resolve()
    raise ValueError(f"the folder's source ({source or 'not recorded'}) is no GGUF wllama can run: "
                     "pass --gguf PATH (the same model as a .gguf file)")


def engines_and_gguf(manifest: dict, engines, requested: Path | None, log) -> tuple[list, Path | None, str | None]:
    """(engines to run, the GGUF for wllama, why wllama cannot run). Without --gguf, a folder
    whose source names no GGUF is benched without wllama (said in the report); a bad --gguf is an error."""
    engines = list(engines)
    if ENGINE not in engines:
        return engines, None, None
    try:
        return engines, gguf_for_folder(manifest, requested), None
    except ValueError as error:
        if requested is not None:
            raise
        log(f"bench: wllama left out: {error}")
        return [e for e in engines if e != ENGINE], None, str(error)


def gguf_file_type(path: Path) -> str:
    """The GGUF's quantization as llama.cpp names it (e.g. Q4_K_M), read from its header."""
    import gguf

    reader = gguf.GGUFReader(path)
    field = reader.fields.get("general.file_type")
    if field is None:
        return "unknown"
    name = gguf.LlamaFileType(int(field.parts[field.data[0]][0])).name
    return name.removeprefix("MOSTLY_")


def context_tokens(prompt_lengths, reply_tokens: int) -> int:
    """wllama's n_ctx: the longest prompt plus its reply and a margin, rounded up to 256."""
    needed = max(prompt_lengths) + reply_tokens + CONTEXT_MARGIN_TOKENS
    return -(-needed // 256) * 256


def gguf_url(path: Path) -> str:
    return GGUF_URL_PREFIX + path.name


class GgufRouteHandler(BotpsyRequestHandler):
    """The app's handler, plus GGUF_URL_PREFIX + <name> -> that one GGUF file (range requests,
    COOP/COEP and the app's CSP as for every file)."""
    gguf_path: Path | None = None

    def translate_path(self, path: str) -> str:
        if self.gguf_path is not None and unquote(urlsplit(path).path) == gguf_url(self.gguf_path):
            return str(self.gguf_path)
        return super().translate_path(path)


def serve_with_gguf(models_dir: Path, gguf: Path | None) -> tuple[ThreadingHTTPServer, str]:
    """serve.serve_in_background's server, with the GGUF route (when a GGUF is given)."""
    handler = type("Handler", (GgufRouteHandler,), {"models_dir": Path(models_dir), "quiet": True, "gguf_path": gguf})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(REPO_ROOT)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"
