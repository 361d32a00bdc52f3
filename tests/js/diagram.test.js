import assert from "node:assert/strict";
import { test } from "node:test";

import { mermaidConfig, sanitizeSvg, siteLink, withXlink } from "../../site_template/static/ask/diagram.js";

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
    setAttribute(name, value) {
      n.attributes = n.attributes.map((a) => (a.name === name ? { name, value } : a));
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

test("siteLink: only the core's relative site paths, made absolute against the root", () => {
  const base = "http://127.0.0.1:8000/wiki/";
  assert.equal(siteLink("files/pkg/mod.py.html#L12", base), base + "files/pkg/mod.py.html#L12");
  assert.equal(siteLink("files/a%20b/x~.py.html", base), base + "files/a%20b/x~.py.html");
  for (const bad of ["https://evil.example/", "//evil.example/x", "/etc/passwd", "javascript:alert(1)", "files/x.html#top", "files/x\".html", "files/x.html?q=1", " data:text/html,x", ""]) {
    assert.equal(siteLink(bad, base), null, bad);
  }
  assert.equal(siteLink("files/x.html", ""), null); // no root known: no link
});

test("sanitizeSvg: a node's site link stays, absolute; links elsewhere and on other elements go", () => {
  const base = "http://127.0.0.1:8000/";
  const svg = node(
    "svg",
    {},
    node("a", { "xlink:href": "files/m.py.html#L3", class: "clickable" }, node("g", { class: "node" })),
    node("a", { href: "dirs/pkg/index.html" }),
    node("a", { "xlink:href": "https://evil.example/files/m.py.html" }),
    node("image", { href: "files/m.py.html" }),
    node("use", { href: "files/m.py.html" }),
  );
  assert.equal(sanitizeSvg(svg, base), 3);
  const links = svg.children.filter((c) => c.nodeName === "a").map((a) => a.attributes.map((x) => `${x.name}=${x.value}`).join(" "));
  assert.deepEqual(links, [`xlink:href=${base}files/m.py.html#L3 class=clickable`, `href=${base}dirs/pkg/index.html`, ""]);
  const without = node("svg", {}, node("a", { "xlink:href": "files/m.py.html" }));
  assert.equal(sanitizeSvg(without), 1); // no root given: the link goes
});

test("withXlink: the root declares the xlink namespace Mermaid's links use, once", () => {
  const svg = '<svg id="d" xmlns="http://www.w3.org/2000/svg"><a xlink:href="files/a.html"></a></svg>';
  const fixed = withXlink(svg);
  assert.ok(fixed.startsWith('<svg xmlns:xlink="http://www.w3.org/1999/xlink" id="d"'));
  assert.equal(withXlink(fixed), fixed);
  assert.equal(withXlink("<p>not svg</p>"), "<p>not svg</p>");
});
