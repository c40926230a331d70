// Answers as Markdown: markdown-it parses, DOMPurify cleans its output against a short
// allow-list, then links and code blocks are dressed for the chat.
//
// Everything here is model text, so attacker-written. What stops it is, in order:
// - markdown-it with `html: false`: tags the model writes stay text (escaped);
// - links only to http(s)/mailto (validateLink): `[x](javascript:...)`, data:, relative
//   links stay the literal Markdown text;
// - DOMPurify on markdown-it's output (defence in depth against a parser bug): only the
//   elements and attributes Markdown makes, URLs only http(s)/mailto, classes only ours;
// - the page's CSP (py/botpsy_web/content_policy.py), which the browser enforces whatever
//   slips through: no inline script or style, images from this origin only.
// Markdown images are shown as links labelled "Image: ...", never <img>: an image URL loads
// as soon as it is shown (a way to send data to whoever owns it), and the CSP would block
// other origins anyway. Table alignment becomes a class: a style attribute would need
// 'unsafe-inline'.
import MarkdownIt from "../../node_modules/markdown-it/dist/browser/markdown-it.esm.min.mjs";
import DOMPurify from "../../node_modules/dompurify/dist/purify.es.mjs";
import { dressCodeBlock } from "./code-block.js";
import { el } from "./dom.js";

const LINK_TARGET = /^(?:https?:\/\/|mailto:)/i;

const ALLOWED_TAGS = ["p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "code", "pre",
  "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td"];
const ALLOWED_CLASSES = {
  CODE: /^language-[\w+#.-]{1,40}$/,
  TH: /^align-(?:left|center|right)$/,
  TD: /^align-(?:left|center|right)$/,
  A: /^md-image$/,
};

const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });
markdown.linkify.set({ fuzzyLink: false, fuzzyEmail: false }); // only URLs written with their scheme
markdown.validateLink = (url) => LINK_TARGET.test(url);
markdown.renderer.rules.image = (tokens, index, options, env, renderer) => {
  const image = tokens[index];
  const alt = renderer.renderInlineAsText(image.children, options, env).trim();
  const escape = markdown.utils.escapeHtml;
  return `<a href="${escape(image.attrGet("src"))}" class="md-image">${escape(`Image: ${alt || "untitled"}`)}</a>`;
};
markdown.core.ruler.push("alignment_as_class", (state) => {
  for (const token of state.tokens) {
    const align = /^text-align:(left|center|right)$/.exec(token.attrGet?.("style") ?? "")?.[1];
    if (!align) continue;
    token.attrs = token.attrs.filter(([name]) => name !== "style");
    token.attrJoin("class", `align-${align}`);
  }
});

// Our own DOMPurify instance, so hooks added elsewhere on the page never change these rules.
const purifier = DOMPurify(window);
purifier.addHook("uponSanitizeAttribute", (node, data) => {
  if (data.attrName === "class" && !ALLOWED_CLASSES[node.nodeName]?.test(data.attrValue)) data.keepAttr = false;
});
const SANITIZE = {
  ALLOWED_TAGS,
  ALLOWED_ATTR: ["href", "title", "start", "class"],
  ALLOWED_URI_REGEXP: LINK_TARGET,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/** The markdown-it instance (configured as above), for code that needs its parser. */
export const markdownParser = markdown;

/**
 * Markdown text -> its top-level blocks, sanitized but not yet dressed, each with a key (its
 * HTML) that says whether it changed since an earlier render.
 * @returns {{key: string, node: Element}[]}
 */
export function markdownBlocks(text) {
  return sanitizedBlocks(markdown.render(text));
}

/** HTML (markdown-it's output) -> its top-level blocks, through the sanitizer's allow-list. */
export function sanitizedBlocks(html) {
  const fragment = purifier.sanitize(html, SANITIZE);
  return [...fragment.children].map((node) => ({ key: node.outerHTML, node }));
}

/** A block from markdownBlocks made ready to show: links and code blocks dressed. Returns the node to insert. */
export function dressBlock(node) {
  for (const link of [node, ...node.querySelectorAll("a")].filter((n) => n.nodeName === "A")) dressLink(link);
  let shown = node;
  for (const pre of [node, ...node.querySelectorAll("pre")].filter((n) => n.nodeName === "PRE")) {
    const block = dressCodeBlock(pre);
    if (pre === node) shown = block;
  }
  return shown;
}

/** Markdown text -> a fragment ready to show (a complete text; streaming goes through MarkdownView). */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  for (const { node } of markdownBlocks(text)) fragment.append(dressBlock(node));
  return fragment;
}

// A link says where it goes (its target in the tooltip, and its host after the text unless the
// text is the address itself) and opens in a new tab that cannot reach back to this page.
function dressLink(link) {
  const href = link.getAttribute("href") ?? "";
  const text = link.textContent.trim();
  link.target = "_blank";
  link.rel = "noopener noreferrer";
  link.title = href;
  const destination = linkDestination(href);
  if (text !== href && text !== safeDecode(href) && text !== destination) {
    link.append(el("span", { class: "link-target" }, destination));
  }
  link.append(el("span", { class: "visually-hidden" }, " (opens in a new tab)"));
}

function linkDestination(href) {
  if (/^mailto:/i.test(href)) return safeDecode(href.slice("mailto:".length).split("?")[0]);
  try {
    return new URL(href).host; // punycode for international names, so look-alike hosts show as such
  } catch {
    return href;
  }
}

function safeDecode(text) {
  try {
    return decodeURI(text);
  } catch {
    return text;
  }
}
