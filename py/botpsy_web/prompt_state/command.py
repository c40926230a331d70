"""`botpsy-web prompt-state [FOLDER ...] [--dtype D] [--force]`."""

from __future__ import annotations

from pathlib import Path


def register(subparsers):
    from botpsy_web.serve import DEFAULT_MODELS_DIR

    parser = subparsers.add_parser(
        "prompt-state", help="compute the prompt state shipped with model folders (a first visit's fast start)",
        description="Computes, in headless Chromium on WASM, the state the page stores after its warm-up of the "
                    "default prompt (system prompt + default tools) and writes it beside each model "
                    "(prompt-states.json, prompt-states/wasm-<dtype>.bin): a first visit restores it instead of "
                    "prefilling. Skipped when the folder's state is current. `demo` and `build-site` run it.")
    parser.add_argument("folders", type=Path, nargs="*", metavar="FOLDER",
                        help=f"exported model folders, or folders of them (default: {DEFAULT_MODELS_DIR})")
    parser.add_argument("--dtype", help="the dtype to compute it for (default: the folder's WASM dtype)")
    parser.add_argument("--force", action="store_true", help="compute it even when the folder's state is current")
    parser.set_defaults(func=run)


def model_folders(paths) -> list[Path]:
    """Each path: an exported folder (manifest.json), or a folder of them."""
    folders = []
    for path in paths:
        if (path / "manifest.json").is_file():
            folders.append(path)
        elif path.is_dir():
            folders.extend(sorted(child for child in path.iterdir() if (child / "manifest.json").is_file()))
        else:
            raise FileNotFoundError(f"{path}: no such folder")
    return folders


def run(args) -> int:
    from botpsy_web.prompt_state.compute import ship_prompt_state
    from botpsy_web.prompt_state.key import PromptStateError
    from botpsy_web.serve import DEFAULT_MODELS_DIR, node_modules_missing

    if node_modules_missing():
        return 2
    try:
        folders = model_folders(args.folders or [DEFAULT_MODELS_DIR])
    except FileNotFoundError as error:
        print(f"error: {error}")
        return 2
    if not folders:
        print(f"error: no exported model folder in {', '.join(map(str, args.folders or [DEFAULT_MODELS_DIR]))}")
        return 2
    for folder in folders:
        try:
            print(ship_prompt_state(folder, dtype=args.dtype, force=args.force).describe())
        except PromptStateError as error:
            print(f"error: {error}")
            return 1
    return 0
