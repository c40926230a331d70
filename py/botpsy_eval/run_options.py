"""The checks every `botpsy-web eval` run makes of its options, single-turn and multi-turn alike:
the folder, its dtypes, the tool-call modes, the limits and the outputs file; then the run's
settings and its outputs file's name from them. Errors are sentences naming the option."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from .browser import DEFAULT_DTYPES
from .settings import TOOL_CALL_MODES, EvalSettings


@dataclass(frozen=True)
class CheckedOptions:
    folder: Path
    dtypes: list[str]


def check_run_options(args) -> tuple[CheckedOptions | None, str | None]:
    folder = args.folder.resolve()
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        return None, f"{folder} has no manifest.json: is it a folder written by `botpsy-web export`?"
    available = list(json.loads(manifest_path.read_text(encoding="utf-8")).get("dtypes", {}))
    dtypes = args.dtype if args.dtype is not None else [d for d in DEFAULT_DTYPES if d in available]
    missing = [d for d in dtypes if d not in available]
    if missing:
        return None, f"dtype {', '.join(map(repr, missing))} is not in {folder}; it has {', '.join(available)}"
    unknown_modes = [m for m in args.tool_calls if m not in TOOL_CALL_MODES]
    if unknown_modes or not args.tool_calls:
        return None, f"--tool-calls takes {' and/or '.join(TOOL_CALL_MODES)}, got {','.join(args.tool_calls) or 'nothing'}"
    if args.limit is not None and args.limit < 1:
        return None, f"--limit must be at least 1, got {args.limit}"
    if args.max_tokens < 1:
        return None, f"--max-tokens must be at least 1, got {args.max_tokens}"
    if args.resume and args.outputs is None:
        return None, "--resume goes on from an earlier run's file: name it with --outputs FILE"
    if not args.resume and args.outputs is not None and args.outputs.is_file() and args.outputs.stat().st_size:
        return None, (f"{args.outputs} already holds runs: add --resume to go on from them, "
                      "or name another --outputs file (it is never overwritten)")
    if not dtypes and not args.reference:
        return None, "nothing to run: no dtype and no --reference"
    return CheckedOptions(folder, dtypes), None


def eval_settings(args, checked: CheckedOptions, categories) -> EvalSettings:
    """The run's settings: the checked folder and dtypes, the given categories, the rest as given."""
    return EvalSettings(checked.folder, tuple(checked.dtypes), tuple(categories), args.backend, args.limit, args.seed,
                        tuple(args.tool_calls), args.reference, args.max_tokens, args.torch_threads)


def outputs_path(args, settings: EvalSettings, prefix: str) -> Path:
    """--outputs, or a new file in this folder named after the run's kind, the model and the time."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return args.outputs or Path(f"{prefix}-{settings.folder.name}-{stamp}.jsonl")
