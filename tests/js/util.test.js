import assert from "node:assert/strict";
import { test } from "node:test";

import {
  absoluteBase,
  codePoints,
  codeSpans,
  capQuestion,
  entryId,
  firstPart,
  formatMs,
  hiddenRuns,
  markTimes,
  MAX_PASTE_CHARS,
  MAX_QUESTION_CHARS,
  visibleText,
} from "../../site_template/static/ask/util.js";

test("formatMs: milliseconds below a second, seconds with one decimal above", () => {
  assert.equal(formatMs(0), "0 ms");
  assert.equal(formatMs(12.6), "13 ms");
  assert.equal(formatMs(999.4), "999 ms");
  assert.equal(formatMs(1000), "1.0 s");
  assert.equal(formatMs(12345), "12.3 s");
});

test("codeSpans: backtick spans become code pieces, empty pieces vanish", () => {
  assert.deepEqual(codeSpans("call `f(x)` then `g`"), [
    { code: false, text: "call " },
    { code: true, text: "f(x)" },
    { code: false, text: " then " },
    { code: true, text: "g" },
  ]);
  assert.deepEqual(codeSpans("`only`"), [{ code: true, text: "only" }]);
  assert.deepEqual(codeSpans("Take ``count`` units"), [
    { code: false, text: "Take " },
    { code: true, text: "count" },
    { code: false, text: " units" },
  ]);
  assert.deepEqual(codeSpans("no code"), [{ code: false, text: "no code" }]);
  // an unmatched backtick opens a code piece to the end, as the old renderer did
  assert.deepEqual(codeSpans("a `b"), [
    { code: false, text: "a " },
    { code: true, text: "b" },
  ]);
});

test("capQuestion: a paste is kept whole up to MAX_PASTE_CHARS (the core condenses past its own limit), then its first part", () => {
  assert.ok(MAX_PASTE_CHARS >= 50 * MAX_QUESTION_CHARS); // a long report reaches the core whole
  const report = "  " + "y".repeat(60000) + "\n";
  assert.deepEqual(capQuestion(report), { text: "y".repeat(60000), more: false }); // was cut at 20,000
  const atCap = ` ${"x".repeat(MAX_PASTE_CHARS)}\n`; // blanks around it do not count
  assert.deepEqual(capQuestion(atCap), { text: "x".repeat(MAX_PASTE_CHARS), more: false });
  const over = capQuestion("z".repeat(MAX_PASTE_CHARS + 1));
  assert.equal(over.text.length, MAX_PASTE_CHARS);
  assert.equal(over.more, true);
  assert.deepEqual(capQuestion("abcd", 3), { text: "abc", more: true });
  // never half a surrogate pair ("😀" is two UTF-16 units), nor a trailing blank
  assert.equal(capQuestion("ab😀cd", 3).text, "ab");
  assert.equal(capQuestion("ab cd", 3).text, "ab");
  assert.equal(firstPart("ab😀cd", 4), "ab😀");
});

test("entryId: time in base 36, then four random characters", () => {
  const id = entryId(36 ** 3, () => 0.123456789);
  assert.equal(id.slice(0, 4), "1000");
  assert.equal(id, "1000" + (0.123456789).toString(36).slice(2, 6));
  assert.notEqual(entryId(1, () => 0.1), entryId(1, () => 0.2));
});

test("markTimes: oya marks only, first of each name, relative to the warm-up, in time order", () => {
  const entries = [
    { name: "oya:engine-ready", startTime: 900 },
    { name: "other", startTime: 5 },
    { name: "oya:warmup", startTime: 100 },
    { name: "oya:manifest", startTime: 150.4 },
    { name: "oya:manifest", startTime: 700 },
  ];
  assert.deepEqual(markTimes(entries), [
    ["warmup", 0],
    ["manifest", 50],
    ["engine-ready", 800],
  ]);
  assert.deepEqual(markTimes([{ name: "oya:x", startTime: 7 }]), [["x", 7]]);
});

test("absoluteBase: a folder URL ending in a slash", () => {
  assert.equal(absoluteBase("site", "http://h/a/b.html"), "http://h/a/site/");
  assert.equal(absoluteBase("../", "http://h/a/b/c.html"), "http://h/a/");
  assert.equal(absoluteBase("http://x/y/", undefined), "http://x/y/");
});

test("hiddenRuns: bidi, zero-width and tag characters in runs of their own; the text comes back whole", () => {
  const text = "is\u200badmin \u202e\u2066x\u{e0041}";
  const runs = hiddenRuns(text);
  assert.deepEqual(runs, [
    { hidden: false, text: "is" },
    { hidden: true, text: "\u200b" },
    { hidden: false, text: "admin " },
    { hidden: true, text: "\u202e\u2066" },
    { hidden: false, text: "x" },
    { hidden: true, text: "\u{e0041}" },
  ]);
  assert.equal(runs.map((r) => r.text).join(""), text);
  assert.deepEqual(hiddenRuns(""), []);
  assert.deepEqual(hiddenRuns("plain"), [{ hidden: false, text: "plain" }]);
});

test("hiddenRuns: a joiner between visible non-ASCII characters stays; beside ASCII or an edge it is shown", () => {
  for (const ordinary of ["👩\u200d💻", "می\u200cخواهم", "⚠\ufe0f"]) assert.deepEqual(hiddenRuns(ordinary), [{ hidden: false, text: ordinary }]);
  assert.equal(visibleText("a\u200db \u200d"), "a[U+200D]b [U+200D]");
});

test("visibleText and codePoints: a stand-in per run, four code points then how many more", () => {
  assert.equal(visibleText("a\u202eb"), "a[U+202E]b");
  assert.equal(codePoints("\u{e0068}\u{e0069}\u{e0020}\u{e0074}\u{e0065}\u{e0073}"), "U+E0068 U+E0069 U+E0020 U+E0074 +2");
  assert.equal(visibleText(42), "42");
});
