// The widget's Shadow DOM: a launcher (floating mode) and the chat panel.
import { el, icon } from "../ui/dom.js";
import { ICONS } from "../ui/icons.js";

const CSS_FILES = ["tokens.css", "chat.css", "widget.css"];

export function buildWidgetDom(shadow, { cssBase, heading, floating }) {
  for (const file of CSS_FILES) shadow.append(el("link", { rel: "stylesheet", href: new URL(file, cssBase).href }));
  const parts = {
    badge: el("span", { class: "badge", role: "status", "aria-live": "polite", "data-state": "idle" }, "Not started"),
    newChat: el("button", { type: "button", class: "button ghost small" }, "New chat"),
    close: floating ? el("button", { type: "button", class: "button ghost small", "aria-label": "Close the assistant" }, icon(ICONS.close)) : null,
    log: el("div", { class: "chat-log", role: "log", "aria-live": "polite", "aria-label": "Messages", tabindex: "0" }),
    start: el("button", { type: "button", class: "button primary" }, "Start the assistant"),
    progress: el("progress", { max: "1", value: "0", "aria-label": "Loading progress", hidden: true }),
    progressText: el("p", { class: "progress-text", "aria-live": "polite" }),
    input: el("textarea", { rows: "1", disabled: true, placeholder: "Start the assistant first", "aria-label": "Message" }),
    send: el("button", { type: "submit", class: "button primary", disabled: true }, "Send"),
    stop: el("button", { type: "button", class: "button", hidden: true }, "Stop"),
  };
  parts.starter = el("div", { class: "starter" },
    el("p", {}, "This assistant runs on your device. Starting downloads its model once."),
    parts.start, parts.progress, parts.progressText);
  parts.form = el("form", { class: "composer" }, parts.input, parts.send, parts.stop);
  parts.panel = el("section", { class: "panel", "aria-label": heading, hidden: floating },
    el("header", { class: "panel-header" },
      el("span", { class: "panel-title" }, heading), parts.badge, parts.newChat, parts.close),
    parts.starter, parts.log, parts.form);
  if (floating) {
    parts.launcher = el("button", {
      type: "button", class: "launcher", "aria-label": `Open ${heading}`, "aria-expanded": "false",
    }, icon(ICONS.chat));
    shadow.append(parts.launcher);
  }
  shadow.append(parts.panel);
  return parts;
}
