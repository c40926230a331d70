"""Computing the prompt state shipped with a model folder, in headless Chromium.

The app's page (index.html) is opened on a fresh profile, the folder loaded on WASM, and its own
warm-up runs the default prompt and stores the state (web/runtime/state/prompt-state.js); the page
then packs that stored file (packStoredPromptState) and it is written beside the model with its
index entry. Nothing here renders the prompt or runs the model: the page does, as for a visitor.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from botpsy_web.prompt_state.key import (INDEX_NAME, STATES_DIRECTORY, PromptStateError, current_entry, default_prompt,
                                         file_sha256, read_manifest, runtime_sha256, state_file_name, tokens_sha256,
                                         wasm_dtype, write_index_entry)

# A 0.5B model's warm-up is ~25 s on 2 threads; a slow, loaded machine gets ten times that.
WARM_UP_TIMEOUT_MS = 600_000
CHUNK_BYTES = 8 * 2 ** 20

PACK_IN_PAGE = """
async (folderUrl) => (await import("/web/runtime/state/prompt-state.js")).packStoredPromptState(folderUrl)
"""
# One slice of the packed bytes as base64 (page.evaluate carries strings, not bytes).
SLICE_AS_BASE64 = """
(shipped, [start, end]) => {
  const bytes = shipped.packed.subarray(start, end);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}
"""


@dataclass(frozen=True)
class ShippedState:
    """What ship_prompt_state did for one folder."""
    folder: Path
    file: Path             # the packed state, inside the folder
    entry: dict            # its index entry (prompt-states.json)
    computed: bool         # False: the folder's state was current, nothing was computed
    seconds: float         # computing it (0 when current)

    def describe(self) -> str:
        entry = self.entry
        what = (f"{self.folder.name} (wasm {entry['identity']['dtype']}): {entry['tokenCount']} prompt tokens, "
                f"{entry['rawBytes'] / 1e6:.1f} MB of state -> {entry['size'] / 1e6:.1f} MB in {self.file.name} "
                "(byte planes + gzip, lossless)")
        return f"prompt state {what}, computed in {self.seconds:.0f} s" if self.computed else f"prompt state {what}: current"


def ship_prompt_state(folder: Path, *, dtype: str | None = None, force: bool = False, log=print) -> ShippedState:
    """Makes sure `folder` ships the state of the page's default prompt for WASM visits (the
    folder's WASM dtype unless `dtype`): computed now unless the one there is current (`force`:
    always). Writes prompt-states/wasm-<dtype>.bin and its entry in prompt-states.json."""
    folder = Path(folder).resolve()
    manifest = read_manifest(folder)
    dtype = wasm_dtype(manifest, folder, dtype)
    _check_files(folder, manifest, dtype)
    prompt = default_prompt(folder)
    entry = None if force else current_entry(folder, dtype, prompt)
    if entry:
        return ShippedState(folder, folder / entry["file"], entry, computed=False, seconds=0.0)

    log(f"Computing the prompt state of {folder.name} (wasm {dtype}) in headless Chromium…")
    started = time.perf_counter()
    packed, described = _outside_event_loops(_compute_in_page, folder, dtype)
    seconds = time.perf_counter() - started
    name = state_file_name(dtype)
    (folder / STATES_DIRECTORY).mkdir(exist_ok=True)
    partial = folder / f"{name}.partial"
    partial.write_bytes(packed)
    partial.replace(folder / name)
    page_tokens = described["tokensSha256"]
    if page_tokens != tokens_sha256(folder, prompt):
        log(f"warning: the page's default prompt for {folder.name} is not the one py/botpsy_agent renders here; "
            "the state is the page's, but it will be computed again on every build")
    entry = {
        "file": name,
        "size": len(packed),
        "sha256": file_sha256(folder / name),
        **described,
        "prompt": prompt,
        "runtimeSha256": runtime_sha256(),
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "computeSeconds": round(seconds, 1),
    }
    write_index_entry(folder, entry)
    return ShippedState(folder, folder / name, entry, computed=True, seconds=seconds)


def _outside_event_loops(function, *args):
    """function(*args), on a thread of its own when this one runs an asyncio loop (Playwright's
    sync API refuses to start inside one: a caller that already drives a browser, a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return function(*args)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prompt-state") as pool:
        return pool.submit(function, *args).result()


def _compute_in_page(folder: Path, dtype: str) -> tuple[bytes, dict]:
    """(packed state, its index fields) from the app's warm-up on WASM in headless Chromium."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    from botpsy_web.build_py import build_agent_bundle
    from botpsy_web.serve import serve_in_background
    from botpsy_web.verify_browser import CHROMIUM_ARGS, CHROMIUM_PATH

    build_agent_bundle()
    with tempfile.TemporaryDirectory(prefix="botpsy-prompt-state-") as scratch, _index_hidden(folder):
        httpd, base_url = serve_in_background(models_dir=folder.parent)
        try:
            with sync_playwright() as playwright:
                # A persistent profile: a non-persistent context may refuse to store large files.
                context = playwright.chromium.launch_persistent_context(
                    str(Path(scratch) / "profile"), executable_path=CHROMIUM_PATH, headless=True,
                    args=[arg for arg in CHROMIUM_ARGS if arg != "--enable-unsafe-webgpu"])
                try:
                    page = context.new_page()
                    page.set_default_timeout(WARM_UP_TIMEOUT_MS)
                    page.goto(f"{base_url}/")
                    _load_on_wasm(page, folder.name, dtype)
                    page.wait_for_function("() => window.botpsy.session.lastWarmUp?.promptState?.storedBytes > 0")
                    page.evaluate("() => window.botpsy.session.model.storageUsage()")  # the write has finished
                    shipped = page.evaluate_handle(PACK_IN_PAGE, f"{base_url}/models/{folder.name}/")
                    described = shipped.evaluate("(shipped) => shipped.entry")
                    size = shipped.evaluate("(shipped) => shipped.packed.length")
                    packed = b"".join(base64.b64decode(shipped.evaluate(SLICE_AS_BASE64, [start, start + CHUNK_BYTES]))
                                      for start in range(0, size, CHUNK_BYTES))
                except PlaywrightError as error:
                    raise PromptStateError(f"the page could not compute the prompt state of {folder.name}: "
                                           f"{str(error).splitlines()[0]}") from error
                finally:
                    context.close()
        finally:
            httpd.shutdown()
            httpd.server_close()
    if described["identity"].get("backend") != "wasm" or described["identity"].get("dtype") != dtype:
        raise PromptStateError(f"the page ran {folder.name} as {described['identity'].get('backend')} "
                               f"{described['identity'].get('dtype')}, not wasm {dtype}")
    return packed, described


def _load_on_wasm(page, name: str, dtype: str) -> None:
    """Loads the folder in the app on WASM (app_page.load_model's steps), failing at once with the
    page's own words when the load fails."""
    from botpsy_web.app_page import model_option

    model_option(page, name).check()
    page.get_by_role("combobox", name="Precision").select_option(dtype)
    page.get_by_role("combobox", name="Backend").select_option("wasm")
    page.get_by_role("button", name="Load model").click()
    page.wait_for_function("() => ['ready', 'error'].includes(document.getElementById('load-progress').dataset.state)")
    if page.locator("#load-progress").get_attribute("data-state") == "error":
        raise PromptStateError(f"the page could not load {name}: {page.locator('#progress-text').inner_text()}")


def _check_files(folder: Path, manifest: dict, dtype: str) -> None:
    wanted = [*manifest["dtypes"][dtype].get("files", []), "tokenizer.json", "tokenizer_config.json"]
    missing = [path for path in wanted if not (folder / path).is_file()]
    if missing:
        raise PromptStateError(f"{folder} is incomplete: {', '.join(missing[:4])} missing")


@contextlib.contextmanager
def _index_hidden(folder: Path):
    """The folder without its index of shipped states while the page computes one, so that it
    computes the prompt instead of restoring the state being replaced; the index comes back after."""
    index, hidden = folder / INDEX_NAME, folder / f".{INDEX_NAME}.hidden"
    if index.exists():
        index.replace(hidden)
    try:
        yield
    finally:
        if hidden.exists():
            hidden.replace(index)
