"""Choosing between models: the page lists every exported folder with its size and, for the
built-ins the bench measured, about how fast it answers; the model a person loaded is the one
the next visit opens. The demo exports the fast 0.5B first and adds the 1.5B only when asked."""

import json
import math
import shutil
import subprocess
import sys

import pytest

from botpsy_web import REPO_ROOT
from botpsy_web.app_page import load_model, model_option
from botpsy_web.demo import ADDABLE_MODELS, STAND_IN_DTYPES, ensure_added
from botpsy_web.model_speeds import DECODE_TOKENS_PER_SECOND, MEASURED_ON
from botpsy_web.serve import list_models

MEASURED_SOURCE = "qwen2.5-coder-0.5b"


def write_manifest(folder, source: str, dtypes=("q8",)):
    """A manifest-only folder: enough for the model list (no model needs to run)."""
    files = {f"onnx/model_{dtype}.onnx": {"size": 600_000, "sha256": "0" * 64} for dtype in dtypes}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format_version": 1, "architecture": "qwen2", "source": source, "files": files,
        "dtypes": {dtype: {"file": f"onnx/model_{dtype}.onnx", "files": [f"onnx/model_{dtype}.onnx"]} for dtype in dtypes},
        "recommended_dtype": {"wasm": "q8", "webgpu": "q8"},
    }))
    return folder


def test_the_list_carries_the_measured_speed_of_the_dtypes_a_folder_holds(tmp_path):
    write_manifest(tmp_path / "coder", MEASURED_SOURCE, ("q8", "q4"))
    write_manifest(tmp_path / "only-q4", MEASURED_SOURCE, ("q4",))
    write_manifest(tmp_path / "my-own-model", "/somewhere/else.gguf")
    listed = {model["name"]: model for model in list_models(tmp_path)}
    q8_speed = DECODE_TOKENS_PER_SECOND[MEASURED_SOURCE]["q8"]
    assert listed["coder"]["decode_tokens_per_second"] == {"q8": q8_speed}
    assert listed["only-q4"]["decode_tokens_per_second"] == {}  # q4 was not measured: no guess
    assert listed["my-own-model"]["decode_tokens_per_second"] == {}
    assert listed["coder"]["speed_measured_on"] == MEASURED_ON


def test_the_demo_adds_the_larger_model_only_when_asked_and_only_once(tmp_path):
    exported, printed = [], []

    def export(source, out_dir, **options):
        exported.append((source, out_dir, options["dtypes"]))
        write_manifest(out_dir, source)

    models = ensure_added(tmp_path, ["qwen2.5-coder-1.5b"], export=export, out=printed.append)
    assert exported == [("qwen2.5-coder-1.5b", tmp_path / "qwen2.5-coder-1.5b", STAND_IN_DTYPES)]
    assert [m["name"] for m in models] == ["qwen2.5-coder-1.5b"]
    assert ensure_added(tmp_path, ["qwen2.5-coder-1.5b"], export=export, out=printed.append) == models
    assert len(exported) == 1 and "Using qwen2.5-coder-1.5b" in printed[-1]
    assert ensure_added(tmp_path, [], export=export) == models  # the default run adds nothing
    with pytest.raises(ValueError, match="--add qwen3-72b: not a model the demo adds \\(qwen2.5-coder-1.5b\\)"):
        ensure_added(tmp_path, ["qwen3-72b"], export=export)


def test_demo_help_says_how_to_add_the_larger_model():
    result = subprocess.run([sys.executable, "-m", "botpsy_web.cli", "demo", "--help"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True)
    text = " ".join(result.stdout.split())
    assert "--add MODEL" in text and "qwen2.5-coder-1.5b" in text and list(ADDABLE_MODELS) == ["qwen2.5-coder-1.5b"]


@pytest.fixture
def listed_builtins(models_dir):
    """Manifest-only folders as `botpsy-web demo --add` leaves them: one the bench measured, one not."""
    folders = [write_manifest(models_dir / "choice-measured", MEASURED_SOURCE),
               write_manifest(models_dir / "choice-unmeasured", "/somewhere/else.gguf")]
    yield folders
    for folder in folders:
        shutil.rmtree(folder)


def test_each_model_shows_its_size_and_a_measured_speed(browser, open_guarded_page, app_server, listed_builtins):
    context, page, guard = open_guarded_page(browser, app_server)
    page.goto(f"{app_server}/")
    speed = math.floor(DECODE_TOKENS_PER_SECOND[MEASURED_SOURCE]["q8"] + 0.5)  # as the page's Math.round: halves up
    measured = page.locator(".model-option", has=model_option(page, "choice-measured"))
    assert measured.locator(".model-meta").inner_text() == f"qwen2 · 600 KB · q8 · about {speed} tokens/s on {MEASURED_ON}"
    unmeasured = page.locator(".model-option", has=model_option(page, "choice-unmeasured"))
    assert unmeasured.locator(".model-meta").inner_text() == "qwen2 · 600 KB · q8"

    model_option(page, "choice-measured").check()
    precisions = page.get_by_role("combobox", name="Precision").locator("option").all_inner_texts()
    assert precisions == ["Recommended", f"q8 · 600 KB · about {speed} tokens/s"]
    context.close()
    guard.assert_clean()


def test_the_model_a_person_chose_is_the_one_the_next_visit_opens(browser, open_guarded_page, app_server,
                                                                  exported_model, agent_bundle):
    exported_model("tiny-qwen3.5")
    second = exported_model("tiny-qwen3.5", ("q8",)).name  # sorts after the first: not the default choice
    context, page, guard = open_guarded_page(browser, app_server)
    page.set_default_timeout(120_000)
    page.goto(f"{app_server}/")
    assert page.locator(".model-option input").first.get_attribute("value") != model_option(page, second).get_attribute("value")
    load_model(page, second, backend="wasm")

    page.reload()
    page.locator("#load-progress[data-state='ready']").wait_for()  # reopened without a click
    assert model_option(page, second).is_checked()
    assert page.locator("#progress-text").inner_text().startswith(f"{second} is ready")
    context.close()
    guard.assert_clean()
