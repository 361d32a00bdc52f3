// DOM building for the panel: elements from data, text only (never innerHTML with data). Characters
// that hide or reorder text (util.js hiddenRuns: bidi controls, zero-width, tags) never go in raw:
// in text, each run is a marked stand-in <span class=uni>[U+202E]</span>; in a title or label, the stand-in as text.

import { codeSpans, codePoints, hiddenRuns, visibleText } from "./util.js";

// Text as nodes: text nodes, and a marked stand-in for each run of hidden characters.
export function textNodes(text) {
  return hiddenRuns(text).map((run) => {
    if (!run.hidden) return document.createTextNode(run.text);
    const mark = document.createElement("span");
    mark.className = "uni";
    mark.title = "invisible or bidirectional Unicode character";
    mark.textContent = `[${codePoints(run.text)}]`;
    return mark;
  });
}

// el("a", {class, href, text, ...attrs}, ...children): null/undefined/false attributes and children are skipped.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.replaceChildren(...textNodes(value));
    else node.setAttribute(key, value === true ? "" : key === "href" ? String(value) : visibleText(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false || child === "") continue;
    node.append(...(typeof child === "string" ? textNodes(child) : [child]));
  }
  return node;
}

// Text with `code spans` as <code> elements.
export function withCode(text) {
  return codeSpans(text).flatMap((piece) => (piece.code ? [el("code", { text: piece.text })] : textNodes(piece.text)));
}
