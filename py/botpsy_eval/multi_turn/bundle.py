"""What the agent worker needs, beyond the agent, to run a multi-turn case in Pyodide.

botpsy_web.build_py packs these beside the agent's own files into the eval's bundle
(static/build/agent-eval-py.zip; the app's agent-py.zip stays as it is). Everything is read
from the installed packages at build time, never copied into this repository:

- our side: botpsy_eval's schema conversion, the constraint digest, and multi_turn's environment, conversation and
  worker entry point;
- BFCL's environment classes that the multi-turn categories involve (their modules from
  CLASS_FILE_PATH_MAPPING, plus every bfcl_eval module they import, found by reading their
  imports), with the package __init__ files and the backend constants;
- mpmath (pure Python; math_api imports it and Pyodide's core lacks it), without its tests.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

OUR_MODULES = ("botpsy_eval/__init__.py", "botpsy_eval/schema.py", "botpsy_eval/constraint.py",
               "botpsy_eval/multi_turn/__init__.py", "botpsy_eval/multi_turn/environment.py",
               "botpsy_eval/multi_turn/conversation.py", "botpsy_eval/multi_turn/in_worker.py")
BACKEND_CONSTANTS = "bfcl_eval.constants.executable_backend_config"
PURE_PYTHON_DEPENDENCIES = ("mpmath",)
SKIPPED_DIRECTORIES = ("__pycache__", "tests")


def _module_file(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"module {name!r} is not installed: the multi-turn eval needs bfcl-eval "
                                "(pip install --no-deps bfcl-eval==2026.3.23) and mpmath")
    return Path(spec.origin)


def _package_inits(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def _bfcl_imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bfcl_eval"):
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names if alias.name.startswith("bfcl_eval")]
    return names


def multi_turn_class_names() -> list[str]:
    """Every class the multi-turn categories involve, read from their data files."""
    from .data import load_category
    from ..data import MULTI_TURN_CATEGORIES

    return sorted({name for category in MULTI_TURN_CATEGORIES for case in load_category(category)
                   for name in case.involved_classes})


def bfcl_modules() -> list[str]:
    """The environment modules, what they import from bfcl_eval, and the packages above them."""
    backend = importlib.import_module(BACKEND_CONSTANTS)
    pending = [backend.CLASS_FILE_PATH_MAPPING[name] for name in multi_turn_class_names()] + [BACKEND_CONSTANTS]
    found: set[str] = set()
    while pending:
        module = pending.pop()
        if module in found:
            continue
        found.add(module)
        pending += _bfcl_imports(_module_file(module)) + _package_inits(module)
    return sorted(found)


def entries(our_root: Path) -> list[tuple[str, Path]]:
    """(name in the zip, source file) for the eval's part of the worker's bundle. our_root: the
    folder holding botpsy_eval (py/)."""
    listed = [(name, our_root / name) for name in OUR_MODULES]
    for module in bfcl_modules():
        path = _module_file(module)
        listed.append(("/".join(module.split(".")) + ("/__init__.py" if path.name == "__init__.py" else ".py"), path))
    for package in PURE_PYTHON_DEPENDENCIES:
        package_dir = _module_file(package).parent
        for path in sorted(package_dir.rglob("*.py")):
            relative = path.relative_to(package_dir)
            if not any(part in SKIPPED_DIRECTORIES for part in relative.parts):
                listed.append((f"{package}/{relative.as_posix()}", path))
    return listed
