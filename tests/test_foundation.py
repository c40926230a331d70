"""The page's runtimes come from our own server, and Python in Pyodide can await JavaScript."""

import urllib.request


def test_page_loads_pyodide_and_onnxruntime_locally_and_python_awaits_js(guarded_page, server):
    guarded_page.goto(f"{server}/tests/pages/foundation.html")
    result = guarded_page.evaluate("() => window.foundationResult", None)
    assert "error" not in result, result.get("error")
    assert result["sumFromJs"] == 42
    assert result["pythonVersion"].startswith("3.")
    assert result["ortVersion"] == "1.30.0"
    assert result["ortHasInferenceSession"]
    assert result["crossOriginIsolated"] is True


def test_server_sends_isolation_headers_mime_types_and_ranges(server):
    request = urllib.request.Request(f"{server}/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm",
                                     headers={"Range": "bytes=0-3"})
    with urllib.request.urlopen(request) as response:
        assert response.status == 206
        assert response.headers["Content-Type"] == "application/wasm"
        assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
        assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        assert response.headers["Content-Range"].startswith("bytes 0-3/")
        assert response.read() == b"\0asm"
    with urllib.request.urlopen(f"{server}/node_modules/pyodide/pyodide.mjs") as response:
        assert response.headers["Content-Type"] == "text/javascript"


def test_server_refuses_paths_outside_the_models_folder(server):
    try:
        urllib.request.urlopen(f"{server}/models/..%2f..%2fetc/passwd")
    except urllib.error.HTTPError as error:
        assert error.code == 404
    else:
        raise AssertionError("a path outside the models folder was served")


def test_models_index_lists_exported_folders_but_not_hidden_ones(server, models_dir):
    import json
    manifest = json.dumps({
        "architecture": "llama", "files": {"onnx/model.onnx": {"size": 10, "sha256": "x"}},
        "dtypes": {"fp32": {"file": "onnx/model.onnx", "files": ["onnx/model.onnx"]}},
    })
    # a hidden folder is an export still being written (tests/conftest.py), never a model to pick
    for name in ("listed-model", ".listed-model.partial-1"):
        (models_dir / name).mkdir(exist_ok=True)
        (models_dir / name / "manifest.json").write_text(manifest)
    try:
        with urllib.request.urlopen(f"{server}/models/index.json") as response:
            models = {m["name"]: m for m in json.load(response)["models"]}
        assert models["listed-model"]["size_bytes"] == 10
        assert models["listed-model"]["dtype_sizes"] == {"fp32": 10}
        assert models["listed-model"]["url"] == "/models/listed-model/"
        assert not [name for name in models if name.startswith(".")]
    finally:
        import shutil
        for name in ("listed-model", ".listed-model.partial-1"):
            shutil.rmtree(models_dir / name)
