// A tiny element builder, so UI modules read as structure rather than DOM calls.

/**
 * el("button", {class: "primary", onclick: fn, "aria-label": "Send"}, "Send")
 * Props starting with "on" become listeners; `dataset`/`style` objects are merged;
 * booleans toggle attributes; null/undefined/false children are skipped.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset" || key === "style") {
      Object.assign(node[key], value);
    } else if (key === "class") {
      node.className = value;
    } else if (key in node && typeof value !== "string") {
      node[key] = value;
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  appendChildren(node, children);
  return node;
}

export function appendChildren(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Replaces a node's children with the given ones. */
export function setChildren(node, ...children) {
  node.replaceChildren();
  return appendChildren(node, children);
}

/** An inline SVG icon drawn from path data (see icons.js); decorative unless given a label. */
export function icon(pathData, label) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  if (label) {
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", label);
  } else {
    svg.setAttribute("aria-hidden", "true");
  }
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", pathData);
  svg.append(path);
  return svg;
}
