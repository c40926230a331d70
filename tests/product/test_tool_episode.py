"""A multi-step tool episode as a person sees it: tool calls appear as cards (name,
arguments, result, duration); a side-effecting call opens a confirmation dialog that can
approve with edited arguments or deny; the notes end up in the real IndexedDB store.

The model here is SCRIPTED (tests/product/scripted-model-worker.js): the real small
models cannot call tools reliably, so its outputs are replayed through the real worker
protocol, ModelClient, AgentHost, Pyodide agent, parser, tools and store."""

import json

import pytest
from playwright.sync_api import expect

from botpsy_web.app_page import open_app_with_model, send

from .conftest import drop_files

MODEL = "tiny-qwen3.5"  # its folder gives the real chat template and tool-call format
# Turned around by U+202E ("pay to moc.emca" reads as "pay to acme.com"), a zero-width space
# and an invisible Unicode tag letter: what a model obeying an attacker could write.
HIDDEN_TEXT = "Pay 90 EUR to \u202emoc.live\u202c acme\u200b.com\U000E0041"


@pytest.fixture(scope="module")
def episode_page(browser, open_guarded_page, app_server, exported_model, agent_bundle, scripted_model,
                 tool_call_text, artifacts_dir):
    exported_model(MODEL)
    context, page, guard = open_guarded_page(browser, app_server, viewport={"width": 1280, "height": 900},
                                             service_workers="block")
    scripted_model(context, [
        {"match": "remember to buy oat milk", "outputs": [
            tool_call_text("notes_create", title="Shopping", text="Buy oat milk"),
            tool_call_text("notes_list"),
            "Saved it as a note.",
        ]},
        {"match": "what is on my packing list", "outputs": [
            tool_call_text("files_read", name="packing.md"),
            "Your list has a tent and a headlamp.",
        ]},
        {"match": "packing tips", "outputs": [
            "Three tips:\n\n1. Pack **light**.\n2. Test the `stove` at home.\n\n```\nweight <= 10 kg\n```\n<b>not markup</b>",
        ]},
        {"match": "think it over", "outputs": [
            "The user wants a considered answer. Weighing both sides.</think>\n\nAfter thinking: yes.",
        ]},
        {"match": "save the invoice note", "outputs": [
            tool_call_text("notes_create", title="Invoice", text=HIDDEN_TEXT),
            "Saved the invoice note.",
        ]},
        {"match": "which notes do I have", "outputs": [
            tool_call_text("notes_list"),
            # a small model copying the agent's own line back instead of answering
            "Using the result above, answer my question in plain words.",
        ]},
        {"match": "25% of 350", "outputs": [
            ["25% of 350 is 75.", tool_call_text("calculator", expression="25% of 350")],
            "25% of 350 is 87.5.",
        ]},
        {"match": "water the plants", "outputs": [
            tool_call_text("todo_add", text="Water the plants", due="2020-01-01T10:00"),
            "Added.",
        ]},
        {"match": "remember the dentist", "outputs": [
            tool_call_text("notes_create", title="Dentist", text="Call the dentist on Friday"),
            "All right, I did not save that.",
        ]},
    ])
    page.set_default_timeout(120_000)
    open_app_with_model(page, app_server, MODEL)
    yield page
    context.close()
    guard.assert_clean()


def test_approving_with_edited_arguments_runs_the_edited_call(episode_page, tool_call_text, artifacts_dir):
    page = episode_page
    send(page, "Please remember to buy oat milk")
    dialog = page.get_by_role("dialog", name="Allow “notes_create”?")
    dialog.wait_for()
    arguments = dialog.get_by_label("Arguments (JSON, you can edit them)")
    assert json.loads(arguments.input_value()) == {"title": "Shopping", "text": "Buy oat milk"}
    page.screenshot(path=artifacts_dir / "product-confirm-dialog.png")
    arguments.fill("{not json")
    dialog.get_by_role("button", name="Approve").click()
    assert "not valid JSON" in dialog.get_by_role("alert").inner_text()
    arguments.fill(json.dumps({"title": "Groceries", "text": "Buy oat milk"}))
    dialog.get_by_role("button", name="Approve").click()
    page.get_by_text("Saved it as a note.").wait_for()

    cards = page.locator(".message.assistant").last.locator(".tool-card")
    assert cards.count() == 2
    create, listing = cards.nth(0), cards.nth(1)
    assert create.locator(".tool-name").inner_text() == "notes_create"
    assert json.loads(create.locator(".tool-arguments").inner_text())["title"] == "Groceries"
    assert create.get_attribute("data-status") == "done"
    assert listing.locator(".tool-name").inner_text() == "notes_list"
    assert "Groceries" in listing.locator(".tool-result").inner_text()
    for card in (create, listing):
        assert card.locator(".tool-duration").inner_text().endswith(("ms", "s"))
    # The turn's footer counts all three generations' tokens (the scripted model writes 4
    # characters a token), not only the answer's.
    outputs = [tool_call_text("notes_create", title="Shopping", text="Buy oat milk"), tool_call_text("notes_list"),
               "Saved it as a note."]
    tokens = sum(-(-len(output) // 4) for output in outputs)
    footer = page.locator(".message.assistant").last.locator(".turn-footer")
    assert footer.inner_text().startswith(f"{tokens} tokens · "), footer.inner_text()
    page.screenshot(path=artifacts_dir / "product-tool-cards.png")


def test_denying_a_call_leaves_the_notes_unchanged(episode_page, artifacts_dir):
    page = episode_page
    send(page, "Also remember the dentist")
    dialog = page.get_by_role("dialog", name="Allow “notes_create”?")
    dialog.wait_for()
    dialog.get_by_role("button", name="Deny").click()
    page.get_by_text("All right, I did not save that.").wait_for()
    card = page.locator(".message.assistant").last.locator(".tool-card")
    assert card.get_attribute("data-status") == "denied"
    assert "Denied" in card.locator(".tool-status").inner_text()
    notes = stored_values(page)
    assert "Groceries" in notes and "dentist" not in notes.lower()
    page.screenshot(path=artifacts_dir / "product-tool-denied.png")


def stored_values(page) -> str:
    """Every value in the agent's IndexedDB stores, as JSON text."""
    return page.evaluate("""async () => {
        const request = indexedDB.open('botpsy-agent');
        const db = await new Promise((resolve, reject) => { request.onsuccess = () => resolve(request.result); request.onerror = reject; });
        const values = [];
        for (const name of db.objectStoreNames) {
            const all = db.transaction(name).objectStore(name).getAll();
            values.push(...await new Promise((resolve) => { all.onsuccess = () => resolve(all.result); }));
        }
        return JSON.stringify(values);
    }""")


def test_escape_in_the_dialog_counts_as_deny(episode_page):
    page = episode_page
    send(page, "Also remember the dentist")
    dialog = page.get_by_role("dialog", name="Allow “notes_create”?")
    dialog.wait_for()
    page.keyboard.press("Escape")
    expect(page.get_by_text("All right, I did not save that.")).to_have_count(2)
    assert page.locator(".message.assistant").last.locator(".tool-card").get_attribute("data-status") == "denied"


def test_dropped_files_are_read_by_the_file_tools(episode_page):
    page = episode_page
    drop_files(page, [("packing.md", "text/markdown", "# Packing\n- tent\n- headlamp\n"),
                      ("photo.png", "image/png", bytes([137, 80, 78, 71]))])
    page.get_by_role("list", name="Files the assistant can read").get_by_text("packing.md").wait_for()
    assert "photo.png: only" in page.get_by_role("status").filter(has_text="Some files were not added").inner_text()
    send(page, "what is on my packing list?")
    page.get_by_text("Your list has a tent and a headlamp.").wait_for()
    card = page.locator(".tool-card").filter(has_text="files_read").last
    shown = card.locator(".tool-result").inner_text()
    assert "headlamp" in shown and "<<untrusted" not in shown  # shown to the person without the data marks
    assert "third-party" in card.locator(".tool-section-label").last.text_content()


def test_thinking_shows_in_a_collapsed_block(episode_page, artifacts_dir):
    page = episode_page
    page.get_by_label("Show its thinking").check()
    send(page, "Please think it over: is it worth it?")
    page.get_by_text("After thinking: yes.").wait_for()
    thinking = page.locator(".message.assistant").last.locator("details.thinking")
    assert thinking.get_attribute("open") is None
    assert thinking.locator("summary").inner_text().startswith("Thought for")
    thinking.locator("summary").click()
    assert "Weighing both sides." in thinking.locator(".thinking-text").inner_text()
    page.get_by_label("Show its thinking").uncheck()
    page.screenshot(path=artifacts_dir / "product-thinking.png")


def test_the_conversation_fits_a_phone_screen(episode_page, horizontal_overflow, artifacts_dir):
    page = episode_page
    page.set_viewport_size({"width": 375, "height": 740})
    assert page.locator(".tool-card").count() >= 3
    assert horizontal_overflow(page) == []
    page.locator(".tool-card").first.scroll_into_view_if_needed()
    page.screenshot(path=artifacts_dir / "product-phone-conversation.png")
    send(page, "Also remember the dentist")
    dialog = page.get_by_role("dialog", name="Allow “notes_create”?")
    dialog.wait_for()
    box = dialog.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375
    page.screenshot(path=artifacts_dir / "product-phone-dialog.png")
    dialog.get_by_role("button", name="Deny").click()
    expect(page.get_by_text("All right, I did not save that.")).to_have_count(3)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_tool_switches_change_what_the_model_sees(episode_page):
    page = episode_page
    page.locator(".tool-list summary").click()
    listed = page.evaluate("window.botpsy.session.tools()")
    by_default = {tool["name"] for tool in listed if tool["enabledByDefault"]}
    checked = set(page.locator("#tool-toggles input:checked").evaluate_all("nodes => nodes.map(n => n.value)"))
    assert checked == by_default and "fetch_url" not in checked  # the agent's default set, network off
    assert f"({len(by_default)} of {len(listed)} on)" in page.locator("#tool-count").inner_text()

    page.locator("#tool-toggles input[value='calculator']").uncheck()
    page.get_by_label("Allow web fetches").check()
    assert page.locator("#tool-toggles input[value='fetch_url']").is_checked()
    page.wait_for_function("""() => {
        const tools = Object.fromEntries(window.botpsy.session.tools().map((t) => [t.name, t.enabled]));
        return tools.calculator === false && tools.fetch_url === true && tools.notes_create === true;
    }""")
    # Back to how the other tests expect it.
    page.locator("#tool-toggles input[value='calculator']").check()
    page.get_by_label("Allow web fetches").uncheck()


def test_answers_show_lists_emphasis_and_code_without_running_markup(episode_page):
    page = episode_page
    send(page, "Any packing tips?")
    answer = page.locator(".message.assistant").last.locator(".answer")
    # The reply streams in; its last words come after the code block.
    expect(answer).to_contain_text("<b>not markup</b>")
    assert answer.locator("ol li").all_inner_texts() == ["Pack light.", "Test the stove at home."]
    assert answer.locator("strong").inner_text() == "light"
    assert answer.locator("li code").inner_text() == "stove"
    assert answer.locator("pre.code-block").inner_text() == "weight <= 10 kg"
    assert answer.locator("b").count() == 0


def test_hidden_characters_in_a_call_are_shown_as_escapes_and_approved_exactly(episode_page):
    page = episode_page
    send(page, "Please save the invoice note")
    dialog = page.get_by_role("dialog", name="Allow “notes_create”?")
    dialog.wait_for()
    shown = dialog.get_by_label("Arguments (JSON, you can edit them)").input_value()
    assert "\\u202e" in shown and "\\u200b" in shown and "\\udb40\\udc41" in shown
    assert not any(char in shown for char in ("\u202e", "\u202c", "\u200b", "\U000E0041"))
    assert json.loads(shown)["text"] == HIDDEN_TEXT  # unedited, the escapes are the same text
    warning = dialog.locator("#confirm-hidden").inner_text()
    assert all(name in warning for name in ("U+202E", "U+202C", "U+200B", "U+E0041")), warning
    dialog.get_by_role("button", name="Approve").click()
    page.get_by_text("Saved the invoice note.").wait_for()
    notes = [json.loads(entry["json"]) for entry in json.loads(stored_values(page)) if entry["collection"] == "notes"]
    assert [note["text"] for note in notes if note["title"] == "Invoice"] == [HIDDEN_TEXT]  # exactly as approved


def test_when_the_agent_answers_from_the_results_the_page_shows_that_answer(episode_page):
    """The model copied the agent's own line instead of answering: the words it streamed give way
    to the agent's final answer, the turn's results in words, as the final event says."""
    page = episode_page
    send(page, "Sorry, which notes do I have?")
    answer = page.locator(".message.assistant").last.locator(".answer")
    expect(answer).to_contain_text("notes_list")
    assert answer.count() == 1 and "Using the result above" not in answer.inner_text()
    assert answer.inner_text().startswith("notes_list")


def test_words_with_a_figure_nobody_gave_give_way_to_a_tools_answer(episode_page):
    """The model answered with its own arithmetic: the agent sent the words back for a call
    (py/botpsy_agent/worked_numbers.py), so the page withdraws them and shows the calculator's
    card and the answer from its result."""
    page = episode_page
    send(page, "What's 25% of 350?")
    message = page.locator(".message.assistant").last
    expect(message.locator(".answer").last).to_contain_text("87.5")
    expect(message.locator(".tool-card")).to_have_count(1)
    assert "is 75." not in message.inner_text()


def test_the_persons_words_about_when_are_what_the_dialog_and_the_card_show(episode_page):
    """The model wrote a moment the person did not say: the agent runs the call with the person's
    words (py/botpsy_agent/said_when.py), so the person approves those, and the card says why."""
    page = episode_page
    send(page, "Remind me to water the plants tomorrow at 9am")
    dialog = page.get_by_role("dialog", name="Allow “todo_add”?")
    dialog.wait_for()
    arguments = dialog.get_by_label("Arguments (JSON, you can edit them)")
    assert json.loads(arguments.input_value()) == {"text": "Water the plants", "due": "tomorrow at 9am"}
    dialog.get_by_role("button", name="Approve").click()
    page.get_by_text("Added.", exact=True).wait_for()
    card = page.locator(".message.assistant").last.locator(".tool-card")
    note = card.locator(".tool-said-when")
    expect(note).to_be_visible()
    assert 'from your words "tomorrow at 9am"' in note.inner_text() and "2020-01-01T10:00" in note.inner_text()
    assert "T09:00" in card.locator(".tool-result").inner_text()
