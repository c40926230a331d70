"""`botpsy-web build-site`: what goes into the folder, and the rules every host configuration is
written from (no browser, no model export: a small fake model folder stands in)."""

import json
import re

import pytest

from botpsy_web import REPO_ROOT
from botpsy_web.site.build import (WEBGPU_RUNTIME_FILES, SiteBuildError, SiteOptions, build_site, file_headers,
                                   named_runtime_files, precache_paths)
from botpsy_web.site.headers import IMMUTABLE, REVALIDATE, policy_for, response_headers
from botpsy_web.site.host_config import MAX_HEADER_RULES, header_rules


def fake_model(folder, name="fake-model"):
    """A folder shaped like an export (manifest + the files it lists) and one stray file."""
    model = folder / name
    (model / "onnx").mkdir(parents=True)
    (model / "onnx" / "model.onnx").write_bytes(b"\0" * 64)
    (model / "config.json").write_text("{}")
    (model / "stray-notes.txt").write_text("not listed in the manifest")
    (model / "manifest.json").write_text(json.dumps({
        "files": {"onnx/model.onnx": {"size": 64}, "config.json": {"size": 2}},
        "dtypes": {"fp32": {"files": ["onnx/model.onnx"]}}}))
    return model


@pytest.fixture(scope="module")
def site(tmp_path_factory, agent_bundle):
    models = tmp_path_factory.mktemp("models")
    return build_site(SiteOptions(out=tmp_path_factory.mktemp("out"), models=(fake_model(models),)))


def built_paths(built):
    return {path.relative_to(built.site).as_posix() for path in built.site.rglob("*") if path.is_file()}


def test_the_site_holds_the_app_its_runtime_files_and_the_models_manifest_files_only(site):
    paths = built_paths(site)
    assert {"index.html", "sw.js", "_headers", "web/widget.js", "web/sw.js", "web/ui/app.js",
            "static/build/agent-py.zip", "static/css/app.css", "models/index.json",
            "models/fake-model/manifest.json", "models/fake-model/onnx/model.onnx",
            "models/fake-model/config.json"} <= paths
    assert "models/fake-model/stray-notes.txt" not in paths
    assert not any(path.endswith(".md") or path.startswith(("node_modules/", "tests/", "static/examples/"))
                   for path in paths)
    assert "web/runtime/harness.html" not in paths
    # Of node_modules, exactly what the app's code names, what the service worker keeps for offline
    # use, and WebGPU's build.
    named = precache_paths(REPO_ROOT / "web" / "sw.js") + list(WEBGPU_RUNTIME_FILES) + list(named_runtime_files(REPO_ROOT))
    wanted = {path.split("/", 1)[1] for path in named if path.startswith("node_modules/")}
    vendored = {path.split("/", 1)[1] for path in paths if path.startswith(site.vendor + "/")}
    assert vendored == wanted
    assert re.fullmatch(r"vendor-[0-9a-f]{12}", site.vendor)
    assert json.loads((site.site / "models" / "index.json").read_text())["models"][0]["url"] == "fake-model/"


def test_a_folder_without_a_shipped_prompt_state_gets_an_empty_index_not_a_404(site):
    # The page always asks for models/<name>/prompt-states.json; a 404 would be an error line in
    # the visitor's console.
    index = json.loads((site.site / "models" / "fake-model" / "prompt-states.json").read_text())
    assert index == {"format": "botpsy-prompt-states", "version": 1, "states": []}
    assert "models/fake-model/prompt-states.json" in site.files


def test_the_models_files_are_copied_so_the_exported_folder_stays_loadable_by_onnx(tmp_path, agent_bundle):
    # onnx refuses external data with more than one hard link: linking would break the export.
    model = fake_model(tmp_path)
    built = build_site(SiteOptions(out=tmp_path / "out", models=(model,)))
    for name in ("onnx/model.onnx", "config.json"):
        assert (model / name).stat().st_nlink == 1
        assert (built.site / "models" / "fake-model" / name).read_bytes() == (model / name).read_bytes()


def test_the_app_code_addresses_the_runtime_by_its_content_named_folder(site):
    for path in site.site.joinpath("web").rglob("*.js"):
        assert "node_modules/" not in path.read_text(), f"{path} still names node_modules/"
    loader = (site.site / "web/runtime/model/ort-loader.js").read_text()
    assert f"/{site.vendor}/onnxruntime-web/dist/" in loader
    assert f'"{site.vendor}/pyodide/pyodide.asm.wasm"' in (site.site / "web/sw.js").read_text()


def test_every_file_is_under_exactly_one_rule_with_the_tables_headers(site):
    rules = header_rules(site)
    assert len(rules) <= MAX_HEADER_RULES
    for path in built_paths(site) - {"_headers"}:
        url_path = "/" + path
        matching = [rule for rule in rules if (url_path.startswith(rule.path) if rule.folder else url_path == rule.path)]
        assert len(matching) == 1, (path, [rule.path for rule in matching])
        assert matching[0].headers == file_headers(site, path)
    assert [rule.headers for rule in rules if rule.path == "/"] == [file_headers(site, "index.html")]


def test_the_built_site_sends_what_serve_sends_but_for_caching(site):
    """One table: for each app file, the headers serve sends for the same file in the repository."""
    for path in sorted(built_paths(site) - {"_headers", "sw.js"}):
        if path.startswith(("models/", site.vendor + "/")):
            source, url_path = None, "/" + path
        else:
            source, url_path = REPO_ROOT / path, "/" + path
        served = response_headers(policy_for(url_path, "origin=https%3A%2F%2Fexample.com", source))
        built = file_headers(site, path)
        cache = IMMUTABLE if path.startswith(site.vendor + "/") else REVALIDATE
        assert built == {**served, "Cache-Control": cache} or path == "web/fetch/frame.html", path
    frame = file_headers(site, "web/fetch/frame.html")["Content-Security-Policy"]
    assert frame == policy_for("/web/fetch/frame.html", "origin=https%3A%2F%2Fexample.com").replace(
        "https://example.com", "{query-origin}")


def test_the_headers_file_has_one_rule_per_path_and_no_header_twice(site):
    text = (site.site / "_headers").read_text()
    rules = re.findall(r"^(/\S*)\n((?:  .*\n)+)", text, re.MULTILINE)
    assert len(rules) == len(header_rules(site))
    for path, block in rules:
        names = [line.split(":", 1)[0].strip() for line in block.splitlines()]
        assert len(names) == len(set(names)), path
        assert "Cross-Origin-Embedder-Policy" in names and "Content-Security-Policy" in names


def test_the_root_service_worker_names_the_headers_and_loads_the_app_worker(site):
    worker = (site.site / "sw.js").read_text()
    table = json.loads(re.search(r"self\.BOTPSY_SITE_HEADERS = (\{.*?\});\n", worker, re.DOTALL).group(1))
    assert [rule[0] for rule in table["rules"]] == [rule.path for rule in header_rules(site)]
    assert worker.rstrip().endswith('importScripts("web/sw.js");')


def test_a_model_origin_joins_connect_src_only_when_named(tmp_path, agent_bundle):
    model = fake_model(tmp_path / "models")
    built = build_site(SiteOptions(out=tmp_path / "out", models=(model,), model_url="https://models.example.net/botpsy/"))
    app = file_headers(built, "index.html")["Content-Security-Policy"]
    assert "connect-src 'self' data: blob: https://models.example.net;" in app
    assert "models.example.net" in file_headers(built, "web/widget/worker-frame.html")["Content-Security-Policy"]
    assert "models.example.net" not in file_headers(built, "web/sandbox/sandbox.html")["Content-Security-Policy"]
    assert "models.example.net" not in policy_for("/index.html", "", REPO_ROOT / "index.html")   # serve: never
    # The folders are for the owner to upload there; the site lists them at that address.
    assert (tmp_path / "out" / "models" / "fake-model" / "onnx" / "model.onnx").is_file()
    assert not (built.site / "models" / "fake-model").exists()
    index = json.loads((built.site / "models" / "index.json").read_text())
    assert index["models"][0]["url"] == "https://models.example.net/botpsy/fake-model/"


def test_bad_options_say_what_is_wrong(tmp_path):
    with pytest.raises(SiteBuildError, match="without \\?query"):
        build_site(SiteOptions(out=tmp_path / "a", base_url="https://example.org/botpsy/?v=1"))
    for folder in ("/a/../b/", "/a//b/", "/bot psy/"):
        with pytest.raises(SiteBuildError, match="must be a plain folder such as /botpsy/"):
            build_site(SiteOptions(out=tmp_path / "a", base_url=f"https://example.org{folder}"))
    with pytest.raises(SiteBuildError, match="http\\(s\\) URL"):
        build_site(SiteOptions(out=tmp_path / "a", model_url="ftp://example.org/models/"))
    (tmp_path / "not-a-model").mkdir()
    with pytest.raises(SiteBuildError, match="not-a-model: not an exported model folder"):
        build_site(SiteOptions(out=tmp_path / "a", models=(tmp_path / "not-a-model",)))
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "thesis.tex").write_text("mine")
    with pytest.raises(SiteBuildError, match="not an earlier build-site output"):
        build_site(SiteOptions(out=tmp_path / "busy"))
    assert (tmp_path / "busy" / "thesis.tex").read_text() == "mine"


def test_the_command_reports_a_bad_option_and_the_build(tmp_path, agent_bundle, capsys):
    import argparse

    from botpsy_web.site import command

    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["build-site", str(tmp_path / "out"), "--base-url", "https://example.org/sub/#top"])
    assert args.func(args) == 2
    assert "error: --base-url is a folder's address, without ?query or #fragment" in capsys.readouterr().out
    model = fake_model(tmp_path / "models")
    args = parser.parse_args(["build-site", str(tmp_path / "out"), "--models", str(model.parent),
                              "--base-url", "https://botpsy.example.org/"])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "model fake-model:" in printed
    assert '<script type="module" src="https://botpsy.example.org/web/widget.js"></script>' in printed
    assert "server_name botpsy.example.org;" in (tmp_path / "out" / "nginx.conf").read_text()
    # In a folder (a GitHub Pages project site): the closing "/" is added, the widget's tag names the folder.
    args = parser.parse_args(["build-site", str(tmp_path / "out"), "--models", str(model.parent),
                              "--base-url", "https://someone.github.io/botpsy"])
    assert args.func(args) == 0
    assert ('<script type="module" src="https://someone.github.io/botpsy/web/widget.js"></script>'
            in capsys.readouterr().out)
    assert json.loads((tmp_path / "out" / "build.json").read_text())["base_url"] == "https://someone.github.io/botpsy/"
