"""A person's first visit to the app with a model folder that ships its prompt state (`botpsy-web
prompt-state`): the warm-up restores it instead of prefilling the system prompt and the default
tools, the first message is answered, and a reload offline restores it again (the runtime and the
service worker keep it like the model's files)."""

import shutil

import pytest
from filelock import FileLock

from botpsy_web.app_page import open_app_with_model, send, wait_until_offline_ready
from botpsy_web.prompt_state import ship_prompt_state

MODEL = "tiny-qwen3.5"
SHIPPED = "tiny-qwen3.5-shipped"
LAST_WARM_UP = "() => window.botpsy.session.lastWarmUp ?? null"
ANSWERED = "() => document.querySelector('.message.assistant:last-child .answer')?.textContent.length > 0"


@pytest.fixture(scope="module")
def shipped(models_dir, exported_model):
    """SHIPPED: MODEL's folder copied, with its shipped state (as tests/runtime/test_shipped_prompt_state.py makes it)."""
    source = exported_model(MODEL)
    folder = models_dir / SHIPPED
    with FileLock(models_dir / f".{SHIPPED}.lock"):
        if not (folder / "manifest.json").is_file() or \
                (folder / "manifest.json").read_bytes() != (source / "manifest.json").read_bytes():
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(source, folder)
        return ship_prompt_state(folder, dtype="q8")


def answer_without_error(page, text):
    page.get_by_label("Temperature").fill("0")
    send(page, text)
    page.wait_for_function(ANSWERED)
    assert page.locator(".message.assistant .notice.error").all_inner_texts() == []


def test_a_first_visit_restores_the_shipped_state_and_a_reload_offline_does_too(
        shipped, browser, open_guarded_page, app_server, agent_bundle):
    context, page, guard = open_guarded_page(browser, app_server)
    page.set_default_timeout(180_000)
    open_app_with_model(page, app_server, SHIPPED, backend="wasm")
    page.wait_for_function("() => window.botpsy.session.lastWarmUp?.promptState?.restoredTokens > 0")
    first = page.evaluate(LAST_WARM_UP)
    assert first["promptState"]["source"] == "shipped"
    assert first["promptState"]["restoredTokens"] == first["promptTokens"] == shipped.entry["tokenCount"]
    answer_without_error(page, "What time is it?")
    wait_until_offline_ready(page)

    context.set_offline(True)
    page.reload()
    page.locator("#load-progress[data-state='ready']").wait_for()
    page.wait_for_function("() => window.botpsy.session.lastWarmUp?.promptState?.restoredTokens > 0")
    again = page.evaluate(LAST_WARM_UP)
    assert again["promptState"]["source"] == "shipped" and again["promptState"]["rejected"] is None
    assert again["promptState"]["restoredTokens"] == shipped.entry["tokenCount"]
    answer_without_error(page, "Are you there?")
    context.close()
    guard.assert_clean()
