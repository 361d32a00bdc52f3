import assert from "node:assert/strict";
import { test } from "node:test";

import { mermaidConfig, sanitizeSvg } from "../../site_template/static/ask/diagram.js";

// Just enough of an Element for sanitizeSvg: nodeName, children, attributes, removeAttribute, remove.
function node(nodeName, attrs = {}, ...children) {
  const n = {
    nodeName,
    parent: null,
    children: [],
    attributes: Object.entries(attrs).map(([name, value]) => ({ name, value })),
    removeAttribute(name) {
      n.attributes = n.attributes.filter((a) => a.name !== name);
    },
    remove() {
      n.parent.children = n.parent.children.filter((c) => c !== n);
    },
  };
  for (const c of children) {
    c.parent = n;
    n.children.push(c);
  }
  return n;
}

function names(n) {
  return [n.nodeName, ...n.children.flatMap(names)];
}

function attrs(n) {
  return [...n.attributes.map((a) => `${n.nodeName}@${a.name}`), ...n.children.flatMap(attrs)];
}

test("mermaidConfig: strict security, no HTML labels, the colour scheme's theme", () => {
  const light = mermaidConfig(false);
  assert.equal(light.securityLevel, "strict");
  assert.equal(light.htmlLabels, false);
  assert.equal(light.flowchart.htmlLabels, false);
  assert.equal(light.startOnLoad, false);
  assert.equal(light.theme, "neutral");
  assert.equal(mermaidConfig(true).theme, "dark");
});

test("sanitizeSvg: scripts, foreign objects and animations go, at any depth", () => {
  const svg = node(
    "svg",
    { viewBox: "0 0 10 10" },
    node("script", {}),
    node("style", {}),
    node("g", { class: "node" }, node("rect", { width: "4" }), node("foreignObject", {}, node("div", {})), node("g", {}, node("SCRIPT", {}), node("text", {}))),
    node("animate", { attributeName: "href", values: "javascript:alert(1)" }),
    node("set", { attributeName: "onclick" }),
    node("iframe", {}),
  );
  const removed = sanitizeSvg(svg);
  assert.deepEqual(names(svg), ["svg", "style", "g", "rect", "g", "text"]);
  assert.equal(removed, 6);
});

test("sanitizeSvg: event handlers, outward links and javascript: values go; #fragments stay", () => {
  const svg = node(
    "svg",
    { onload: "x()", id: "d1" },
    node("a", { href: "https://evil.example/", class: "link" }),
    node("a", { "xlink:href": "javascript:alert(1)" }),
    node("use", { href: "#arrow", OnMouseOver: "y()" }),
    node("path", { d: "M0 0", "marker-end": "url(#arrowhead)", "data-go": "  JavaScript:void(0)" }),
  );
  sanitizeSvg(svg);
  assert.deepEqual(attrs(svg), ["svg@id", "a@class", "use@href", "path@d", "path@marker-end"]);
});

test("sanitizeSvg: a clean diagram is left as it was", () => {
  const svg = node("svg", { id: "d", viewBox: "0 0 1 1" }, node("g", { class: "edgePaths" }, node("path", { d: "M1 1", "marker-end": "url(#m)" })));
  const before = JSON.stringify([names(svg), attrs(svg)]);
  assert.equal(sanitizeSvg(svg), 0);
  assert.equal(JSON.stringify([names(svg), attrs(svg)]), before);
});
