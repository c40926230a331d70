"""`botpsy-web export --model owner/name` downloads from the Hugging Face Hub.

No Hub is reachable here, so a small fake one on 127.0.0.1 answers the requests that
huggingface_hub makes for our download (file list, revision info, HEAD + GET of each
file). The CLI runs in a subprocess with HF_ENDPOINT pointing at it: huggingface_hub reads
HF_ENDPOINT when it is imported, and the subprocess is exactly what a user runs.
"""

import hashlib
import json
import os
import pickle
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from botpsy_export.builtins import build_tiny_qwen

from .conftest import tiny_vision_language_model

COMMIT = "0123456789abcdef0123456789abcdef01234567"
RELEASE = "botpsy-test/BotPsy-tiny"
PICKLE_ONLY = "botpsy-test/pickled"
CLI = str(Path(sys.executable).with_name("botpsy-web"))


class FakeHub:
    """Serves model repos (repo id -> local folder) the way the Hub's HTTP API does."""

    def __init__(self, repos: dict):
        self.repos = {repo: Path(folder) for repo, folder in repos.items()}
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request seen
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                hub.answer(self, with_body=True)

            def do_HEAD(self):
                hub.answer(self, with_body=False)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def files_of(self, repo: str) -> dict[str, Path]:
        folder = self.repos[repo]
        return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}

    def fetched(self, repo: str) -> set[str]:
        """Repo files that were asked for (HEAD or GET)."""
        prefix = f"/{repo}/resolve/"
        return {path[len(prefix):].split("/", 1)[1] for _, path in self.requests if path.startswith(prefix)}

    def answer(self, request: BaseHTTPRequestHandler, with_body: bool):
        path = unquote(urlsplit(request.path).path)
        self.requests.append((request.command, path))
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            repo, action = "/".join(parts[2:4]), (parts[4:] or [None])[0]
            if repo not in self.repos:
                return self.send(request, 404, b'{"error": "Repository not found"}', with_body,
                                 {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"})
            if action in (None, "revision"):  # model info, at the default branch or a revision
                return self.send_json(request, self.revision_info(repo), with_body)
            if action == "tree":
                return self.send_json(request, self.tree(repo), with_body)
        if len(parts) >= 5 and parts[2] == "resolve":
            repo, name = "/".join(parts[:2]), "/".join(parts[4:])
            if repo not in self.repos:
                return self.send(request, 404, b"", with_body, {"X-Error-Code": "RepoNotFound"})
            file = self.files_of(repo).get(name)
            if file is None:
                return self.send(request, 404, b"", with_body,
                                 {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT})
            data = file.read_bytes()
            return self.send(request, 200, data, with_body,
                             {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha256(data).hexdigest()}"'})
        self.send(request, 404, b"", with_body, {})

    def revision_info(self, repo: str) -> dict:
        return {"id": repo, "sha": COMMIT, "private": False,
                "siblings": [{"rfilename": name} for name in self.files_of(repo)]}

    def tree(self, repo: str) -> list:
        entries = []
        for name, file in self.files_of(repo).items():
            data = file.read_bytes()
            entry = {"type": "file", "path": name, "size": len(data),
                     "oid": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()}
            if name.endswith(".safetensors"):
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            entries.append(entry)
        return entries

    @staticmethod
    def send_json(request, payload, with_body: bool):
        FakeHub.send(request, 200, json.dumps(payload).encode(), with_body, {"Content-Type": "application/json"})

    @staticmethod
    def send(request, status: int, body: bytes, with_body: bool, headers: dict):
        request.send_response(status)
        for key, value in headers.items():
            request.send_header(key, value)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        if with_body:
            request.wfile.write(body)


class UnpicklingCanary:
    """Pickles to a call that creates `marker`: the file appears only if someone unpickles it."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _release_layout_checkpoint(folder: Path, canary: Path):
    """tiny-qwen3.5 saved as BotPsy's release is: Qwen3_5ForConditionalGeneration, safetensors;
    plus a pickle next to it, as some repos keep both."""
    _, tokenizer = build_tiny_qwen()
    tiny_vision_language_model(seed=11).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "README.md").write_text("# BotPsy tiny (test)\n")
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(UnpicklingCanary(canary)))


def _pickle_only_checkpoint(folder: Path, canary: Path):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen3_5", "architectures": ["X"]}))
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(UnpicklingCanary(canary)))


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("fake-hub")
    _release_layout_checkpoint(root / "release", root / "UNPICKLED")
    _pickle_only_checkpoint(root / "pickled", root / "UNPICKLED")
    with FakeHub({RELEASE: root / "release", PICKLE_ONLY: root / "pickled"}) as server:
        server.canary = root / "UNPICKLED"
        yield server


def _export(args, endpoint: str, hf_home: Path, offline: bool = False):
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("HF_") and key.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(hf_home), HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", NO_PROXY="127.0.0.1,localhost")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([CLI, "export", "--quiet", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def _unused_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_hub_id_downloads_the_release_layout_and_exports_a_verified_folder(hub, tmp_path):
    out = tmp_path / "out"
    result = _export(["--model", RELEASE, "--out", str(out)], hub.url, tmp_path / "hf-home")

    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"] == RELEASE and manifest["name"] == "BotPsy-tiny"
    assert manifest["architecture"] == "qwen3_5"
    assert set(manifest["dtypes"]) == {"fp32", "q8", "q4"}
    assert manifest["verification"]["fp32"]["passed"] is True
    assert manifest["verification"]["fp32"]["greedy_match"] == 1.0
    assert all(manifest["verification"][name]["passed"] for name in ("q8", "q4"))
    for name, entry in manifest["files"].items():
        assert (out / name).stat().st_size == entry["size"]
    assert json.loads((out / "config.json").read_text())["model_type"] == "qwen3_5_text"  # the language model
    # What came over the wire: safetensors weights, config and tokenizer; never the pickle or the README.
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= hub.fetched(RELEASE)
    assert not {"pytorch_model.bin", "README.md"} & hub.fetched(RELEASE)
    assert not hub.canary.exists()
    assert "fp32" in result.stdout


def test_a_downloaded_model_exports_again_offline_from_the_cache(hub, tmp_path):
    hf_home = tmp_path / "hf-home"
    first = _export(["--model", RELEASE, "--out", str(tmp_path / "a"), "--dtype", "fp32", "--no-verify"],
                    hub.url, hf_home)
    assert first.returncode == 0, first.stderr

    again = _export(["--model", RELEASE, "--out", str(tmp_path / "b"), "--dtype", "fp32", "--no-verify"],
                    _unused_port_url(), hf_home, offline=True)

    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["source"] == RELEASE


def test_pickle_only_repo_is_refused_without_downloading_or_unpickling(hub, tmp_path):
    result = _export(["--model", PICKLE_ONLY, "--out", str(tmp_path / "out")], hub.url, tmp_path / "hf-home")

    assert result.returncode == 2
    error = result.stderr.strip()
    assert error.startswith("error: ") and "\n" not in error
    assert "only pickle-based weights (pytorch_model.bin)" in error and "refusing to unpickle" in error
    assert PICKLE_ONLY in error
    assert "pytorch_model.bin" not in hub.fetched(PICKLE_ONLY)
    assert not hub.canary.exists()


def test_unknown_repo_says_it_is_not_on_the_hub(hub, tmp_path):
    result = _export(["--model", "botpsy-test/no-such-model", "--out", str(tmp_path / "out")],
                     hub.url, tmp_path / "hf-home")

    assert result.returncode == 2
    error = result.stderr.strip()
    assert error.startswith("error: ") and "\n" not in error
    assert "no model 'botpsy-test/no-such-model' on the Hugging Face Hub" in error
    assert "pass a local folder or .gguf" in error
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_unreachable_hub_suggests_local_files(tmp_path):
    result = _export(["--model", RELEASE, "--out", str(tmp_path / "out")], _unused_port_url(),
                     tmp_path / "hf-home")

    assert result.returncode == 2
    error = result.stderr.strip()
    assert error.startswith("error: ") and "\n" not in error
    assert f"could not fetch {RELEASE!r} from the Hugging Face Hub" in error
    assert "pass a local folder or .gguf" in error
