"""The app's returning visitor: the warm-up before the first message stores the prompt's state
(system prompt + the default tools), the Storage panel shows it, and the next page load, even
offline, restores it instead of prefilling those tokens again, then answers."""

from botpsy_web.app_page import open_app_with_model, send, wait_until_offline_ready

MODEL = "tiny-qwen3.5"

LAST_WARM_UP = "() => window.botpsy.session.lastWarmUp ?? null"


def test_a_reload_offline_restores_the_stored_prompt_state_and_answers(
        browser, open_guarded_page, app_server, exported_model, agent_bundle):
    exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server)
    page.set_default_timeout(180_000)
    open_app_with_model(page, app_server, MODEL, backend="wasm")
    page.wait_for_function("() => window.botpsy.session.lastWarmUp?.promptState?.storedBytes > 0")
    first = page.evaluate(LAST_WARM_UP)
    assert first["promptState"]["restoredTokens"] == 0
    page.wait_for_function("() => /prepared prompt/.test(document.getElementById('storage-text').textContent)")
    wait_until_offline_ready(page)

    context.set_offline(True)
    page.reload()
    page.locator("#load-progress[data-state='ready']").wait_for()
    page.wait_for_function("() => window.botpsy.session.lastWarmUp?.promptState?.restoredTokens > 0")
    again = page.evaluate(LAST_WARM_UP)
    assert again["promptState"]["restoredTokens"] == first["promptTokens"]
    assert again["promptState"]["rejected"] is None

    page.get_by_label("Temperature").fill("0")
    send(page, "Are you there?")
    page.wait_for_function("() => document.querySelector('.message.assistant .answer')?.textContent.length > 0")
    context.close()
    guard.assert_clean()
