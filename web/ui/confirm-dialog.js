// Asks the person before a tool with side effects runs: approve, deny, or edit its arguments.
import { el } from "./dom.js";
import { formatValue } from "./format.js";
import { escapeHiddenInJson, hiddenCharacters, showHidden } from "./hidden-characters.js";

export class ConfirmDialog {
  /** parent: where the <dialog> lives (document.body, or a widget's shadow root). */
  constructor(parent) {
    this.title = el("h2", { id: "confirm-title" });
    this.description = el("p", { class: "confirm-description", id: "confirm-description" });
    this.argumentsInput = el("textarea", {
      id: "confirm-arguments", class: "confirm-arguments", rows: "8", spellcheck: "false",
      "aria-describedby": "confirm-hidden confirm-arguments-error",
    });
    this.hiddenNote = el("p", { class: "field-warning", id: "confirm-hidden" });
    this.errorText = el("p", { class: "field-error", id: "confirm-arguments-error", role: "alert" });
    this.approveButton = el("button", { type: "submit", class: "button primary", value: "approve" }, "Approve");
    this.denyButton = el("button", { type: "button", class: "button", onclick: () => this.#settle(false) }, "Deny");
    this.form = el("form", { method: "dialog", onsubmit: (event) => this.#onSubmit(event) },
      this.title,
      this.description,
      el("label", { for: "confirm-arguments", class: "field-label" }, "Arguments (JSON, you can edit them)"),
      this.hiddenNote,
      this.argumentsInput,
      this.errorText,
      el("div", { class: "dialog-actions" }, this.denyButton, this.approveButton));
    this.dialog = el("dialog", {
      class: "confirm-dialog", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-description",
    }, this.form);
    // Escape closes a <dialog>: treat it as a denial, never as silent approval.
    this.dialog.addEventListener("cancel", (event) => { event.preventDefault(); this.#settle(false); });
    parent.append(this.dialog);
    this.pending = null;
  }

  /** request: {name, arguments, description?}. Resolves to {approved, arguments}. */
  ask(request) {
    if (this.pending) this.#settle(false);
    this.request = request;
    this.title.textContent = `Allow “${request.name}”?`;
    const description = request.description
      || "This tool changes something outside the chat. Check the arguments before it runs.";
    const shown = formatValue(request.arguments ?? {});
    // Characters that show nothing or turn text around are shown as escapes (hidden-characters.js);
    // unedited, the escaped JSON parses back to exactly the arguments asked for.
    this.description.textContent = showHidden(description);
    this.argumentsInput.value = escapeHiddenInJson(shown);
    const hidden = hiddenCharacters(shown + description);
    this.hiddenNote.textContent = hidden.length
      ? `This call holds characters that are invisible or change the direction of text (${hidden.join(", ")}); `
        + "they are shown as escapes. Approve only if you expected them."
      : "";
    this.errorText.textContent = "";
    this.dialog.showModal();
    this.approveButton.focus();
    return new Promise((resolve) => { this.pending = resolve; });
  }

  #onSubmit(event) {
    event.preventDefault();
    let args;
    try {
      args = JSON.parse(this.argumentsInput.value || "{}");
    } catch (error) {
      this.errorText.textContent = `These arguments are not valid JSON (${error.message}). Fix them or deny the call.`;
      this.argumentsInput.focus();
      return;
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      this.errorText.textContent = "The arguments must be a JSON object, like {\"title\": \"…\"}.";
      return;
    }
    this.#settle(true, args);
  }

  #settle(approved, args) {
    const resolve = this.pending;
    this.pending = null;
    if (this.dialog.open) this.dialog.close();
    if (resolve) resolve({ approved, arguments: approved ? args : this.request?.arguments });
  }
}
