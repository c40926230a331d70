// The conversation as a person sees it, and the transcript record of what was shown.
import { el, icon } from "./dom.js";
import { formatDuration, formatRate } from "./format.js";
import { ICONS } from "./icons.js";
import { stopNotice } from "./stop-notice.js";
import { MarkdownView } from "./streaming-markdown.js";
import { ToolCard } from "./tool-card.js";

export class ChatView {
  /** log: an element with role="log"; emptyState: shown while there are no messages. */
  constructor(log, { emptyState = null } = {}) {
    this.log = log;
    this.emptyState = emptyState;
    this.transcript = [];
    this.clear();
  }

  clear() {
    this.transcript = [];
    this.log.replaceChildren();
    if (this.emptyState) this.log.append(this.emptyState);
  }

  addUserMessage(text, { files = [] } = {}) {
    this.#hideEmptyState();
    const record = { role: "user", text, files: files.map((f) => f.name), time: new Date().toISOString() };
    this.transcript.push(record);
    const attachments = files.length
      ? el("ul", { class: "attachments", "aria-label": "Attached files" },
          files.map((f) => el("li", {}, icon(ICONS.file), f.name)))
      : null;
    this.#append(el("article", { class: "message user", "aria-label": "You said" },
      el("div", { class: "bubble" }, text), attachments));
  }

  startAssistantTurn() {
    this.#hideEmptyState();
    const record = { role: "assistant", parts: [], time: new Date().toISOString(), stats: null };
    this.transcript.push(record);
    const turn = new AssistantTurn(record, (node) => this.#append(node));
    return turn;
  }

  /**
   * A tool call an outside agent (the browser's own assistant, through WebMCP) asked for: not part
   * of the conversation, so it stands alone, saying who asked. Returns its ToolCard.
   */
  addOutsideToolCall({ id, name, arguments: args }) {
    this.#hideEmptyState();
    const part = { type: "tool", id: id ?? null, name, arguments: args ?? {}, status: "running", result: null };
    this.transcript.push({ role: "outside_agent", parts: [part], time: new Date().toISOString() });
    const card = new ToolCard(part);
    this.#append(el("article", { class: "message outside-call", "aria-label": "An outside agent asked" },
      el("p", { class: "outside-call-note" }, "An outside assistant (your browser's agent) asked to use this tool."),
      card.element));
    return card;
  }

  /** A line that is not part of the conversation: errors, notices. */
  addNotice(message, { kind = "info", hint = "" } = {}) {
    this.#hideEmptyState();
    this.#append(el("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" },
      el("strong", {}, message), hint ? el("span", {}, ` ${hint}`) : null));
  }

  #append(node) {
    const nearBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 80;
    this.log.append(node);
    if (nearBottom) this.log.scrollTop = this.log.scrollHeight;
  }

  #hideEmptyState() {
    if (this.emptyState && this.emptyState.isConnected) this.emptyState.remove();
  }
}

/** One assistant reply: text, thinking and tool calls in the order they came. */
export class AssistantTurn {
  constructor(record, appendToLog) {
    this.record = record;
    this.body = el("div", { class: "turn-body" });
    this.footer = el("footer", { class: "turn-footer" });
    this.element = el("article", { class: "message assistant", "aria-label": "Assistant replied", "aria-busy": "true" },
      this.body, this.footer);
    this.cards = new Map();
    this.textNodes = new Map(); // each text part of the record -> its element
    this.current = null; // the text or thinking block being streamed into
    // Until the first words arrive (prefill can take a while on a CPU), say what is happening.
    this.waiting = el("p", { class: "turn-waiting" }, "Reading the conversation…");
    this.body.append(this.waiting);
    this.waitingTimer = setTimeout(() => {
      this.waiting.textContent = "Reading the conversation… the first reply on this device can take a minute.";
    }, 8000);
    appendToLog(this.element);
    this.scroll = () => {
      const log = this.element.parentElement;
      if (log && log.scrollHeight - log.scrollTop - log.clientHeight < 160) log.scrollTop = log.scrollHeight;
    };
  }

  appendText(delta) {
    if (!delta) return;
    const block = this.#block("text", () => {
      const node = el("div", { class: "bubble answer" });
      return { node, target: node, markdown: new MarkdownView(node) };
    });
    block.part.text += delta;
    // Models often open with blank lines (after a closed think block): don't show them.
    block.markdown.update(block.part.text.replace(/^\s+/, ""));
    this.scroll();
  }

  appendThinking(delta) {
    if (!delta) return;
    const block = this.#block("thinking", () => {
      const target = el("div", { class: "thinking-text" });
      const summary = el("summary", {}, "Thinking…");
      const node = el("details", { class: "thinking" }, summary, target);
      return { node, target, summary, started: performance.now() };
    });
    block.part.text += delta;
    block.target.textContent = block.part.text;
    this.scroll();
  }

  /** A call still being written by the model: a card with its name, arguments to come. */
  showFormingCall(index, name) {
    if (this.forming?.has(index)) return;
    this.#stopWaiting();
    this.#closeThinking();
    this.#settleText();
    this.current = null;
    this.forming ??= new Map();
    const record = { type: "tool", id: null, name, arguments: {}, status: "forming", result: null };
    this.record.parts.push(record);
    const card = new ToolCard(record);
    this.forming.set(index, card);
    this.body.append(card.element);
    this.scroll();
  }

  /**
   * namedByPerson: the agent made this call itself, reading a file the person's message named;
   * saidWhen: arguments the person's words about when replaced (py/botpsy_agent/said_when.py).
   */
  addToolCall({ id, name, arguments: args, index, namedByPerson = false, saidWhen = null }) {
    this.#stopWaiting();
    // The complete call replaces the card shown while it formed (same index, else same name).
    const formingEntry = [...(this.forming ?? [])].find(([i, c]) => i === index && c.record.name === name)
      || [...(this.forming ?? [])].find(([, c]) => c.record.name === name);
    const forming = formingEntry?.[1];
    if (forming) {
      this.forming.delete(formingEntry[0]);
      forming.record.id = id ?? null;
      forming.setArguments(args ?? {});
      forming.setSaidWhen(saidWhen);
      forming.setStatus("running");
      this.cards.set(id ?? `${name}#${this.cards.size}`, forming);
      return forming;
    }
    this.#closeThinking();
    this.#settleText();
    this.current = null;
    const record = { type: "tool", id: id ?? null, name, arguments: args ?? {}, status: "running", result: null,
      ...(namedByPerson ? { namedByPerson: true } : {}), ...(saidWhen ? { saidWhen } : {}) };
    this.record.parts.push(record);
    const card = new ToolCard(record);
    this.cards.set(id ?? `${name}#${this.cards.size}`, card);
    this.body.append(card.element);
    this.scroll();
    return card;
  }

  /** The card for a call id; without an id, the latest unfinished card with that name. */
  findCard(id, name) {
    if (id != null && this.cards.has(id)) return this.cards.get(id);
    const candidates = [...this.cards.values()].reverse();
    return candidates.find((c) => c.record.name === name && c.record.result === null)
      || candidates.find((c) => c.record.name === name) || null;
  }

  showError(message, hint = "") {
    this.#stopWaiting();
    this.#closeThinking();
    this.#settleText();
    this.record.parts.push({ type: "error", text: message });
    this.body.append(el("div", { class: "notice error", role: "alert" },
      el("strong", {}, message), hint ? el("span", {}, ` ${hint}`) : null));
    this.scroll();
  }

  /**
   * The answer was written after the model read untrusted content (the final event's
   * untrusted_reads, see the section at the end): a notice on the message, outside the answer's text.
   */
  markUntrustedReads(reads) {
    this.provenance?.remove();
    this.record.untrustedReads = reads;
    this.provenance = provenanceNotice(reads);
    if (this.provenance) this.element.insertBefore(this.provenance, this.footer);
  }

  /**
   * The agent's final answer (the final event's text). It is the model's streamed words, unless
   * the agent replaced them: the model had no words of its own (it repeated its calls, or copied
   * the agent's own line back), so the person gets the turn's results in words. Then the words
   * streamed after the last tool card give way to it, so the page shows what the agent answered.
   */
  showFinalAnswer(text) {
    const wanted = String(text ?? "").trim();
    if (!wanted || this.#streamedWords().map((part) => part.text).join("").trim() === wanted) return;
    this.withdrawStreamedWords();
    this.appendText(wanted);
    this.#settleText();
  }

  /**
   * Removes the words streamed since the last tool card: the agent sent them back to the model
   * (figures nobody gave, py/botpsy_agent/worked_numbers.py) or replaced them with its answer.
   */
  withdrawStreamedWords() {
    const parts = this.record.parts;
    for (const part of this.#streamedWords()) {
      this.textNodes.get(part)?.remove();
      parts.splice(parts.indexOf(part), 1);
      if (this.current?.part === part) this.current = null;
    }
  }

  #streamedWords() {
    const parts = this.record.parts;
    const lastCall = parts.findLastIndex((part) => part.type !== "text" && part.type !== "thinking");
    return parts.slice(lastCall + 1).filter((part) => part.type === "text");
  }

  finish({ stats = null, stopped = false } = {}) {
    this.#stopWaiting();
    this.#closeThinking();
    this.record.stats = stats;
    this.element.setAttribute("aria-busy", "false");
    const cutOff = stopped ? null : stopNotice(stats?.stopReason);
    if (cutOff) this.element.insertBefore(cutOff, this.footer);
    const bits = [];
    if (stopped) bits.push("Stopped");
    if (stats?.generatedTokens) bits.push(`${stats.generatedTokens} tokens`);
    if (stats?.tokensPerSecond) bits.push(formatRate(stats.tokensPerSecond));
    if (stats?.elapsedMs) bits.push(formatDuration(stats.elapsedMs));
    this.footer.textContent = bits.join(" · ");
    // A call that formed but never ran (stopped, or repeated by the model and not run again by
    // the agent) leaves no card saying "Preparing".
    for (const card of this.forming?.values() ?? []) {
      card.element.remove();
      this.record.parts.splice(this.record.parts.indexOf(card.record), 1);
    }
    this.forming?.clear();
    if (!this.record.parts.length && !stopped) this.appendText("(no answer)");
    this.#settleText();
  }

  #stopWaiting() {
    clearTimeout(this.waitingTimer);
    this.waiting.remove();
  }

  #block(type, create) {
    this.#stopWaiting();
    if (this.current?.part.type !== type) {
      if (type === "text") this.#closeThinking();
      else this.#settleText();
      const part = { type, text: "" };
      this.record.parts.push(part);
      this.current = { part, ...create() };
      if (type === "text") this.textNodes.set(part, this.current.node);
      this.body.append(this.current.node);
    }
    return this.current;
  }

  /** The answer's text is complete: render all of it (while streaming its unfinished line was plain text). */
  #settleText() {
    if (this.current?.part.type === "text") this.current.markdown.finish();
  }

  #closeThinking() {
    if (this.current?.part.type === "thinking" && this.current.summary) {
      const ms = performance.now() - this.current.started;
      this.current.summary.textContent = `Thought for ${formatDuration(ms)}`;
    }
  }
}

// --- the answer's provenance ------------------------------------------------
// The mark on an answer written after the model read untrusted content (a file, a web page, an
// email, a note stored after reading one): the agent's final event lists those reads in its typed
// field `untrusted_reads` (py/botpsy_agent/provenance.py UntrustedRead, docs/contracts.md section 3),
// built by the loop from the tool results it marked as data, never from the model's text. The notice
// is its own element beside the answer, outside the Markdown the model writes: no answer text can
// add it, hide it or restyle it (the Markdown renderer allows no classes of ours on model text).
// A gate cannot stop a sentence ("you should visit Riverside View Hotel"); this tells the person
// where such a sentence may have come from. It warns; it does not stop anyone who believes it.

/**
 * @typedef {object} UntrustedRead
 * @property {string} name       the tool that was called
 * @property {object} arguments  what it was called with
 * @property {string} source     why its result is data: "the tool files_read", "stored data that came from ..."
 */

const SHOWN_READS = 3;
const VALUE_CHARS = 40;

/** The final event's reads, keeping only well-formed entries; [] when the answer read nothing untrusted. */
export function untrustedReadsOf(finalEvent) {
  const reads = finalEvent?.untrusted_reads;
  if (!Array.isArray(reads)) return [];
  return reads.filter((read) => read && typeof read.name === "string" && typeof read.source === "string")
    .map((read) => ({ name: read.name, source: read.source,
                      arguments: read.arguments && typeof read.arguments === "object" ? read.arguments : {} }));
}

function shortValue(value) {
  let text;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}

/** files_read(name: "minutes.txt"), plus where stored data first came from. */
export function describeRead(read) {
  const args = Object.entries(read.arguments).map(([key, value]) => `${key}: ${shortValue(value)}`).join(", ");
  const call = `${read.name}(${args})`;
  return read.source.startsWith("stored data") ? `${call}, ${read.source}` : call;
}

/** The notice's text, also used for the exported transcript. */
export function provenanceSentence(reads) {
  const named = reads.slice(0, SHOWN_READS).map(describeRead).join("; ");
  const more = reads.length > SHOWN_READS ? ` and ${reads.length - SHOWN_READS} more` : "";
  return `Written after reading ${named}${more} — content from outside may steer it.`;
}

/** The notice shown on an assistant message, or null when there is nothing to say. */
export function provenanceNotice(reads) {
  if (!reads.length) return null;
  return el("aside", { class: "answer-provenance", role: "note", "aria-label": "Where this answer may come from",
                       title: reads.map((read) => `${describeRead(read)} (${read.source})`).join("\n") },
    el("strong", {}, "Outside content:"), " ", provenanceSentence(reads));
}
