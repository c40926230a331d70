"""An answer the model did not finish is marked on the page: cut at the length limit of one reply
(the runtime's stopReason max_tokens) or at the end of the model's context window (context_full),
the message shows a note saying so and what to do, beside the answer's text, and the exported
transcript says it too; likewise an answer the agent stopped because it kept repeating itself. An answer that ended by itself gets no note, and neither does one the
person stopped (its footer says "Stopped").

SCRIPTED model (tests/product/scripted-model-worker.js: it reports the stop reason the script
names, as the runtime reports its own), the real agent and page. The runtime's own stop reasons
are tested in tests/runtime (test_generation_control.py, test_context_window.py)."""

from botpsy_web.app_page import open_app_with_model, send


MODEL = "tiny-qwen3.5"


def finished_answer(page, index):
    """The index-th assistant message of the chat, once it has finished."""
    answer = page.locator("article.message.assistant").nth(index)
    page.locator("article.message.assistant[aria-busy='false']").nth(index).wait_for()
    return answer


def test_a_cut_off_answer_says_why_and_an_ordinary_one_does_not(
        browser, open_guarded_page, app_server, exported_model, agent_bundle, scripted_model, artifacts_dir):
    folder = exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server, viewport={"width": 1280, "height": 900},
                                             service_workers="block")
    scripted_model(context, [
        {"match": "Tell me a long story", "outputs": ["Once upon a time there was a"], "stopReason": "max_tokens"},
        {"match": "And then?", "outputs": ["The dragon"], "stopReason": "context_full"},
        {"match": "What is 2+2", "outputs": ["It is 4."]},
        {"match": "Say hello", "outputs": ["Hello! " + "Hello again. " * 200]},
    ], folder)
    page.set_default_timeout(120_000)
    open_app_with_model(page, app_server, MODEL)

    send(page, "Tell me a long story")
    answer = finished_answer(page, 0)
    note = answer.get_by_role("note", name="Why this answer ends here")
    assert note.inner_text() == ("Cut off: the answer reached the length limit of one reply. "
                                 "Say “continue” to get the rest.")
    assert answer.locator(".bubble [role='note']").count() == 0  # beside the text, not in it
    assert answer.get_by_text("Once upon a time there was a").is_visible()

    send(page, "And then?")
    answer = finished_answer(page, 1)
    assert answer.get_by_role("note", name="Why this answer ends here").inner_text() == (
        "Conversation full: the model cannot read any more of this conversation. Start a new chat to go on.")
    page.screenshot(path=artifacts_dir / "product-cut-off-notice.png")
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export Markdown").click()
    exported = download_info.value.path().read_text()
    assert ("> **Cut off: the answer reached the length limit of one reply. Say “continue” to get the rest.**"
            in exported)
    assert "> **Conversation full: the model cannot read any more of this conversation." in exported

    page.get_by_role("button", name="New chat").click()
    send(page, "What is 2+2?")
    ordinary = finished_answer(page, 0)
    assert ordinary.get_by_text("It is 4.").is_visible()
    assert ordinary.get_by_role("note").count() == 0

    # a model stuck repeating itself is stopped by the agent (py/botpsy_agent/repetition.py): the
    # answer keeps its words up to the first copy, and the note says why it ends there
    send(page, "Say hello")
    looping = finished_answer(page, 1)
    assert looping.get_by_role("note", name="Why this answer ends here").inner_text() == (
        "Stopped: the model kept writing the same thing over and over. Ask again, perhaps in other words.")
    assert looping.locator(".bubble").inner_text().strip() == "Hello! Hello again."
    context.close()
    guard.assert_clean()
