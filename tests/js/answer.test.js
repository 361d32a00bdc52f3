import assert from "node:assert/strict";
import { test } from "node:test";

import {
  answerView,
  confidenceView,
  footerView,
  itemView,
  reasonText,
  refinementNote,
  snippetsView,
  sourcesView,
  SOURCES_SHOWN,
  warnings,
} from "../../site_template/static/ask/answer.js";
import { formatMs } from "../../site_template/static/ask/util.js";
import { sampleResult } from "./fixtures/result.js";

test("answerView: matches and connected code from the items, never from the text", () => {
  const r = sampleResult();
  // prose that the old regular expressions would have read differently must change nothing
  const view = answerView({ ...r.answer, text: "[9] Bogus (x.py:1-2): `nope`\nConnected code (through the code graph):" });
  assert.equal(view.empty, "");
  assert.equal(view.matchesHead, "The most relevant code:");
  assert.deepEqual(
    view.matches.map((i) => [i.n, i.title, i.url]),
    [
      [1, "InventoryService.remove_stock", "files/inventory/service.py.html#L40"],
      [2, "inventory/cli.py", "files/inventory/cli.py.html#L1"],
    ],
  );
  assert.equal(view.connectedHead, "Connected code (through the code graph):");
  assert.deepEqual(
    view.connected.map((i) => [i.n, i.title, i.reason]),
    [[3, "OutOfStockError", "connected through the code graph (raises)"]],
  );
});

test("itemView: location, tooltip, signature and description from the fields", () => {
  const [method, chunk] = sampleResult().answer.items;
  assert.deepEqual(itemView(method), {
    n: 1,
    kind: "match",
    title: "InventoryService.remove_stock",
    url: "files/inventory/service.py.html#L40",
    location: "inventory/service.py:40",
    tooltip: "inventory/service.py, lines 40–52",
    signature: "remove_stock(self, sku: str, quantity: int) -> Item",
    description: "Take `quantity` units of `sku` out of stock.",
    reason: "found by keyword search and semantic search",
  });
  const v = itemView(chunk);
  assert.equal(v.signature, "");
  assert.equal(v.tooltip, "inventory/cli.py, line 1");
  assert.equal(v.description, "import argparse");
  // a summary that only repeats the title says nothing
  assert.equal(itemView({ ...chunk, summary: chunk.title }).description, "");
  assert.equal(itemView({ ...chunk, title: "User guide > Adding stock", summary: "Adding stock" }).description, "");
  assert.equal(itemView({ ...chunk, title: "Adding stock", summary: "Stock is added by restock()." }).description, "Stock is added by restock().");
});

test("URLs are the core's, unchanged (quoted by oya/core/sitepaths.py)", () => {
  const item = { ...sampleResult().answer.items[0], path: "a b/ü#?.py", url: "files/a%20b/%C3%BC%23%3F.py.html#L40" };
  assert.equal(itemView(item).url, "files/a%20b/%C3%BC%23%3F.py.html#L40");
  assert.equal(itemView(item).location, "a b/ü#?.py:40");
});

test("answerView: no items shows the core's text and its note", () => {
  const view = answerView({ method: "extractive", note: "the model was not available", text: "No code in the index matches this question.", items: [], citations: [] });
  assert.equal(view.empty, "No code in the index matches this question.");
  assert.equal(view.note, "the model was not available");
  assert.deepEqual([view.matches, view.connected, view.matchesHead, view.connectedHead], [[], [], "", ""]);
  assert.equal(answerView(undefined).empty, "");
});

test("confidenceView: the level's words and the disclaimer; LOW when missing", () => {
  assert.deepEqual(confidenceView(sampleResult()), { level: "HIGH", text: "High confidence", disclaimer: "Found by all channels; check the cited lines.", gaps: [] });
  assert.deepEqual(confidenceView({}), { level: "LOW", text: "Low confidence", disclaimer: "", gaps: [] });
  const gaps = ["weak best match (similarity 0.31)", "the first file is backed by 1 of 3 search channels"];
  const low = sampleResult({ confidence: { level: "LOW", disclaimer: "Weak match.", gaps } });
  assert.deepEqual(confidenceView(low).gaps, gaps);
});

test("warnings: only when the core says degraded, one per channel that did not run", () => {
  const ok = sampleResult();
  assert.deepEqual(warnings(ok), []);
  const channels = ok.search_quality.channels.map((c) =>
    c.name === "semantic" ? { ...c, status: "unavailable", detail: "the question model could not be loaded (404)" } : c,
  );
  const degraded = sampleResult({ degraded: true, degraded_reason: "semantic unavailable", search_quality: { ...ok.search_quality, channels } });
  assert.deepEqual(warnings(degraded), [
    "Semantic search did not run — the question model could not be loaded (404). Answered with keyword search and code-graph search only.",
  ]);
  // the flag decides, not the statuses: a channel switched off is no warning
  const off = ok.search_quality.channels.map((c) => (c.name === "graph" ? { ...c, status: "off", detail: "switched off" } : c));
  assert.deepEqual(warnings(sampleResult({ search_quality: { ...ok.search_quality, channels: off } })), []);
  // degraded without a channel report to name: the core's reason
  assert.deepEqual(warnings({ degraded: true, degraded_reason: "semantic failed: boom" }), ["The search was degraded: semantic failed: boom."]);
});

test("sourcesView: every citation labelled path:start–end, the first few shown", () => {
  const view = sourcesView(sampleResult());
  assert.deepEqual(view.all[0], {
    url: "files/inventory/service.py.html#L40",
    label: "inventory/service.py:40–52",
    title: "InventoryService.remove_stock",
    tooltip: "inventory/service.py, lines 40–52",
  });
  assert.equal(view.shown, 3);
  assert.equal(view.more, 0);
  const many = Array.from({ length: SOURCES_SHOWN + 4 }, (_, i) => ({ path: "p.py", title: `t${i}`, start_line: i + 1, end_line: i + 1, url: `u${i}` }));
  const big = sourcesView({ citations: many });
  assert.equal(big.shown, SOURCES_SHOWN);
  assert.equal(big.more, 4);
  assert.deepEqual(sourcesView({}), { all: [], shown: 0, more: 0 });
});

test("snippetsView: each snippet captioned by the citation with its URL, in the snippets' order", () => {
  const view = snippetsView(sampleResult());
  assert.deepEqual(
    view.map((s) => [s.label, s.title, s.text]),
    [
      ["inventory/errors.py:8–12", "OutOfStockError", "class OutOfStockError(InventoryError):"],
      ["inventory/service.py:40–52", "InventoryService.remove_stock", "def remove_stock(self, sku, quantity):"],
    ],
  );
  const orphan = snippetsView({ citations: [], snippets: [{ path: "x.py", start_line: 3, url: "files/x.py.html#L3", text: "x = 1" }] });
  assert.deepEqual(orphan, [{ url: "files/x.py.html#L3", label: "x.py:3–3", title: "x.py", tooltip: "x.py, line 3", text: "x = 1" }]);
});

test("footerView: a chip per channel, the intent and time, how deep the search went", () => {
  const r = sampleResult({ browser_timings_ms: { query: 1234 } });
  r.search_quality.channels[2] = { name: "graph", status: "failed", found: 0, used: 0, detail: "KeyError: 'n9'" };
  const view = footerView(r, formatMs);
  assert.deepEqual(
    view.chips.map((c) => [c.text, c.status, c.tooltip]),
    [
      ["✓ lexical", "ran", "9 found, 4 used, 2 of the top files"],
      ["✓ semantic", "ran", "100 found, 5 used, 3 of the top files"],
      ["✕ graph", "failed", "KeyError: 'n9'"],
    ],
  );
  assert.equal(view.meta, "behaviour · 1.2 s");
  assert.equal(view.metaTooltip, "each channel ranked 100; graph expanded 1 hop (+3 nodes)");
  // the same words as the CLI's SearchQuality.summary() (tests/core/test_evidence.py)
  assert.equal(view.agreement, "top files found by 3/2/1/1/0 of 3 channels");
  assert.deepEqual(footerView({}, formatMs), { chips: [], agreement: "", meta: "", metaTooltip: "" });
});

test("reasonText: the item's reason in words", () => {
  assert.equal(reasonText("vector"), "found by semantic search");
  assert.equal(reasonText("vector+bm25+name"), "found by semantic search and keyword search and code-graph search (a name)");
  assert.equal(reasonText("graph:calls"), "connected through the code graph (calls)");
  assert.equal(reasonText("graph"), "connected through the code graph");
  assert.equal(reasonText("newchannel"), "found by newchannel");
  assert.equal(reasonText(""), "");
});

test("refinementNote: the full answer says whether it kept the first answer's lead", () => {
  const first = sampleResult();
  assert.equal(refinementNote(null, first), "");
  assert.match(refinementNote(first, sampleResult()), /kept the first answer's lead \(InventoryService\.remove_stock\)/);
  // the semantic channel moved another match first: both leads are named
  const full = sampleResult();
  full.answer.items = [full.answer.items[1], full.answer.items[0], full.answer.items[2]];
  const changed = refinementNote(first, full);
  assert.match(changed, /^Semantic search changed this answer: it now leads with inventory\/cli\.py, inventory\/cli\.py/);
  assert.match(changed, /first answer led with InventoryService\.remove_stock, inventory\/service\.py/);
  // a first answer with no match at all, then one with a match: a change, with nothing to name before
  const empty = sampleResult();
  empty.answer.items = [];
  assert.match(refinementNote(empty, first), /^Semantic search changed this answer: it now leads with InventoryService/);
  assert.equal(refinementNote(empty, empty), "");
});
