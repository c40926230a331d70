"""The service worker stores at install every file the app loads (web/sw.js's PRECACHE), so the
app starts offline even when some module was never fetched online (one only a tool call, the
sandbox or a backend loads). The list is written by hand; these tests follow the app's own
references, from index.html through every module, worker and frame it starts, and name what
the list misses."""

import os
import re
from pathlib import Path

from botpsy_web import REPO_ROOT
from botpsy_web.site.build import named_runtime_files, precache_paths

from ..house.test_no_import_circles import JS_IMPORT

# `new URL("./model-worker.js", import.meta.url)`: workers, frames and modules imported by URL.
URL_OF_FILE = re.compile(r"""new\s+URL\(\s*["']([^"'`]+)["']\s*,\s*import\.meta\.url\s*\)""")
PAGE_REFERENCE = re.compile(r"""<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)\"""")
# The sandbox frame loads no URL: the page fetches these (next to sandbox.html) and posts them.
FRAME_MODULES = re.compile(r"export const FRAME_MODULES = \[([^\]]*)\]")

# Referenced by the app, deliberately not in PRECACHE.
NOT_PRECACHED = {
    "web/sw.js": "the service worker itself: the browser keeps and updates its script",
    "sw.js": "the root worker `build-site` writes for hosts that send no headers; no file of the repository",
    "models/index.json": "the model list: kept network-first in its own cache (INDEX_CACHE), so a new export shows up",
    "web/fetch/frame.html": "the confirmed-fetch frame: never cached, its policy names the one approved origin",
}


def site_path(spec: str, referrer: Path) -> str:
    target = REPO_ROOT / spec.lstrip("/") if spec.startswith("/") else referrer.parent / spec
    return Path(os.path.normpath(target)).relative_to(REPO_ROOT).as_posix()


def references(path: Path) -> list[str]:
    """What one file of the app loads: files, not folders (a folder is a base for names the
    runtime checks below cover)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        specs = PAGE_REFERENCE.findall(text)
    else:
        specs = JS_IMPORT.findall(text) + URL_OF_FILE.findall(text)
        if frame_modules := FRAME_MODULES.search(text):
            specs += [f"./{name}" for name in re.findall(r'"([^"]+)"', frame_modules.group(1))]
    return [site_path(spec, path) for spec in specs if not spec.endswith("/")]


def app_files() -> set[str]:
    """Every file reached from index.html through the app's own modules and pages."""
    seen, todo = set(), ["index.html"]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if (path == "index.html" or path.startswith("web/") and path.endswith((".js", ".html"))) \
                and path not in NOT_PRECACHED:
            todo += references(REPO_ROOT / path)
    return seen - {"index.html"}


def precached() -> set[str]:
    return set(precache_paths(REPO_ROOT / "web" / "sw.js"))


def test_the_walk_reaches_the_workers_frames_and_the_modules_they_import():
    files = app_files()
    assert {"web/ui/app.js", "web/runtime/model-worker.js", "web/agent/agent-worker.js",
            "web/sandbox/sandbox-worker.js", "web/sandbox/sandbox.html", "web/sandbox/sandbox-frame.js",
            "web/agent/approvals.js", "web/runtime/storage/model-files.js", "web/runtime/decode/generation.js",
            "node_modules/markdown-it/dist/browser/markdown-it.esm.min.mjs", "static/css/app.css"} <= files


def test_every_file_the_app_loads_is_precached_or_left_out_for_a_reason():
    missing = sorted(app_files() - precached() - set(NOT_PRECACHED))
    assert not missing, f"add these to web/sw.js's PRECACHE (or to NOT_PRECACHED with a reason): {missing}"


def test_every_runtime_file_the_app_names_is_precached():
    # node_modules files reached through a base URL (Pyodide's, onnxruntime-web's) are named
    # literally in web/; the WebGPU build is not, and loads only where WebGPU is used.
    missing = sorted(named_runtime_files(REPO_ROOT) - precached())
    assert not missing, f"add these to web/sw.js's PRECACHE: {missing}"


def test_the_precache_list_names_only_files_that_exist():
    # The agent bundle is built (`botpsy-web build-py`), not committed.
    absent = sorted(path for path in precached() if not (REPO_ROOT / path).is_file() and path != "static/build/agent-py.zip")
    assert not absent, f"web/sw.js's PRECACHE names files that do not exist: {absent}"


def test_the_left_out_files_are_still_referenced():
    # A reason kept for a file the app no longer loads would hide nothing; drop it instead.
    files = app_files()
    assert sorted(set(NOT_PRECACHED) - files) == []
