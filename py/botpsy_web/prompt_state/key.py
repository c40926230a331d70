"""What a shipped prompt state depends on, as this checkout would compute it now, and the folder's
index of shipped states (prompt-states.json; its format: docs/contracts.md section 1)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from botpsy_web import REPO_ROOT

INDEX_NAME = "prompt-states.json"
STATES_DIRECTORY = "prompt-states"
INDEX_FORMAT = "botpsy-prompt-states"
INDEX_VERSION = 1
RUNTIME_DIR = REPO_ROOT / "web" / "runtime"
ORT_PACKAGE = REPO_ROOT / "node_modules" / "onnxruntime-web" / "package.json"


class PromptStateError(Exception):
    """A shipped prompt state could not be computed; the message says what and why."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(folder: Path) -> dict:
    try:
        return json.loads((folder / "manifest.json").read_text())
    except FileNotFoundError:
        raise PromptStateError(f"{folder} is not an exported model folder (no manifest.json)") from None
    except json.JSONDecodeError as error:
        raise PromptStateError(f"{folder}/manifest.json is not valid JSON ({error})") from None


def wasm_dtype(manifest: dict, folder: Path, dtype: str | None = None) -> str:
    """The dtype a WASM visit loads: `dtype` when given, else the manifest's recommendation."""
    chosen = dtype or (manifest.get("recommended_dtype") or {}).get("wasm") or next(iter(manifest.get("dtypes") or {}), None)
    if chosen not in (manifest.get("dtypes") or {}):
        raise PromptStateError(f"{folder} has no dtype {chosen!r} (it has: {', '.join(manifest.get('dtypes') or {})})")
    return chosen


def state_file_name(dtype: str) -> str:
    return f"{STATES_DIRECTORY}/wasm-{dtype}.bin"


def default_prompt(folder: Path) -> str:
    """The text every first prompt of the page starts with for this folder: the system prompt and
    the default tools, rendered by py/botpsy_agent with the folder's chat template, as the page's
    warm-up renders it (Agent.render_prompt_prefix)."""
    from botpsy_agent.browser_session import builtin_tools
    from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS
    from botpsy_web.bench_scenario import folder_agent

    agent = folder_agent(folder)
    for tool in builtin_tools():
        agent.add_tool(tool, enabled_by_default=tool.name in DEFAULT_ENABLED_TOOLS)
    return agent.render_prompt_prefix()


def tokens_sha256(folder: Path, text: str) -> str:
    """The runtime's key for a prompt's tokens: SHA-256 of the ids as int32 little-endian."""
    from tokenizers import Tokenizer

    ids = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text, add_special_tokens=False).ids
    return sha256_hex(b"".join(int(i).to_bytes(4, "little", signed=True) for i in ids))


def runtime_sha256() -> str:
    """A fingerprint of web/runtime/ (every .js file): a state is recomputed when the code that
    computes it changes, whatever the change."""
    digest = hashlib.sha256()
    for path in sorted(RUNTIME_DIR.rglob("*.js")):
        digest.update(str(path.relative_to(RUNTIME_DIR)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def onnxruntime_version() -> str | None:
    try:
        return json.loads(ORT_PACKAGE.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def weights_identity(manifest: dict, dtype: str) -> dict:
    """The identity's modelFiles for a WASM visit: its graph (the appending one when the folder
    has it) and the external data, each with the manifest's sha256."""
    spec = manifest["dtypes"][dtype]
    graph = spec.get("appending_file") or spec["file"]
    paths = [graph] + [path for path in spec.get("files", []) if path != spec["file"]]
    return {path: manifest["files"].get(path, {}).get("sha256") for path in paths}


def empty_index() -> dict:
    """The index of a folder that ships no state: served in place of a missing one, so that a
    visit's request for it is answered (a 404 shows as an error in the visitor's console)."""
    return {"format": INDEX_FORMAT, "version": INDEX_VERSION, "states": []}


def read_index(folder: Path) -> dict:
    """The folder's index, or an empty one (none yet, or unreadable: it is written anew)."""
    try:
        index = json.loads((folder / INDEX_NAME).read_text())
    except (OSError, ValueError):
        index = None
    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT or not isinstance(index.get("states"), list):
        return empty_index()
    return index


def current_entry(folder: Path, dtype: str, prompt: str) -> dict | None:
    """The index entry of the WASM `dtype` state when it is what this checkout would compute now
    (same prompt tokens, weights, onnxruntime version and runtime code) and its file is intact."""
    manifest = read_manifest(folder)
    name = state_file_name(dtype)
    entry = next((e for e in read_index(folder)["states"] if e.get("file") == name), None)
    if not entry:
        return None
    identity = entry.get("identity") or {}
    path = folder / name
    current = (
        entry.get("tokensSha256") == tokens_sha256(folder, prompt)
        and identity.get("modelFiles") == weights_identity(manifest, dtype)
        and identity.get("onnxruntime") == onnxruntime_version()
        and entry.get("runtimeSha256") == runtime_sha256()
        and path.is_file() and path.stat().st_size == entry.get("size")
        and file_sha256(path) == entry.get("sha256")
    )
    return entry if current else None


def write_index_entry(folder: Path, entry: dict) -> None:
    """Puts `entry` in the folder's index in place of the one for the same file (written whole,
    then renamed, so a reader never sees half of it)."""
    index = read_index(folder)
    index["states"] = [e for e in index["states"] if e.get("file") != entry["file"]] + [entry]
    index["version"] = INDEX_VERSION
    partial = folder / f".{INDEX_NAME}.partial"
    partial.write_text(json.dumps(index, indent=1) + "\n")
    partial.replace(folder / INDEX_NAME)
