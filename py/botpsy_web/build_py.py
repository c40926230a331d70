"""`botpsy-web build-py`: pack the agent's Python for Pyodide into one zip.

The zip holds botpsy_agent (with tools/ and their data files) and the pure-Python
parts of jinja2 and markupsafe (markupsafe falls back to `_native` when its C
`_speedups` is missing). Entries are sorted and carry a fixed timestamp, so the
same sources always give the same bytes; an unchanged zip is not rewritten.
"""

from __future__ import annotations

import importlib.util
import io
import sys
import zipfile
from pathlib import Path

from botpsy_web import REPO_ROOT

DEFAULT_OUT = REPO_ROOT / "static" / "build" / "agent-py.zip"
# The agent plus what `botpsy-web eval`'s multi-turn categories run in the agent worker
# (BFCL's environment classes, mpmath: botpsy_eval/multi_turn/bundle.py); the app never loads it.
EVAL_OUT = REPO_ROOT / "static" / "build" / "agent-eval-py.zip"
AGENT_SOURCE = REPO_ROOT / "py" / "botpsy_agent"
VENDORED_PACKAGES = ("jinja2", "markupsafe")
FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
SKIPPED_SUFFIXES = (".pyc", ".so", ".pyd", ".c", ".pyi")
SKIPPED_DIRECTORIES = ("__pycache__",)


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {name!r} is not installed in {sys.prefix}; "
                                "run `pip install -e .` first")
    return Path(next(iter(spec.submodule_search_locations)))


def _files_of(package_dir: Path, archive_root: str) -> list[tuple[str, Path]]:
    entries = []
    for path in sorted(package_dir.rglob("*")):
        relative = path.relative_to(package_dir)
        if not path.is_file() or path.suffix in SKIPPED_SUFFIXES:
            continue
        if any(part in SKIPPED_DIRECTORIES or part.startswith(".") for part in relative.parts):
            continue
        entries.append((f"{archive_root}/{relative.as_posix()}", path))
    return entries


def bundle_entries() -> list[tuple[str, Path]]:
    """(name in the zip, source file) for everything the agent needs in Pyodide."""
    entries = _files_of(AGENT_SOURCE, "botpsy_agent")
    for name in VENDORED_PACKAGES:
        entries += _files_of(_package_dir(name), name)
    return sorted(entries)


def eval_bundle_entries() -> list[tuple[str, Path]]:
    from botpsy_eval.multi_turn.bundle import entries

    return sorted(bundle_entries() + entries(REPO_ROOT / "py"))


def bundle_bytes(entries: list[tuple[str, Path]] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in entries if entries is not None else bundle_entries():
            info = zipfile.ZipInfo(name, FIXED_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def build_agent_bundle(out_path: Path | str | None = None, entries: list[tuple[str, Path]] | None = None) -> Path:
    """Write the bundle (default static/build/agent-py.zip) and return its path."""
    out_path = Path(out_path) if out_path else DEFAULT_OUT
    data = bundle_bytes(entries)
    if out_path.is_file() and out_path.read_bytes() == data:
        return out_path
    out_path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_path.with_name(out_path.name + ".partial")
    partial.write_bytes(data)
    partial.replace(out_path)
    return out_path


def build_eval_bundle(out_path: Path | str | None = None) -> Path:
    """The agent worker's bundle for the multi-turn eval (default static/build/agent-eval-py.zip)."""
    return build_agent_bundle(out_path or EVAL_OUT, eval_bundle_entries())


def register(subparsers) -> None:
    parser = subparsers.add_parser("build-py", help="pack the agent's Python for Pyodide "
                                                    "(static/build/agent-py.zip)")
    parser.add_argument("--out", type=Path, default=None, help=f"output zip (default {DEFAULT_OUT})")
    parser.set_defaults(func=_run)


def _run(args) -> int:
    path = build_agent_bundle(args.out)
    with zipfile.ZipFile(path) as archive:
        count = len(archive.namelist())
    print(f"wrote {path} ({path.stat().st_size} bytes, {count} files)")
    return 0
