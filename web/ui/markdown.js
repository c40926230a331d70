// A small, safe Markdown subset for answers: paragraphs, "-"/"*"/"1." lists, ``` code
// blocks, **bold**, *italic* and `code`. Builds DOM nodes (never innerHTML), so text
// from the model cannot inject markup. Unfinished syntax while streaming stays as text.
import { el } from "./dom.js";

const INLINE = /(\*\*[^*\n]+\*\*|`[^`\n]+`|\*[^*\n]+\*)/g;

export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const parts = text.split(/^```[^\n]*\n?/m);
  parts.forEach((part, index) => {
    if (index % 2 === 1) fragment.append(el("pre", { class: "code-block" }, el("code", {}, part.replace(/\n$/, ""))));
    else appendBlocks(fragment, part);
  });
  return fragment;
}

function appendBlocks(parent, text) {
  let list = null;
  let paragraph = [];
  const flushParagraph = () => {
    if (paragraph.length) parent.append(el("p", {}, inline(paragraph.join("\n"))));
    paragraph = [];
  };
  for (const line of text.split("\n")) {
    const item = /^\s*(?:[-*]|(\d+)\.)\s+(.*)$/.exec(line);
    if (item) {
      flushParagraph();
      const ordered = item[1] !== undefined;
      if (!list || list.ordered !== ordered) {
        list = { ordered, node: el(ordered ? "ol" : "ul") };
        parent.append(list.node);
      }
      list.node.append(el("li", {}, inline(item[2])));
    } else if (!line.trim()) {
      flushParagraph();
      list = null;
    } else {
      list = null;
      paragraph.push(line);
    }
  }
  flushParagraph();
}

function inline(text) {
  return text.split(INLINE).filter(Boolean).map((piece) => {
    if (/^\*\*[^*]+\*\*$/.test(piece)) return el("strong", {}, piece.slice(2, -2));
    if (/^`[^`]+`$/.test(piece)) return el("code", {}, piece.slice(1, -1));
    if (/^\*[^*]+\*$/.test(piece)) return el("em", {}, piece.slice(1, -1));
    return piece;
  });
}
