"""The model's context window (manifest `context_length`, web/runtime/decode/context-window.js):
a prompt that does not fit is refused before any work, naming its length and the window; a
generation that fills the window stops there with stop reason "context_full" (not past what the
model can read, and not out of memory); a bad value fails the load's check, not a later prompt."""

import json
import os
import shutil

import pytest

WINDOW = 48


@pytest.fixture(scope="module")
def narrow_folder(exported_model, models_dir):
    """tiny-qwen3.5's files under a manifest that says the model reads 48 tokens (a dot-folder:
    served, never listed in the picker)."""
    source = exported_model("tiny-qwen3.5")
    folder = models_dir / f".tiny-qwen3.5-context-{WINDOW}-{os.getpid()}"
    folder.mkdir(exist_ok=True)
    for entry in source.iterdir():
        if entry.name != "manifest.json" and not (folder / entry.name).exists():
            (folder / entry.name).symlink_to(entry)
    manifest = json.loads((source / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "context_length": WINDOW}))
    yield folder
    shutil.rmtree(folder)  # the links only, never what they point to


@pytest.fixture(scope="module")
def narrow_model(runtime_page, server, narrow_folder, runtime_driver):
    runtime_driver.load(runtime_page, server, narrow_folder, dtype="fp32")
    return runtime_page


def test_a_generation_that_fills_the_window_stops_at_its_end(narrow_model, runtime_driver):
    result = runtime_driver.generate(narrow_model, [100] * 30, maxTokens=40, stopOnEos=False)
    assert result["stats"]["stopReason"] == "context_full"
    assert result["stats"]["generatedTokens"] == WINDOW - 30 == len(result["tokens"])


def test_a_prompt_that_does_not_fit_is_refused_with_its_length(narrow_model, runtime_driver):
    with pytest.raises(Exception, match=rf"the prompt is 50 tokens and this model reads at most {WINDOW} "
                                        r"\(manifest context_length\)"):
        runtime_driver.generate(narrow_model, [100] * 50, maxTokens=4)
    after = runtime_driver.generate(narrow_model, [100] * 10, maxTokens=4, stopOnEos=False)  # the model still works
    assert after["stats"]["generatedTokens"] == 4 and after["stats"]["stopReason"] == "max_tokens"


CHECK = """
async (manifest) => {
  const window = await import("/web/runtime/decode/context-window.js");
  try { return window.contextLength(manifest); } catch (error) { return `${error.name}: ${error.message}`; }
}
"""


def test_the_window_comes_from_the_manifest(runtime_page):
    assert runtime_page.evaluate(CHECK, {"context_length": 32768}) == 32768
    assert runtime_page.evaluate(CHECK, {}) is None  # a folder exported before the field: no limit here
    for bad in (0, 1, 4.5, "4096"):
        message = runtime_page.evaluate(CHECK, {"context_length": bad})
        assert message.startswith("RangeError: manifest.context_length must be an integer >= 2"), message
