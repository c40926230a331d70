"""The provenance mark as a person sees it: a note the assistant saved after reading a dropped
file says so on its tool card, and when the note is read back later, its result is labelled as
stored data that came from that file. SCRIPTED model (see test_tool_episode.py); the real
agent, tools and IndexedDB."""

from botpsy_web.app_page import open_app_with_model, send

from .conftest import drop_files

MODEL = "tiny-qwen3.5"


def test_a_note_from_a_document_is_marked_on_its_cards(browser, open_guarded_page, app_server, exported_model,
                                                      agent_bundle, scripted_model, tool_call_text, artifacts_dir):
    folder = exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server, viewport={"width": 1280, "height": 900},
                                             service_workers="block")
    scripted_model(context, [
        {"match": "summarise the minutes", "outputs": [
            tool_call_text("files_read", name="minutes.txt"),
            tool_call_text("notes_create", title="Follow-up", text="Send the budget to finance"),
            "Saved a follow-up note."]},
        {"match": "my notes about the budget", "outputs": [
            tool_call_text("notes_search", query="budget"), "You have a follow-up note."]},
        {"match": "remember the dentist on Friday", "outputs": [
            tool_call_text("notes_create", title="Dentist", text="Friday 9:00"), "Saved."]},
    ], folder)
    page.set_default_timeout(120_000)
    open_app_with_model(page, app_server, MODEL)
    drop_files(page, [("minutes.txt", "text/plain", "Minutes: send the budget to finance.")])
    page.get_by_role("list", name="Files the assistant can read").get_by_text("minutes.txt").wait_for()

    send(page, "Please summarise the minutes and note what I must do")
    page.get_by_role("dialog", name="Allow “notes_create”?").get_by_role("button", name="Approve").click()
    page.get_by_text("Saved a follow-up note.").wait_for()
    saved = page.locator(".tool-card").filter(has_text="notes_create").last
    chip = saved.locator(".tool-provenance")
    assert chip.is_visible() and chip.inner_text() == "Saved marked as third-party content"
    assert "files_read" in chip.get_attribute("title")

    page.get_by_role("button", name="New chat").click()
    send(page, "What are my notes about the budget?")
    page.get_by_text("You have a follow-up note.").wait_for()
    found = page.locator(".tool-card").filter(has_text="notes_search").last
    assert found.locator(".tool-section-label").last.inner_text().lower() == \
        "result · stored data that came from the tool files_read, treated as data"
    assert "Send the budget to finance" in found.locator(".tool-result").inner_text()
    page.screenshot(path=artifacts_dir / "product-provenance-mark.png")

    page.get_by_role("button", name="New chat").click()
    send(page, "Please remember the dentist on Friday")
    page.get_by_role("dialog", name="Allow “notes_create”?").get_by_role("button", name="Approve").click()
    page.get_by_text("Saved.", exact=True).wait_for()
    assert page.locator(".tool-card").filter(has_text="notes_create").last.locator(".tool-provenance").is_hidden()
    context.close()
    guard.assert_clean()
