// An answer rendered as Markdown while it streams in, without half-written syntax turning
// into markup and back (a lone "-" that is a heading underline until the space after it
// makes it a list item, "`" that later swallows the rest of the line into code, a table
// header shown as a paragraph until its delimiter row arrives).
//
// The rule: complete blocks are Markdown. Of the paragraph or line still being written, only
// a prefix whose meaning no later text can change is Markdown: it ends before whitespace (so
// every delimiter in it is settled), its last line holds more than a block marker ("1." alone
// could still become "1.5"), and it leaves no backtick or "[" open (a later closer could turn
// what follows into code or a link). Inside an open code fence the whole line is code. Lines
// of markers only (rules, underlines), fence lines and table rows ("|" first) wait until
// they end, and a last complete line that the next one may make a table header ("| a | b |")
// until the line after it ends. What waits is shown as plain text (a text node, no element)
// at the end of the last block. finish() renders the whole text once it is complete.
// Known limits (rare from models): a paragraph line followed by "---" (a setext heading), or
// a table without a leading "|", shows as a paragraph until the line under it ends.
//
// Blocks whose HTML did not change keep their nodes, so a code block's Copy button, a
// selection or focus inside earlier blocks survive the next token.
import { dressBlock, markdownBlocks, markdownParser } from "./markdown.js";

const CONTAINERS = new Set(["DIV", "P", "LI", "UL", "OL", "BLOCKQUOTE", "H1", "H2", "H3", "H4", "H5", "H6",
  "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "PRE"]);
const MARKERS_ONLY = /^[\s\-=*_+:|#>]*$/;  // "---", "===", "* * *", "|:--|", "- ", "#"
const TABLE_ROW = /^\s*\|/;
// Lines whose kind only their end decides: markers only (a rule, an underline), a table row,
// a fence (its info string may not hold a backtick: then it is inline code instead).
const WAITS_FOR_LINE_END = /^[\s\-=*_+:|#>]*$|^\s*\||^\s*(?:```|~~~)/;
const OPENERS = /[`[]/g;

export class MarkdownView {
  /** container: the element the answer is shown in (its children are this view's). */
  constructor(container) {
    this.container = container;
    this.text = "";
    this.blocks = [];  // [{key, node}] as shown, in order
    this.pendingNode = null;
    // Blocks followed by another block are final: while streaming, only the text after them
    // is parsed again (each token costs the last block, not the whole answer).
    this.frozen = { text: "", blocks: 0 };
  }

  /** Shows `text`, an answer still being written. */
  update(text) {
    this.text = text;
    if (!text.startsWith(this.frozen.text)) this.frozen = { text: "", blocks: 0 };
    const rest = text.slice(this.frozen.text.length);
    const { markdown, pending, sameLine, lastBlockStart } = splitStreamingText(rest);
    this.#show(markdown, pending, sameLine, this.frozen.blocks);
    if (lastBlockStart > 0) {
      const final = rest.slice(0, lastBlockStart);
      this.frozen = { text: this.frozen.text + final, blocks: this.frozen.blocks + markdownBlocks(final).length };
    }
  }

  /** Shows the answer as complete (the last update's text unless given), all of it parsed at once. */
  finish(text = this.text) {
    this.text = text;
    this.frozen = { text: "", blocks: 0 };
    this.#show(text, "", false, 0);
  }

  // Shows `markdown` rendered as the blocks from index `first` on; unchanged blocks keep their nodes.
  #show(markdown, pending, sameLine, first) {
    this.pendingNode?.remove();
    this.pendingNode = null;
    const rendered = markdownBlocks(markdown);
    rendered.forEach(({ key, node }, offset) => {
      const index = first + offset;
      const shown = this.blocks[index];
      if (shown?.key === key) return;
      const dressed = dressBlock(node);
      if (shown) shown.node.replaceWith(dressed);
      else this.container.append(dressed);
      this.blocks[index] = { key, node: dressed };
    });
    for (const { node } of this.blocks.splice(first + rendered.length)) node.remove();
    if (!pending) return;
    this.pendingNode = document.createTextNode(pending);
    const last = this.blocks.at(-1)?.node;
    (sameLine && last ? innermostBlock(last) : this.container).append(this.pendingNode);
  }
}

/**
 * An answer being written -> {markdown, pending, sameLine, lastBlockStart}: the part to render
 * as Markdown, the rest to show as plain text, whether that rest continues the last rendered
 * line, and where the last top-level block of the complete lines starts (what is before it
 * no later text can change).
 */
export function splitStreamingText(text) {
  const lineStart = text.lastIndexOf("\n") + 1;
  const complete = parseCompleteLines(text.slice(0, lineStart));
  const lastBlock = complete.tokens.findLast((token) => token.level === 0 && token.nesting >= 0 && token.map);
  return { ...splitAt(text, lineStart, complete), lastBlockStart: lastBlock ? complete.offsetOfLine(lastBlock.map[0]) : 0 };
}

function parseCompleteLines(settled) {
  const lines = settled ? settled.slice(0, -1).split("\n") : [];
  const tokens = settled ? markdownParser.parse(settled, {}) : [];
  return {
    lines,
    tokens,
    offsetOfLine: (index) => lines.slice(0, index).reduce((offset, previous) => offset + previous.length + 1, 0),
    reachesEnd: (type) => tokens.findLast((token) => token.type === type)?.map?.[1] === lines.length,
  };
}

function splitAt(text, lineStart, { lines, tokens, offsetOfLine, reachesEnd }) {
  const line = text.slice(lineStart);
  if (reachesEnd("paragraph_open")) {
    // A paragraph still open: a backtick or "[" on an earlier line of it may yet be closed, so
    // its complete lines are cut like the line being written (which joins them if it continues
    // the paragraph). A last line that the next one may make a table header waits.
    const firstLine = tokens.findLast((token) => token.type === "paragraph_open").map[0];
    const start = offsetOfLine(firstLine);
    let end = lineStart;
    if (TABLE_ROW.test(lines.at(-1))) end = offsetOfLine(lines.length - 1);
    else if (line && !WAITS_FOR_LINE_END.test(line) && continuesParagraph(text, firstLine)) end = text.length;
    const cut = start + settledLength(text.slice(start, end));
    return { markdown: text.slice(0, cut), pending: text.slice(cut), sameLine: cut > start };
  }
  let cut;
  if (insideOpenFence(tokens, lines)) cut = /^\s*[`~]*\s*$/.test(line) ? 0 : line.length;  // code is literal, but for a closing fence
  else if (WAITS_FOR_LINE_END.test(line) || reachesEnd("table_open")) cut = 0;
  else cut = settledLength(line);
  return { markdown: text.slice(0, lineStart + cut), pending: line.slice(cut), sameLine: cut > 0 };
}

// Whether the line being written belongs to the paragraph that starts at line `firstLine`.
function continuesParagraph(text, firstLine) {
  const lineCount = text.split("\n").length;
  const paragraph = markdownParser.parse(text, {}).findLast((token) => token.type === "paragraph_open");
  return paragraph?.map[0] === firstLine && paragraph.map[1] === lineCount;
}

function insideOpenFence(tokens, lines) {
  const fence = tokens.at(-1);
  if (fence?.type !== "fence" || fence.map[1] !== lines.length) return false;
  const lastLine = lines.at(-1).trim();
  const closed = fence.map[1] - fence.map[0] >= 2 && lastLine.startsWith(fence.markup) && /^[`~]+$/.test(lastLine);
  return !closed;
}

// How much of `text` (the paragraph or line being written) can be Markdown already (see the
// file's comment).
function settledLength(text) {
  const cuts = [];  // ends of words followed by whitespace: a line's end, or after its first word
  for (const match of text.matchAll(/\S(?=\s)/g)) {
    const end = match.index + 1;
    const ofLine = text.slice(text.lastIndexOf("\n", end - 1) + 1, end);
    if (text[end] === "\n" || (/\S\s+\S/.test(ofLine.trimStart()) && !WAITS_FOR_LINE_END.test(ofLine))) cuts.push(end);
  }
  if (!cuts.length) return 0;
  const openerPositions = [...text.matchAll(OPENERS)].map((match) => match.index);
  // The longest prefix first, then the longest ones ending before each backtick or bracket.
  const candidates = [cuts.at(-1), ...openerPositions.reverse().map((at) => cuts.findLast((cut) => cut <= at))];
  return candidates.find((cut) => cut !== undefined && !leavesOpener(text.slice(0, cut))) ?? 0;
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
