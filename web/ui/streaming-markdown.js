// An answer rendered as Markdown while it streams in, without half-written syntax turning
// into markup and back (a lone "-" that is a heading underline until the space after it
// makes it a list item, "`" that later swallows the rest of the line into code, a table
// header shown as a paragraph until its delimiter row arrives).
//
// The rule: complete lines are Markdown. Of the line still being written, only a prefix
// whose meaning no later text can change is Markdown: it ends before whitespace (so every
// delimiter in it is settled), it holds more than the block marker ("1." alone could still
// become "1.5"), and it leaves no backtick or "[" open (a later closer could turn what
// follows into code or a link). Inside an open code fence the whole line is code. Lines
// of markers only (rules, underlines, fences), lines with a "|" (table rows) and a last
// complete line with a "|" that the next line may make a table header wait until the
// line after them ends. What waits is shown as plain text (a text node, no element) at
// the end of the last block. finish() renders the whole text once it is complete.
// Known limit: a paragraph line followed by "---" (a setext heading, rare from models)
// shows as a paragraph until that underline line ends.
//
// Blocks whose HTML did not change keep their nodes, so a code block's Copy button, a
// selection or focus inside earlier blocks survive the next token.
import { dressBlock, markdownBlocks, markdownParser } from "./markdown.js";

const CONTAINERS = new Set(["DIV", "P", "LI", "UL", "OL", "BLOCKQUOTE", "H1", "H2", "H3", "H4", "H5", "H6",
  "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "PRE"]);
const MARKERS_ONLY = /^[\s\-=*_+:|#>]*$/;  // "---", "===", "* * *", "|:--|", "- ", "#"
const OPENERS = /[`[]/g;

export class MarkdownView {
  /** container: the element the answer is shown in (its children are this view's). */
  constructor(container) {
    this.container = container;
    this.text = "";
    this.blocks = [];  // [{key, node}] as shown, in order
    this.pendingNode = null;
  }

  /** Shows `text`, an answer still being written. */
  update(text) {
    this.text = text;
    const { markdown, pending, sameLine } = splitStreamingText(text);
    this.#show(markdown, pending, sameLine);
  }

  /** Shows the answer as complete (the last update's text unless given). */
  finish(text = this.text) {
    this.text = text;
    this.#show(text, "", false);
  }

  #show(markdown, pending, sameLine) {
    this.pendingNode?.remove();
    this.pendingNode = null;
    const rendered = markdownBlocks(markdown);
    rendered.forEach(({ key, node }, index) => {
      const shown = this.blocks[index];
      if (shown?.key === key) return;
      const dressed = dressBlock(node);
      if (shown) shown.node.replaceWith(dressed);
      else this.container.append(dressed);
      this.blocks[index] = { key, node: dressed };
    });
    for (const { node } of this.blocks.splice(rendered.length)) node.remove();
    if (!pending) return;
    this.pendingNode = document.createTextNode(pending);
    const last = this.blocks.at(-1)?.node;
    (sameLine && last ? innermostBlock(last) : this.container).append(this.pendingNode);
  }
}

/**
 * An answer being written -> {markdown, pending, sameLine}: the part to render as Markdown,
 * the rest to show as plain text, and whether that rest continues the last rendered line.
 */
export function splitStreamingText(text) {
  const lineStart = text.lastIndexOf("\n") + 1;
  const settled = text.slice(0, lineStart);
  const line = text.slice(lineStart);
  const lines = settled ? settled.slice(0, -1).split("\n") : [];
  const tokens = settled ? markdownParser.parse(settled, {}) : [];
  const reachesEnd = (type) => tokens.findLast((token) => token.type === type)?.map?.[1] === lines.length;

  if (reachesEnd("paragraph_open") && lines.at(-1).includes("|")) {
    // The paragraph's last line may become a table's header row when the next line is its delimiter row.
    const held = `${lines.at(-1)}\n`;
    return { markdown: settled.slice(0, -held.length), pending: held + line, sameLine: false };
  }
  let cut;
  if (insideOpenFence(tokens, lines)) cut = /^\s*[`~]*\s*$/.test(line) ? 0 : line.length;  // code is literal, but for a closing fence
  else if (MARKERS_ONLY.test(line) || line.includes("|") || reachesEnd("table_open")) cut = 0;  // wait for the line's end
  else cut = settledLength(line);
  return { markdown: settled + line.slice(0, cut), pending: line.slice(cut), sameLine: cut > 0 };
}

function insideOpenFence(tokens, lines) {
  const fence = tokens.at(-1);
  if (fence?.type !== "fence" || fence.map[1] !== lines.length) return false;
  const lastLine = lines.at(-1).trim();
  const closed = fence.map[1] - fence.map[0] >= 2 && lastLine.startsWith(fence.markup) && /^[`~]+$/.test(lastLine);
  return !closed;
}

// How much of the line being written can be Markdown already (see the file's comment).
function settledLength(line) {
  const cuts = [];  // ends of words followed by whitespace, after the line's first word
  for (const match of line.matchAll(/\S(?=\s)/g)) {
    const end = match.index + 1;
    if (/\S\s+\S/.test(line.slice(0, end).trimStart())) cuts.push(end);
  }
  if (!cuts.length) return 0;
  const openerPositions = [...line.matchAll(OPENERS)].map((match) => match.index);
  // The longest prefix first, then the longest ones ending before each backtick or bracket.
  const candidates = [cuts.at(-1), ...openerPositions.reverse().map((at) => cuts.findLast((cut) => cut <= at))];
  return candidates.find((cut) => cut !== undefined && !leavesOpener(line.slice(0, cut))) ?? 0;
}

// Whether Markdown text left a backtick or "[" as literal text (an opener a later closer may take).
function leavesOpener(prefix) {
  const inline = markdownParser.parseInline(prefix, {})[0];
  return (inline?.children ?? []).some((token) => token.type === "text" && /[`[]/.test(token.content));
}

// Where plain text continuing the last line goes: the deepest last block, not an inline element.
function innermostBlock(node) {
  let current = node;
  while (current.lastElementChild && CONTAINERS.has(current.lastElementChild.nodeName)) {
    current = current.lastElementChild;
  }
  if (current.nodeName === "PRE" && current.lastElementChild?.nodeName === "CODE") current = current.lastElementChild;
  return current;
}
