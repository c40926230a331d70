"""A person's first visit with a real model: pick it, watch it download and load, ask,
watch the answer stream in, stop it, start a new chat, export the transcript.

The model is `tiny-qwen3.5` (random weights, exported by botpsy_export): its words are
nonsense, but every part of the path (download, verify, compile, Pyodide agent, chat
template, generation in the worker, streaming to the page) is the real one."""

import json

import pytest

from botpsy_web.app_page import load_model


MODEL = "tiny-qwen3.5"


@pytest.fixture(scope="module")
def model_folder(exported_model):
    return exported_model(MODEL)


@pytest.fixture(scope="module")
def chat_page(browser, open_guarded_page, app_server, model_folder, agent_bundle, artifacts_dir):
    context, page, guard = open_guarded_page(browser, app_server, viewport={"width": 1280, "height": 860},
                                             accept_downloads=True)
    page.set_default_timeout(120_000)
    page.goto(f"{app_server}/")
    yield page
    page.screenshot(path=artifacts_dir / "product-chat-final.png")
    context.close()
    guard.assert_clean()


def test_loading_shows_download_progress_stages_and_the_backend(chat_page, artifacts_dir):
    page = chat_page
    page.evaluate("""() => {
        window.progressSeen = [];
        const text = document.getElementById('progress-text');
        new MutationObserver(() => window.progressSeen.push(text.textContent)).observe(text, {childList: true, characterData: true, subtree: true});
    }""")
    load_model(page, MODEL, dtype="q8", backend="wasm")
    seen = page.evaluate("window.progressSeen")
    downloads = [line for line in seen if line.startswith("Downloading")]
    assert downloads, seen
    assert any("%" in line and " of " in line and ("left" in line or "estimating" in line) for line in downloads), downloads
    assert page.locator(".stages li[data-state='done']").count() == 5
    badge = page.get_by_role("status").filter(has_text="WASM")
    assert "q8" in badge.inner_text() and "threads" in badge.inner_text()
    assert page.get_by_role("textbox", name="Message to BotPsy").is_enabled()
    page.locator(".tool-list summary").click()
    tool_names = page.locator("#tool-toggles input").evaluate_all("nodes => nodes.map(n => n.value)")
    assert {"calculator", "notes_create"} <= set(tool_names)
    page.screenshot(path=artifacts_dir / "product-chat-loaded.png")


def test_an_answer_streams_into_the_chat_and_can_be_stopped(chat_page, artifacts_dir):
    page = chat_page
    page.evaluate("""() => {
        window.answerLengths = [];
        new MutationObserver(() => {
            const answer = document.querySelector('.message.assistant:last-of-type .answer, .message.assistant:last-of-type .thinking-text');
            if (answer) window.answerLengths.push(answer.textContent.length);
        }).observe(document.getElementById('chat-log'), {childList: true, characterData: true, subtree: true});
    }""")
    # Greedy decoding, so the (random-weight) model says the same thing on every run.
    page.get_by_label("Temperature").fill("0")
    box = page.get_by_role("textbox", name="Message to BotPsy")
    box.fill("Hello! Who are you?")
    box.press("Enter")
    page.locator(".message.user").filter(has_text="Hello! Who are you?").wait_for()
    page.wait_for_function("() => (window.answerLengths || []).filter((n) => n > 0).length >= 3")
    page.get_by_role("button", name="Stop").click()
    page.locator(".message.assistant[aria-busy='false']").wait_for()
    lengths = [n for n in page.evaluate("window.answerLengths") if n > 0]
    assert len(set(lengths)) >= 3, "the answer should arrive in pieces, not at once"
    assert "Stopped" in page.locator(".turn-footer").last.inner_text()
    assert page.get_by_role("button", name="Send").is_visible()
    badge_text = page.locator("#backend-badge").inner_text()
    assert "tok/s" in badge_text and "– tok/s" not in badge_text
    page.screenshot(path=artifacts_dir / "product-chat-streamed.png")


def test_transcript_exports_as_markdown_and_json(chat_page, tmp_path):
    page = chat_page
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export Markdown").click()
    markdown = download_info.value.path().read_text()
    assert markdown.startswith("# BotPsy conversation")
    assert "## You\n\nHello! Who are you?" in markdown and "## Assistant" in markdown
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export JSON").click()
    exported = json.loads(download_info.value.path().read_text())
    assert exported["format"] == "botpsy-transcript" and exported["model"] == MODEL
    assert exported["messages"][0] == {**exported["messages"][0], "role": "user", "text": "Hello! Who are you?"}
    assert exported["conversation"] is not None


def test_new_chat_clears_the_conversation(chat_page):
    page = chat_page
    page.get_by_role("button", name="New chat").click()
    assert page.locator(".message").count() == 0
    assert page.get_by_role("heading", name="A private assistant, in this tab").is_visible()


def test_storage_shows_the_stored_model_and_remove_deletes_it(chat_page):
    page = chat_page
    storage = page.locator("#storage-text")
    page.wait_for_function("() => /Models stored: [1-9]/.test(document.getElementById('storage-text').textContent)")
    assert "(1)" in storage.inner_text() or "(2)" in storage.inner_text()
    page.get_by_role("button", name="Remove model from this device").click()
    page.get_by_text(f"{MODEL} was removed from this device.").wait_for()
    page.wait_for_function("() => document.getElementById('storage-text').textContent.includes('(0)')")
    assert page.get_by_role("textbox", name="Message to BotPsy").is_disabled()
    assert page.locator("#backend-badge").inner_text() == "No model loaded"
