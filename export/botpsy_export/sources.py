"""Resolve `--model SRC` to a loaded PyTorch model + tokenizer.

SRC is a built-in name (`builtins.BUILTINS`), a local Hugging Face folder, a `.gguf`
file, or a Hub id. Only safetensors and GGUF weights are read: never pickles, never
`trust_remote_code`.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from .architectures import Architecture, architecture_for, supported_model_types
from .builtins import BUILTINS
from .errors import ExportError, HubUnreachableError, WeightsError
from .gguf_source import load_gguf

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
HUB_PATTERNS = ["*.json", "*.safetensors", "*.jinja", "*.txt", "*.model", "tokenizer*"]


@dataclass
class LoadedSource:
    name: str  # folder-friendly model name for the manifest
    source: str  # what the user passed
    architecture: Architecture


def load_source(source: str, progress=None) -> LoadedSource:
    """`progress` (a progress.Progress, or None for none) shows what a built-in source downloads."""
    if source in BUILTINS:
        model, tokenizer = BUILTINS[source].load(progress)
        return LoadedSource(source, source, _architecture(model, tokenizer))
    path = Path(source).expanduser()
    if path.suffix == ".gguf" or (path.is_file() and path.suffix != ".json"):
        if not path.is_file():
            raise WeightsError(f"GGUF file not found: {path}")
        model, tokenizer = load_gguf(path)
        return LoadedSource(path.stem, source, _architecture(model, tokenizer))
    if path.is_dir():
        return LoadedSource(path.name, source, load_folder(path))
    if HUB_ID.match(source):
        return LoadedSource(source.split("/")[-1], source, load_folder(download_from_hub(source)))
    raise ExportError(
        f"model source {source!r} is not a built-in name ({', '.join(sorted(BUILTINS))}), "
        "an existing folder, a .gguf file, or a Hub id like owner/name"
    )


def _architecture(model, tokenizer) -> Architecture:
    return architecture_for(model.config.model_type)(model, tokenizer)


def check_weights(folder: Path):
    check_weight_names(str(folder), [p.name for p in folder.iterdir()])


def check_weight_names(where: str, names: list[str]):
    """Refuse a model whose file names show no safetensors weights (pickles are never loaded)."""
    if any(name.endswith(".safetensors") for name in names):
        return
    pickles = sorted(name for name in names if Path(name).suffix in PICKLE_SUFFIXES)
    if pickles:
        raise WeightsError(
            f"{where}: only pickle-based weights ({', '.join(pickles[:3])}); refusing to unpickle. "
            "Convert them to safetensors first"
        )
    ggufs = sorted(name for name in names if name.endswith(".gguf"))
    if ggufs:
        raise WeightsError(f"{where}: no *.safetensors weights found, only GGUF files "
                           f"({', '.join(ggufs[:3])}): download one and pass the .gguf file")
    raise WeightsError(f"{where}: no *.safetensors weights found")


def load_folder(folder: Path) -> Architecture:
    import json

    config_path = folder / "config.json"
    if not config_path.is_file():
        raise WeightsError(f"{folder}: no config.json; pass a Hugging Face model folder or a .gguf file")
    model_type = json.loads(config_path.read_text()).get("model_type")
    arch_cls = architecture_for(str(model_type))
    check_weights(folder)
    from transformers import AutoTokenizer

    model = arch_cls.load_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
    return arch_cls(model, tokenizer)


def download_from_hub(repo_id: str) -> Path:
    """Download config, tokenizer and safetensors weights; returns the local snapshot folder.

    The repo's file list is read first, so a pickle-only repo is refused before anything is
    downloaded. Without a connection, a snapshot already in the Hugging Face cache still serves.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        names = _hub_file_names(repo_id)
        if names is not None:
            check_weight_names(f"{repo_id} on the Hugging Face Hub", names)
        return Path(snapshot_download(repo_id, allow_patterns=HUB_PATTERNS))
    except RepositoryNotFoundError:  # also gated repos the user has no access to
        raise ExportError(
            f"no model {repo_id!r} on the Hugging Face Hub (or it is private or gated and you are "
            "not logged in): check the id, or pass a local folder or .gguf"
        ) from None
    except ExportError:
        raise
    except Exception as error:  # connection, DNS, offline mode without a cached copy
        raise HubUnreachableError(
            f"could not fetch {repo_id!r} from the Hugging Face Hub ({type(error).__name__}); "
            "pass a local folder or .gguf"
        ) from None


def _hub_file_names(repo_id: str) -> list[str] | None:
    """Every file in the repo (one request, no retries), or None when the Hub cannot answer."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        siblings = HfApi().model_info(repo_id).siblings
    except RepositoryNotFoundError:
        raise
    except Exception:  # offline or unreachable: snapshot_download may still find the cache
        return None
    return None if siblings is None else [sibling.rfilename for sibling in siblings]
