import assert from "node:assert/strict";
import { test } from "node:test";

// A minimal stand-in for the browser's document (Node has none): elements with attributes, children
// and textContent, enough for dom.js; the browser tests cover the real DOM.
class FakeNode {
  constructor(tag, text = "") {
    this.tagName = tag;
    this.attributes = {};
    this.childNodes = [];
    this.text = text;
  }
  setAttribute(name, value) { this.attributes[name] = String(value); }
  set className(value) { this.attributes.class = value; }
  set title(value) { this.attributes.title = value; }
  set textContent(value) { this.childNodes = [new FakeNode("#text", String(value))]; }
  get textContent() { return this.tagName === "#text" ? this.text : this.childNodes.map((c) => c.textContent).join(""); }
  append(...nodes) { this.childNodes.push(...nodes); }
  replaceChildren(...nodes) { this.childNodes = nodes; }
}
globalThis.document = {
  createElement: (tag) => new FakeNode(tag),
  createTextNode: (text) => new FakeNode("#text", text),
};
const { el, withCode } = await import("../../site_template/static/ask/dom.js");

const marks = (node) => node.childNodes.filter((c) => c.tagName === "span" && c.attributes.class === "uni");

test("el: hidden characters in text and children become marked stand-ins, never raw", () => {
  const node = el("span", { text: "is\u200badmin" }, " and \u202eevil");
  assert.equal(node.textContent, "is[U+200B]admin and [U+202E]evil");
  assert.deepEqual(marks(node).map((m) => m.textContent), ["[U+200B]", "[U+202E]"]);
  assert.equal(el("p", { text: "👩\u200d💻 plain" }).textContent, "👩\u200d💻 plain");
});

test("el: a title or label gets the stand-in as text; an href is left as it is", () => {
  const a = el("a", { href: "files/a%E2%80%AE.py.html", title: "a\u202e.py", "aria-label": "x\u{e0041}" });
  assert.deepEqual(a.attributes, { href: "files/a%E2%80%AE.py.html", title: "a[U+202E].py", "aria-label": "x[U+E0041]" });
});

test("withCode: code spans and the text around them are marked too", () => {
  const nodes = withCode("call `f\u2066()` then\u200b");
  const text = nodes.map((n) => n.textContent).join("");
  assert.equal(text, "call f[U+2066]() then[U+200B]");
});
