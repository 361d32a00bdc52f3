// DOM building for the panel: elements from data, text only (never innerHTML with data).

import { codeSpans } from "./util.js";

// el("a", {class, href, text, ...attrs}, ...children): null/undefined/false attributes and children are skipped.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false || child === "") continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

// Text with `code spans` as <code> elements.
export function withCode(text) {
  return codeSpans(text).map((piece) => (piece.code ? el("code", { text: piece.text }) : document.createTextNode(piece.text)));
}
