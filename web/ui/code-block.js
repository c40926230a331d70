// A code block in an answer: its language and a button that copies the code.
import { el } from "./dom.js";

const SHOW_RESULT_MS = 2000;

/**
 * Wraps a <pre><code> in a frame with a header (language, Copy button) and returns the frame.
 * The button copies the code as text through navigator.clipboard and says "Copied".
 */
export function dressCodeBlock(pre) {
  const code = pre.querySelector("code") ?? pre;
  // markdown-it ends a block's code with a newline; shown, it would be an empty last line.
  if (code.lastChild?.nodeType === Node.TEXT_NODE) code.lastChild.data = code.lastChild.data.replace(/\n$/, "");
  pre.classList.add("code-block");
  const language = /^language-(.+)$/.exec(code.className)?.[1] ?? "";
  const button = el("button", { type: "button", class: "copy-code", "aria-live": "polite" }, "Copy");
  button.addEventListener("click", () => copyCode(code.textContent, button));
  const frame = el("div", { class: "code-frame" },
    el("div", { class: "code-head" }, el("span", { class: "code-language" }, language || "code"), button));
  pre.replaceWith(frame);
  frame.append(pre);
  return frame;
}

async function copyCode(text, button) {
  clearTimeout(button.resetTimer);
  try {
    // Missing outside secure contexts (plain http on another host): that is the error shown.
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
    button.title = "";
  } catch (error) {
    button.textContent = "Copy failed";
    button.title = `The browser refused the clipboard (${error?.message || error}): select the code and copy it instead.`;
  }
  button.resetTimer = setTimeout(() => { button.textContent = "Copy"; }, SHOW_RESULT_MS);
}
