"""`botpsy-web build-site OUT`: BotPsy as a folder any static host can serve.

OUT/site/ is what to upload: the page, the widget, the service worker, the agent bundle, the
runtime files the app loads (not the rest of node_modules) and the chosen model folders, with
`_headers` at its root (Netlify, Cloudflare Pages). Beside it, OUT/nginx.conf and OUT/Caddyfile
send the same headers from those servers (host_config.py); every header comes from the
site's one table (headers.py), which `botpsy-web serve` sends too.

Which runtime files: every node_modules file the app's code names (an import, a URL), the
service worker's PRECACHE list (web/sw.js: what the app needs to work offline), and the WebGPU
build of onnxruntime-web, which only a WebGPU adapter loads.
They go to a folder named by their content (`vendor-<hash>/` instead of `node_modules/`, the
app's code says so after a textual rewrite of that one prefix), served `immutable`: a new
runtime is a new folder, so a browser never mixes an old file with a new one.

A host that sends no headers at all (GitHub Pages, a plain bucket): `sw.js` at the site's root (a
service worker may only control the folder it is served from unless the host says otherwise)
holds the headers of every route and loads web/sw.js, which adds them to what it serves.

The site may be served from an origin's root or from a folder of it (--base-url
https://example.org/botpsy/): the app addresses its files relative to itself, and only the host
configurations name the folder.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from botpsy_web import REPO_ROOT
from botpsy_web.site import host_config
from botpsy_web.prompt_state.key import INDEX_NAME, empty_index
from botpsy_web.site.built_site import QUERY_ORIGIN, BuiltSite, cache_control, file_headers  # noqa: F401 (re-exported)

RUNTIME_PREFIX = "node_modules/"
# Loaded only where WebGPU is used (web/runtime/model/ort-loader.js: the WebGPU bundle and its WASM).
WEBGPU_RUNTIME_FILES = (
    "node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs",
    "node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs",
    "node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm",
)
APP_FOLDERS = ("web", "static/css", "static/icons")
# In web/ but no part of the app: documentation and the runtime's test harness.
NOT_SHIPPED = re.compile(r"(\.md$|^web/runtime/harness\.html$)")
AGENT_BUNDLE = "static/build/agent-py.zip"
# Files of a model folder the app reads besides those its manifest lists.
MODEL_EXTRA_FILES = ("manifest.json",)
SITE_SERVICE_WORKER = "sw.js"
# What `--webmcp` writes into the page's head: web/webmcp/offer.js siteOffersTools reads it.
WEBMCP_OFFER_TAG = b'<meta name="botpsy-webmcp" content="offer">'
BUILD_RECORD = "build.json"


class SiteBuildError(ValueError):
    """A build that cannot be made as asked (a missing file, a bad option); the message says what to fix."""


@dataclass(frozen=True)
class SiteOptions:
    out: Path
    models: tuple[Path, ...] = ()
    # Where the site will be served (its origin; used by the host configurations), e.g. https://botpsy.example.org/
    base_url: str | None = None
    # Where the model folders will be served when not from the site itself, e.g. https://bucket.example.net/models/
    model_url: str | None = None
    # Offer the page's enabled tools to visitors' browser agents (WebMCP) unless a visitor turns it off
    offer_webmcp: bool = False
    # Compute each model's shipped prompt state (botpsy_web.prompt_state) into its folder and ship it
    prompt_states: bool = False


def site_origin(url: str, what: str) -> str:
    """The origin of an http(s) URL given on the command line; a clear error otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SiteBuildError(f"{what} must be an http(s) URL such as https://botpsy.example.org/, got {url!r}")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def check_base_url(url: str) -> str:
    """The site's address, an origin's root or a folder of it (https://example.org/botpsy/): the app
    addresses its files relative to where it is served. A folder gets its closing "/"."""
    origin = site_origin(url, "--base-url")
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise SiteBuildError(f"--base-url is a folder's address, without ?query or #fragment, got {url!r}")
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    if "//" in path or any(segment in (".", "..") for segment in path.split("/")) \
            or not re.fullmatch(r"[A-Za-z0-9._~/-]*", path):
        raise SiteBuildError(f"--base-url's path must be a plain folder such as /botpsy/, got {parts.path!r}")
    return origin + path


# --- what the app loads -------------------------------------------------------------

def precache_paths(service_worker: Path) -> list[str]:
    """The site paths in web/sw.js's PRECACHE list (what the app needs offline)."""
    source = service_worker.read_text(encoding="utf-8")
    match = re.search(r"const PRECACHE = \[(.*?)\]\.map", source, re.DOTALL)
    if not match:
        raise SiteBuildError(f"{service_worker} has no `const PRECACHE = [...]` list to read the runtime files from")
    body = re.sub(r"//[^\n]*", "", match.group(1))
    return [path for path in re.findall(r'"([^"]*)"', body) if path and path != "index.html"]


_NAMED_RUNTIME_FILE = re.compile(r"node_modules/[@\w./-]+\.(?:mjs|json|js|wasm|zip)\b")


def named_runtime_files(root: Path) -> set[str]:
    """node_modules files the app's JavaScript names literally (imports, URLs)."""
    return {name for path in (root / "web").rglob("*.js")
            for name in _NAMED_RUNTIME_FILE.findall(path.read_text(encoding="utf-8"))}


def app_and_runtime_files(root: Path = REPO_ROOT) -> tuple[list[str], list[str]]:
    """(app files, runtime files) as paths relative to the repository; missing ones are an error."""
    app = {"index.html", AGENT_BUNDLE}
    for folder in APP_FOLDERS:
        app.update(path.relative_to(root).as_posix() for path in (root / folder).rglob("*") if path.is_file())
    app = {path for path in app if not NOT_SHIPPED.search(path) and "__pycache__" not in path}
    runtime = set(WEBGPU_RUNTIME_FILES) | named_runtime_files(root)
    for path in precache_paths(root / "web" / "sw.js"):
        (runtime if path.startswith(RUNTIME_PREFIX) else app).add(path)
    missing = sorted(path for path in app | runtime if not (root / path).is_file())
    if missing:
        hint = ("run `npm ci --ignore-scripts`" if any(p.startswith(RUNTIME_PREFIX) for p in missing)
                else "run `botpsy-web build-py`" if AGENT_BUNDLE in missing else "check web/sw.js's PRECACHE list")
        raise SiteBuildError(f"files the app loads are missing from {root}: {', '.join(missing[:8])} ({hint})")
    return sorted(app), sorted(runtime)


def vendor_folder(root: Path, runtime: list[str]) -> str:
    """`vendor-<first 12 hex of a sha256 over the runtime files' names and bytes>`."""
    digest = hashlib.sha256()
    for path in runtime:
        digest.update(path.encode() + b"\0" + hashlib.sha256((root / path).read_bytes()).digest())
    return f"vendor-{digest.hexdigest()[:12]}"


def model_folders(paths: tuple[Path, ...]) -> list[Path]:
    """Each --models DIR: an exported folder (manifest.json), or a folder of them."""
    folders = []
    for path in paths:
        if (path / "manifest.json").is_file():
            folders.append(path)
            continue
        inside = sorted(p for p in path.iterdir() if (p / "manifest.json").is_file() and not p.name.startswith(".")) \
            if path.is_dir() else []
        if not inside:
            raise SiteBuildError(f"--models {path}: not an exported model folder (no manifest.json) "
                                 "nor a folder of them; make one with `botpsy-web export`")
        folders.extend(inside)
    names = [folder.name for folder in folders]
    if len(set(names)) != len(names):
        raise SiteBuildError(f"two model folders share a name: {sorted(n for n in names if names.count(n) > 1)}")
    return folders


def _shipped_prompt_state(folder: Path) -> list[str]:
    """Computes the folder's shipped prompt state unless current; its files, to copy with the model
    (none, with a notice, when it cannot be computed)."""
    from botpsy_web.prompt_state import ship_prompt_state
    from botpsy_web.prompt_state.key import PromptStateError

    try:
        shipped = ship_prompt_state(folder)
    except PromptStateError as error:  # the site works without it: a first visit prefills the prompt
        print(f"  notice: no prompt state shipped with {folder.name} ({error})")
        return []
    print(f"  {shipped.describe()}")
    return [INDEX_NAME, shipped.entry["file"]]


def model_files(folder: Path) -> list[str]:
    """The files of an exported folder the app may request: its manifest's list and the manifest."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except json.JSONDecodeError as error:
        raise SiteBuildError(f"{folder}/manifest.json is not valid JSON ({error})") from error
    files = sorted(set(manifest.get("files", {})) | set(MODEL_EXTRA_FILES))
    missing = [name for name in files if not (folder / name).is_file()]
    if missing:
        raise SiteBuildError(f"{folder} is incomplete: its manifest lists {', '.join(missing[:5])}, which are not there")
    return files


# --- writing ------------------------------------------------------------------------

def with_webmcp_offer(page: bytes) -> bytes:
    """index.html with the site owner's WebMCP offer turned on (the visitor's checkbox starts checked)."""
    charset = b'<meta charset="utf-8">'
    if page.count(charset) != 1:
        raise SiteBuildError("index.html has no single <meta charset=\"utf-8\"> to put --webmcp's tag after")
    return page.replace(charset, charset + b"\n  " + WEBMCP_OFFER_TAG, 1)


def _place(source: Path, target: Path):
    """A copy, never a hard link: onnx refuses to load external data that has more than one link, so
    linking a model's weights into the site would break the exported folder for every onnx tool."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _write(target: Path, data: bytes):
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _prepare_out(out: Path):
    """OUT must be new, empty, or an earlier build (replaced whole)."""
    if out.exists() and any(out.iterdir()) and not (out / BUILD_RECORD).is_file():
        raise SiteBuildError(f"{out} exists and is not an earlier build-site output: choose a new or empty folder")
    for name in ("site", "models", "nginx.conf", "Caddyfile", BUILD_RECORD):
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    out.mkdir(parents=True, exist_ok=True)


def build_site(options: SiteOptions) -> BuiltSite:
    from botpsy_web.build_py import build_agent_bundle
    from botpsy_web.serve import list_models

    base_url = check_base_url(options.base_url) if options.base_url else None
    model_origins = (site_origin(options.model_url, "--model-url"),) if options.model_url else ()
    if model_origins and base_url and model_origins[0] == site_origin(base_url, "--base-url"):
        model_origins = ()   # the site itself: nothing to add to connect-src
    folders = model_folders(tuple(Path(p) for p in options.models))
    build_agent_bundle()
    root = REPO_ROOT
    app, runtime = app_and_runtime_files(root)
    vendor = vendor_folder(root, runtime)

    out = Path(options.out)
    _prepare_out(out)
    site = out / "site"
    built = BuiltSite(out=out, site=site, vendor=vendor, model_origins=model_origins)

    for path in app:
        data = (root / path).read_bytes()
        if path == "index.html" and options.offer_webmcp:
            data = with_webmcp_offer(data)
        if path.endswith(".js"):
            data = data.replace(RUNTIME_PREFIX.encode(), f"{vendor}/".encode())
        elif RUNTIME_PREFIX.encode() in data and path.endswith(".html"):
            raise SiteBuildError(f"{path} names {RUNTIME_PREFIX} in HTML: the build rewrites that prefix in "
                                 "JavaScript only (an HTML file's inline blocks are allowed by hash)")
        _write(site / path, data)
        built.files[path] = len(data)
    for path in runtime:
        target = f"{vendor}/{path[len(RUNTIME_PREFIX):]}"
        _place(root / path, site / target)
        built.files[target] = (root / path).stat().st_size

    # Models: in the site, or (--model-url) in OUT/models/ for the owner to upload there.
    models_out = out / "models" if options.model_url else site / "models"
    for folder in folders:
        sizes = {}
        shipped = _shipped_prompt_state(folder) if options.prompt_states else []
        for name in model_files(folder) + shipped:
            _place(folder / name, models_out / folder.name / name)
            sizes[f"models/{folder.name}/{name}"] = (folder / name).stat().st_size
        if not shipped:  # the page asks for the index: an empty one, not a 404 in the console
            empty = (json.dumps(empty_index(), indent=1) + "\n").encode()
            _write(models_out / folder.name / INDEX_NAME, empty)
            sizes[f"models/{folder.name}/{INDEX_NAME}"] = len(empty)
        built.model_files[folder.name] = sizes
        if not options.model_url:
            built.files.update(sizes)
    index = list_models(models_out)
    # Relative to models/index.json (the page reads them so), wherever the site is served.
    prefix = (options.model_url if options.model_url.endswith("/") else options.model_url + "/") \
        if options.model_url else ""
    for entry in index:
        entry["url"] = f"{prefix}{entry['name']}/"
    index_bytes = json.dumps({"models": index}, indent=1).encode()
    _write(site / "models" / "index.json", index_bytes)
    built.files["models/index.json"] = len(index_bytes)

    built.files[SITE_SERVICE_WORKER] = 0    # its headers do not depend on its bytes, written next
    rules = host_config.header_rules(built)
    worker = host_config.service_worker_with_headers(rules).encode()
    _write(site / SITE_SERVICE_WORKER, worker)
    built.files[SITE_SERVICE_WORKER] = len(worker)
    headers_file = host_config.netlify_headers(rules, base_url)
    _write(site / "_headers", headers_file.encode())
    (out / "nginx.conf").write_text(host_config.nginx_server(rules, site, base_url))
    (out / "Caddyfile").write_text(host_config.caddyfile(rules, site, base_url))
    (out / BUILD_RECORD).write_text(json.dumps({
        "vendor": vendor, "base_url": base_url, "model_url": options.model_url, "model_origins": list(model_origins),
        "offer_webmcp": options.offer_webmcp,
        "app_bytes": built.app_bytes,
        "models": {name: sum(files.values()) for name, files in built.model_files.items()},
    }, indent=1))
    return built
