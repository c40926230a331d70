"""The demo page before a model runs: it lists the exported folders with their sizes,
names its controls for screen readers, and fits a phone screen."""

import json
import shutil

import pytest


@pytest.fixture
def listed_folder(models_dir):
    """A manifest-only folder: enough for the picker (no model needs to run)."""
    folder = models_dir / "picker-sample"
    folder.mkdir(exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format_version": 1, "architecture": "llama",
        "files": {"onnx/model.onnx": {"size": 2_500_000, "sha256": "0" * 64},
                  "onnx/model_quantized.onnx": {"size": 700_000, "sha256": "1" * 64}},
        "dtypes": {"fp32": {"file": "onnx/model.onnx", "files": ["onnx/model.onnx"]},
                   "q8": {"file": "onnx/model_quantized.onnx", "files": ["onnx/model_quantized.onnx"]}},
    }))
    yield folder
    shutil.rmtree(folder)


def open_page(browser, open_guarded_page, app_server, **context_args):
    context, page, guard = open_guarded_page(browser, app_server, **context_args)
    page.goto(f"{app_server}/")
    return context, page, guard


def test_picker_lists_exported_folders_with_sizes_and_precisions(browser, open_guarded_page, app_server,
                                                                 listed_folder, artifacts_dir):
    context, page, guard = open_page(browser, open_guarded_page, app_server, viewport={"width": 1280, "height": 800})
    option = page.get_by_role("radio", name="picker-sample")
    option.wait_for()
    option.check()  # other folders in the models dir (left by an interrupted run) may sort first
    assert "3.2 MB" in page.locator(".model-option", has=option).inner_text()
    precisions = page.get_by_role("combobox", name="Precision").locator("option").all_inner_texts()
    assert precisions == ["Recommended", "fp32 · 2.5 MB", "q8 · 700 KB"]
    assert page.get_by_role("button", name="Load model").is_enabled()
    assert page.get_by_role("textbox", name="Message to BotPsy").is_disabled()
    page.screenshot(path=artifacts_dir / "product-shell-desktop.png")
    context.close()
    guard.assert_clean()


def test_controls_have_accessible_names(browser, open_guarded_page, app_server, listed_folder):
    context, page, guard = open_page(browser, open_guarded_page, app_server)
    page.get_by_role("radio", name="picker-sample").wait_for()
    unnamed = page.evaluate("""() => [...document.querySelectorAll('button, input, select, textarea')]
        .filter((node) => !node.closest('[hidden]'))
        .filter((node) => !(node.labels?.length || node.getAttribute('aria-label') || node.getAttribute('aria-labelledby')
                            || node.textContent.trim()))
        .map((node) => node.outerHTML.slice(0, 80))""")
    assert unnamed == []
    for name in ("New chat", "Export Markdown", "Export JSON"):
        assert page.get_by_role("button", name=name).is_visible()
    assert page.get_by_role("log", name="Messages").is_visible()
    context.close()
    guard.assert_clean()


def test_phone_width_has_no_horizontal_overflow_and_the_panel_folds(browser, open_guarded_page, app_server,
                                                                    listed_folder, horizontal_overflow, artifacts_dir):
    context, page, guard = open_page(browser, open_guarded_page, app_server,
                                     viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page.locator(".model-option").first.wait_for(state="attached")
    assert horizontal_overflow(page) == []
    page.screenshot(path=artifacts_dir / "product-shell-phone.png")
    toggle = page.get_by_role("button", name="Show model and settings")
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.get_by_role("radio", name="picker-sample").is_visible()
    assert horizontal_overflow(page) == []
    page.screenshot(path=artifacts_dir / "product-shell-phone-panel.png")
    page.keyboard.press("Escape")  # the panel closes from the keyboard, focus back on its button
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.id") == "panel-toggle"
    context.close()
    guard.assert_clean()


def test_a_model_that_cannot_load_says_what_happened_and_what_to_do(browser, open_guarded_page, app_server,
                                                                    listed_folder, artifacts_dir):
    context, page, guard = open_page(browser, open_guarded_page, app_server)
    page.set_default_timeout(60_000)
    page.get_by_role("radio", name="picker-sample").check()
    page.get_by_role("combobox", name="Backend").select_option("wasm")
    page.get_by_role("button", name="Load model").click()
    alert = page.get_by_role("alert").filter(has_text="Could not load picker-sample")
    alert.wait_for()
    assert "manifest.json" in alert.inner_text()  # which file was wrong
    assert "Press Load to try again" in alert.inner_text() or "server" in alert.inner_text()
    assert page.locator("#backend-badge").inner_text() == "Model not loaded"
    assert page.get_by_role("button", name="Load model").is_enabled()
    page.screenshot(path=artifacts_dir / "product-load-error.png")
    context.close()
    guard.assert_clean()


def test_dark_mode_follows_the_system(browser, open_guarded_page, app_server, listed_folder, artifacts_dir):
    context, page, guard = open_page(browser, open_guarded_page, app_server, color_scheme="dark",
                                     viewport={"width": 1280, "height": 800})
    page.locator(".model-option").first.wait_for()
    red, green, blue = [int(x) for x in page.evaluate("getComputedStyle(document.body).backgroundColor")[4:-1].split(",")]
    assert max(red, green, blue) < 60, "a dark system theme gives a dark page"
    page.screenshot(path=artifacts_dir / "product-shell-dark.png")
    context.close()
    guard.assert_clean()
