// Why an answer ended, when the person should know: the model did not finish on its own but was
// cut at the reply's length limit or at the end of its context window (the runtime's stopReason,
// web/runtime/protocol.js StopReasons), or stopped by the agent because it kept repeating itself. An answer that ended by itself, or was stopped by the
// person (the footer says "Stopped"), gets nothing.
import { el } from "./dom.js";

const CUT_OFF = Object.freeze({
  max_tokens: {
    title: "Cut off:",
    sentence: "the answer reached the length limit of one reply.",
    hint: "Say “continue” to get the rest.",
  },
  repeating: {  // not the runtime's: the agent stopped a generation that kept repeating itself
    title: "Stopped:",
    sentence: "the model kept writing the same thing over and over.",
    hint: "Ask again, perhaps in other words.",
  },
  context_full: {
    title: "Conversation full:",
    sentence: "the model cannot read any more of this conversation.",
    hint: "Start a new chat to go on.",
  },
});

/** The notice's words for a stop reason, or null when the answer ended normally. */
export function stopWords(stopReason) {
  return Object.hasOwn(CUT_OFF, stopReason ?? "") ? CUT_OFF[stopReason] : null;
}

/** One line for the exported transcript, or null. */
export function stopSentence(stopReason) {
  const words = stopWords(stopReason);
  return words ? `${words.title} ${words.sentence} ${words.hint}` : null;
}

/** The notice under an assistant message, or null when there is nothing to say. */
export function stopNotice(stopReason) {
  const words = stopWords(stopReason);
  if (!words) return null;
  return el("aside", { class: "answer-cut-off", role: "note", "aria-label": "Why this answer ends here",
                       dataset: { stopReason } },
    el("strong", {}, words.title), ` ${words.sentence} `, el("span", { class: "hint" }, words.hint));
}
