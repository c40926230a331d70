"""Appending graphs against standard graphs on WASM, on the same weights: a folder exported
before appending graphs existed (no `appending_file`) still loads and runs the standard graph,
and the appending graph gives the same tokens and logits as that one (bit for bit), also when its KV
buffers grow past their capacity (64, 128, ...) and when a conversation's prefix is reused.
An appending graph that onnxruntime cannot load falls back to the standard graph."""

import hashlib
import json
import os
import shutil

import pytest

from botpsy_web.verify_browser import open_harness

FILLER = ("The lighthouse keeper climbed the stairs every evening, counted the ships on the horizon, "
          "wrote their names in a book and watched the weather change over the grey northern sea. ") * 4


def _link(source, target):
    os.symlink(os.path.abspath(source), target)


def edited_copy(folder, suffix, edit):
    """A copy of `folder` whose manifest `edit(manifest, copy)` changed. Its files are symlinks: no
    second copy of the weights, and (unlike hard links) the originals keep one link each, which
    onnx requires of external data files it loads."""
    copy = folder.parent / f"{folder.name}-{suffix}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy, copy_function=_link)
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest, copy)
    (copy / "manifest.json").unlink()  # a link to the original's: replaced, not written through
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return copy


def standard_only_copy(folder):
    """`folder` as exported before appending graphs: no appending_file, no appending graph files."""
    def drop_appending_graphs(manifest, copy):
        for spec in manifest["dtypes"].values():
            appending = spec.pop("appending_file")
            (copy / appending).unlink()
            manifest["files"].pop(appending)
    return edited_copy(folder, "standard-only", drop_appending_graphs)


def broken_appending_copy(folder):
    """`folder` with appending graphs that are not ONNX (their manifest size and sha256 match the bytes)."""
    def break_appending_graphs(manifest, copy):
        for spec in manifest["dtypes"].values():
            path = copy / spec["appending_file"]
            path.unlink()
            path.write_bytes(b"not an ONNX graph")
            manifest["files"][spec["appending_file"]] = {"size": path.stat().st_size,
                                                         "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return edited_copy(folder, "broken-appending", break_appending_graphs)


@pytest.fixture(scope="module", params=["tiny-qwen3.5", "smollm2-135m"])
def both_modes(request, runtime_page, server, exported_model, runtime_driver):
    """The folder loaded under key "appending" and its standard-only copy under key "standard", fp32 on WASM."""
    folder = exported_model(request.param)
    assert all(spec.get("appending_file") for spec in json.loads((folder / "manifest.json").read_text())["dtypes"].values())
    for key, served in [("appending", folder), ("standard", standard_only_copy(folder))]:
        info = runtime_driver.load(runtime_page, server, served, key=key, backend="wasm", dtype="fp32")
        assert (info["backend"], info["cacheMode"]) == ("wasm", key)
    return request.param


def run_in_both_modes(page, driver, label, prompt, **options):
    """{mode: result} of the same generate on both clients; logits kept as label-mode. One token
    per call in both (the standard graph cannot check guessed tokens), so the logits are comparable bit for bit."""
    options = {"stopOnEos": False, "draftTokens": 0, **options}
    return {mode: driver.generate_keeping_logits(page, prompt, f"{label}-{mode}", key=mode, **options)
            for mode in ("appending", "standard")}


def test_a_folder_without_appending_graphs_runs_the_standard_graph(both_modes, runtime_page, runtime_driver):
    result = runtime_driver.generate(runtime_page, "The capital of France is", key="standard", maxTokens=3)
    assert result["stats"]["cacheMode"] == "standard"
    assert len(result["tokens"]) == 3
    assert result["stats"]["draftedTokens"] == 0  # its logits are the last position's only: no guessing


def test_growing_past_the_capacity_gives_the_standard_graphs_tokens_and_logits(
        both_modes, runtime_page, runtime_driver):
    tokens = runtime_page.evaluate("(text) => window.clients.appending.tokenize(text)", FILLER)
    assert len(tokens) >= 120
    # 58 prompt tokens fill a buffer of 64; the 10 decode steps write past it.
    first = run_in_both_modes(runtime_page, runtime_driver, "first", tokens[:58], maxTokens=10)
    # The second prompt extends the first conversation to 120 tokens: the processed prefix is
    # reused, and its 12 decode steps write past 128.
    second_prompt = tokens[:58] + first["appending"]["tokens"] + tokens[58:110]
    second = run_in_both_modes(runtime_page, runtime_driver, "second", second_prompt, maxTokens=12)
    fresh = runtime_driver.generate(runtime_page, second_prompt, key="appending", maxTokens=12,
                                    stopOnEos=False, reusePrefix=False, draftTokens=0)

    for label, run in [("first", first), ("second", second)]:
        assert run["appending"]["tokens"] == run["standard"]["tokens"], label
        assert runtime_driver.max_logit_diff(runtime_page, f"{label}-appending", f"{label}-standard") == 0, label
        assert run["standard"]["stats"]["cacheMode"] == "standard"
    assert first["appending"]["stats"]["cacheCapacity"] == 128  # 67 positions processed
    assert second["appending"]["stats"]["reusedTokens"] >= 58
    assert second["appending"]["stats"]["cacheCapacity"] == 192  # 131 positions processed
    assert second["standard"]["stats"]["cacheCapacity"] == 131  # standard: exactly the processed ones
    assert fresh["tokens"] == second["appending"]["tokens"]


def test_an_appending_graph_that_cannot_be_loaded_falls_back_to_the_standard_graph(
        runtime_page, server, exported_model, runtime_driver):
    folder = broken_appending_copy(exported_model("tiny-qwen3.5"))
    info = runtime_driver.load(runtime_page, server, folder, key="broken", backend="wasm", dtype="fp32")
    assert (info["backend"], info["cacheMode"]) == ("wasm", "standard")
    result = runtime_driver.generate(runtime_page, "The capital of France is", key="broken", maxTokens=3, stopOnEos=False)
    assert len(result["tokens"]) == 3 and result["stats"]["cacheMode"] == "standard"


def test_a_wasm_load_stores_the_standard_graph_too_so_webgpu_later_loads_offline(
        browser, open_guarded_page, server, exported_model, runtime_driver):
    # A page of its own: the module's page has stored this module's other folders (smollm2's fp32
    # weights twice), and a private context's quota then refused these weights ("Quota exceeded").
    context, page, guard = open_guarded_page(browser)
    try:
        page.set_default_timeout(300_000)
        open_harness(page, server)
        _loads_offline_on_webgpu_after_a_wasm_load(page, server, exported_model, runtime_driver)
    finally:
        context.close()
    guard.assert_clean()


def _loads_offline_on_webgpu_after_a_wasm_load(page, server, exported_model, runtime_driver):
    folder = edited_copy(exported_model("tiny-qwen3.5"), "backend-switch", lambda manifest, copy: None)
    info = runtime_driver.load(page, server, folder, key="switch", backend="wasm", dtype="fp32")
    assert info["cacheMode"] == "appending"
    # Every file stored, or the offline load below cannot work; the report says which store refused what.
    assert info["storage"]["kept"], info["storage"]
    page.route(f"**/{folder.name}/**", lambda route: route.abort("internetdisconnected"))
    info = runtime_driver.load(page, server, folder, key="switch", backend="webgpu", dtype="fp32")
    assert (info["backend"], info["cacheMode"]) == ("webgpu", "standard")
    result = runtime_driver.generate(page, "The capital of France is", key="switch", maxTokens=3)
    assert len(result["tokens"]) == 3
