"""`botpsy-web demo`: exports a default model only when none is there, says clearly when it
falls back to the offline stand-in (the real tool-calling Qwen2.5-Coder-0.5B, only the dtype
the demo loads), builds the agent bundle and serves the page."""

import json
import os
import subprocess
import sys
import time
import urllib.request

from botpsy_web import REPO_ROOT
from botpsy_web.demo import (BOTPSY_DTYPES, BOTPSY_SOURCE, STAND_IN_DTYPES, STAND_IN_SOURCE, choose_default_source,
                             ensure_model, hub_reachable)


def write_manifest(folder, name="x"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format_version": 1, "name": name, "architecture": "llama",
        "files": {"onnx/model.onnx": {"size": 4, "sha256": "0" * 64}},
        "dtypes": {"fp32": {"file": "onnx/model.onnx", "files": ["onnx/model.onnx"]}},
    }))


def test_botpsy_is_the_default_when_the_hub_answers():
    assert choose_default_source(True) == (BOTPSY_SOURCE, BOTPSY_DTYPES, None)


def test_without_the_hub_it_exports_the_stand_in_and_says_so(tmp_path):
    printed, exported = [], []

    def export(source, out_dir, **options):
        exported.append((source, out_dir.name, options["dtypes"]))
        write_manifest(out_dir, source)

    models = ensure_model(tmp_path, reachable=False, export=export, out=printed.append)
    assert exported == [(STAND_IN_SOURCE, STAND_IN_SOURCE, STAND_IN_DTYPES)]
    assert STAND_IN_SOURCE == "qwen2.5-coder-0.5b" and STAND_IN_DTYPES == ("q8",)
    assert [m["name"] for m in models] == [STAND_IN_SOURCE]
    notice = " ".join(printed)
    assert "not reachable" in notice and "STAND-IN" in notice and BOTPSY_SOURCE in notice


def test_rerunning_reuses_an_exported_model(tmp_path):
    write_manifest(tmp_path / "already-here")
    printed = []

    def export(*args, **kwargs):
        raise AssertionError("nothing should be exported when a model is there")

    models = ensure_model(tmp_path, reachable=True, export=export, out=printed.append)
    assert [m["name"] for m in models] == ["already-here"]
    assert "already-here" in printed[0]


def test_hub_check_gives_up_quickly_on_an_unreachable_host():
    assert hub_reachable("http://127.0.0.1:9", timeout=1.0) is False


def test_demo_serves_the_page_with_offline_headers_and_prints_the_url(tmp_path):
    write_manifest(tmp_path / "served-model")
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "botpsy_web.cli", "demo", "--port", str(port), "--models", str(tmp_path)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            lines.append(line)
            if "open http://" in line or process.poll() is not None:
                break
        output = "".join(lines)
        assert f"http://127.0.0.1:{port}/" in output, output
        assert "served-model" in output
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/web/sw.js") as response:
            assert response.headers["Service-Worker-Allowed"] == "/"
            assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/build/agent-py.zip") as response:
            assert response.read(2) == b"PK"
        # A folder that ships no prompt state answers an empty index (a 404 is a console error).
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/models/served-model/prompt-states.json") as response:
            assert json.loads(response.read())["states"] == []
    finally:
        process.terminate()
        process.wait(timeout=10)


def _free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
