// One tool call, shown as a card: name, status, arguments, result and duration.
import { el, icon, setChildren } from "./dom.js";
import { formatDuration, formatValue } from "./format.js";
import { ICONS } from "./icons.js";

const STATUS_LABELS = {
  forming: "Preparing",
  running: "Running",
  awaiting: "Waiting for your approval",
  approved: "Approved",
  denied: "Denied",
  done: "Done",
  error: "Failed",
};

export class ToolCard {
  /** record: the transcript part this card shows; it is updated in place. */
  constructor(record) {
    this.record = record;
    this.statusChip = el("span", { class: "tool-status", role: "status" });
    this.durationText = el("span", { class: "tool-duration" });
    // Provenance (py/botpsy_agent/provenance.py): what this call stored is marked as coming from
    // third-party content, so reading it back later is treated like reading that content.
    this.provenanceChip = el("span", { class: "tool-provenance", hidden: true });
    // Arguments the person's own words about when replaced (py/botpsy_agent/said_when.py).
    this.saidWhenNote = el("p", { class: "tool-said-when", hidden: true });
    this.argumentsBlock = el("pre", { class: "tool-arguments", tabindex: "0" });
    this.resultBlock = el("pre", { class: "tool-result", tabindex: "0" });
    this.resultLabel = el("div", { class: "tool-section-label" }, "Result");
    this.resultSection = el("div", { class: "tool-section", hidden: true }, this.resultLabel, this.resultBlock);
    this.element = el("section", { class: "tool-card", "aria-label": `Tool call: ${record.name}` },
      el("header", { class: "tool-header" },
        icon(ICONS.tool),
        el("span", { class: "tool-name" }, record.name),
        this.statusChip,
        // A read the agent made itself because the person's message named the file (py/botpsy_agent/named_files.py).
        el("span", { class: "tool-origin", hidden: !record.namedByPerson,
          title: "Your message named this file, so the assistant read it before answering." },
          "Read because you named it"),
        this.provenanceChip,
        this.durationText),
      el("div", { class: "tool-section" },
        el("div", { class: "tool-section-label" }, "Arguments"), this.argumentsBlock, this.saidWhenNote),
      this.resultSection);
    this.setArguments(record.arguments);
    this.setSaidWhen(record.saidWhen);
    this.setStatus(record.status || "running");
  }

  setArguments(args) {
    this.record.arguments = args;
    this.argumentsBlock.textContent = formatValue(args ?? {});
  }

  /** saidWhen: {argument: {written, used, said?}}, the agent's changes to what the model wrote. */
  setSaidWhen(saidWhen) {
    const changes = Object.entries(saidWhen ?? {});
    if (changes.length) this.record.saidWhen = saidWhen;
    this.saidWhenNote.hidden = changes.length === 0;
    this.saidWhenNote.textContent = changes.map(([name, change]) => (change.said
      ? `${name}: "${change.used}", from your words "${change.said}" (the model wrote "${change.written}")`
      : `${name}: "${change.used}", moved with it (the model wrote "${change.written}")`)).join("\n");
  }

  setStatus(status) {
    this.record.status = status;
    this.element.dataset.status = status;
    this.statusChip.textContent = STATUS_LABELS[status] || status;
  }

  /**
   * untrusted: the result came from a file, page or other third party (shown unwrapped, labelled);
   * untrustedSource: where from ("stored data that came from the tool files_read");
   * storedMarked: what this call stored is marked as coming from (e.g. "the tool files_read").
   */
  setResult({ result, error, durationMs, untrusted = false, untrustedSource = null, storedMarked = null }) {
    this.record.result = result;
    this.record.error = error || null;
    this.record.durationMs = durationMs;
    this.record.untrusted = untrusted;
    this.record.untrustedSource = untrustedSource;
    this.record.storedMarked = storedMarked;
    this.provenanceChip.hidden = !storedMarked;
    this.provenanceChip.textContent = storedMarked ? "Saved marked as third-party content" : "";
    this.provenanceChip.title = storedMarked
      ? `Written after reading ${storedMarked}: reading it later is treated like reading that content.` : "";
    if (this.record.status !== "denied") this.setStatus(error ? "error" : "done");
    const shown = error ? error : untrusted ? unwrapUntrusted(result) : result;
    setChildren(this.resultBlock, formatValue(shown ?? ""));
    this.resultLabel.textContent = !untrusted ? "Result"
      : untrustedSource?.startsWith("stored data") ? `Result · ${untrustedSource}, treated as data`
        : "Result · third-party content, treated as data";
    this.resultSection.hidden = false;
    if (Number.isFinite(durationMs)) this.durationText.textContent = formatDuration(durationMs);
  }
}

// The agent wraps third-party text in a datamarked block for the model (a header, a note,
// every line prefixed with "^"); a person reads the plain text.
const UNTRUSTED_BLOCK = /^<<untrusted[^\n]*>>\n[^\n]*\n([\s\S]*?)\n<<end of untrusted data[^\n]*>>\s*$/;

export function unwrapUntrusted(text) {
  if (typeof text !== "string") return text;
  const match = UNTRUSTED_BLOCK.exec(text);
  if (!match) return text;
  return match[1].split("\n").map((line) => line.replace(/^\^ ?/, "")).join("\n");
}
