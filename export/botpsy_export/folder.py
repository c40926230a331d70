"""Write the non-graph files of an exported folder and describe files for the manifest."""

import hashlib
import json
import tempfile
from pathlib import Path

from .architectures import Architecture

MANIFEST = "manifest.json"


def write_json(path: Path, data: dict):
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_tokenizer_files(arch: Architecture, out: Path) -> list[str]:
    """tokenizer.json + tokenizer_config.json holding the chat template and the right EOS."""
    with tempfile.TemporaryDirectory() as scratch:
        arch.tokenizer.save_pretrained(scratch)
        scratch = Path(scratch)
        (out / "tokenizer.json").write_bytes((scratch / "tokenizer.json").read_bytes())
        config = json.loads((scratch / "tokenizer_config.json").read_text())
    eos_id = arch.eos_token_ids()[0]
    config.update(
        chat_template=arch.chat_template(),
        eos_token=arch.tokenizer.convert_ids_to_tokens(eos_id),
    )
    write_json(out / "tokenizer_config.json", config)
    return ["tokenizer.json", "tokenizer_config.json"]


def write_model_configs(arch: Architecture, out: Path, graph_files: dict) -> list[str]:
    """config.json and generation_config.json; `graph_files` maps each dtype to the files of
    its standard graph (the graph, then its external data)."""
    config = arch.config.to_dict()
    config.pop("quantization_config", None)  # describes the GGUF source, not this folder
    config.pop("_name_or_path", None)  # the folder it was read from on this machine (a home folder)
    config["eos_token_id"] = arch.eos_token_ids()
    config["transformers.js_config"] = transformers_js_config(graph_files)
    write_json(out / "config.json", config)
    generation = {"bos_token_id": arch.bos_token_id(), "eos_token_id": arch.eos_token_ids(),
                  "pad_token_id": arch.tokenizer.pad_token_id, "do_sample": False}
    write_json(out / "generation_config.json", {k: v for k, v in generation.items() if v is not None})
    return ["config.json", "generation_config.json"]


def transformers_js_config(graph_files: dict) -> dict:
    """transformers.js 4.3.2 fetches `<graph>_data` (then `_data_1`, ...) only when
    `use_external_data_format` names the graph file with its number of data files."""
    external = {}
    for files in graph_files.values():
        graph, *data = files
        expected = [graph.name + "_data" + (f"_{i}" if i else "") for i in range(len(data))]
        if [path.name for path in data] != expected:
            raise ValueError(f"{graph.name}: external data files {[p.name for p in data]} are not named "
                             f"as transformers.js expects ({expected})")
        if data:
            external[graph.name] = len(data)
    return {"use_external_data_format": external}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe_files(out: Path) -> dict:
    """Size and sha256 of every file in the folder except the manifest, by relative path."""
    entries = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        relative = path.relative_to(out).as_posix()
        if relative != MANIFEST and not any(part.startswith(".") for part in path.relative_to(out).parts):
            entries[relative] = {"size": path.stat().st_size, "sha256": sha256_of(path)}
    return entries
