"""Driving the app's page (index.html) from Playwright, as a person does: what the browser tests
(tests/product on the test server, tests/site on a built site) and the bench scripts (bench/site.py,
bench/fresh_demo.py) all do to it."""

from __future__ import annotations

import re

LAST_ANSWER_HAS_TEXT = "() => document.querySelector('.message.assistant:last-child .answer')?.textContent.length > 0"
LAST_TURN_OVER = "() => [...document.querySelectorAll('.message.assistant')].at(-1)?.getAttribute('aria-busy') === 'false'"


def model_option(page, name: str):
    """The model picker's radio for the folder `name` exactly (not `name-fp16...` beside it)."""
    return page.get_by_role("radio", name=re.compile(rf"^{re.escape(name)}(\s|$)"))


def load_model(page, name: str, *, backend: str | None = None, dtype: str | None = None) -> None:
    """Picks the model folder `name` (and the precision and backend when given; the picker's own
    choice otherwise), presses Load and waits until the model is ready."""
    model_option(page, name).check()
    if dtype:
        page.get_by_role("combobox", name="Precision").select_option(dtype)
    if backend:
        page.get_by_role("combobox", name="Backend").select_option(backend)
    page.get_by_role("button", name="Load model").click()
    page.locator("#load-progress[data-state='ready']").wait_for()


def open_app_with_model(page, base_url: str, name: str, **choices) -> None:
    """Opens the app at `base_url` and loads the model folder `name` (choices: see load_model)."""
    page.goto(f"{base_url}/")
    load_model(page, name, **choices)


def send(page, text: str) -> None:
    """Types `text` into the message box and sends it."""
    box = page.get_by_role("textbox", name="Message to BotPsy")
    box.fill(text)
    box.press("Enter")


def ask_and_stop(page, text: str = "Hello there") -> None:
    """Greedy decoding; sends `text`, waits for the first words of the answer, presses Stop and
    waits until the turn is over. Raises AssertionError naming the error the page showed, if any."""
    page.get_by_label("Temperature").fill("0")
    send(page, text)
    page.wait_for_function(LAST_ANSWER_HAS_TEXT)
    page.get_by_role("button", name="Stop").click()
    page.wait_for_function(LAST_TURN_OVER)
    errors = page.locator(".message.assistant .notice.error").all_inner_texts()
    if errors:
        raise AssertionError(f"the page showed an error: {errors}")


def wait_until_offline_ready(page) -> None:
    """The service worker controls the page and has finished storing what the page loaded before
    it did (web/sw.js, its "cache-urls" message): from here the page works offline."""
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    page.evaluate("""() => new Promise((resolve) => {
        navigator.serviceWorker.addEventListener('message', (event) => {
            if (event.data?.type === 'cached-urls') resolve();
        });
        const urls = [location.href, ...performance.getEntriesByType('resource').map((e) => e.name)];
        navigator.serviceWorker.controller.postMessage({type: 'cache-urls', urls});
    })""")
