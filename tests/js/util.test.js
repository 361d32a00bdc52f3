import assert from "node:assert/strict";
import { test } from "node:test";

import {
  absoluteBase,
  codePoints,
  codeSpans,
  cutQuestion,
  entryId,
  formatMs,
  hiddenRuns,
  markTimes,
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

test("cutQuestion: past the limit the first part and the CLI's line; up to it the question as it is", () => {
  const atLimit = ` ${"x".repeat(MAX_QUESTION_CHARS)}\n`; // blanks around it do not count
  assert.deepEqual(cutQuestion(atLimit), { text: atLimit, note: null });
  const long = cutQuestion("  " + "y".repeat(60000));
  assert.equal(long.text, "y".repeat(MAX_QUESTION_CHARS));
  assert.equal(long.note, "The question is 60,000 characters long; only the first 20,000 were read.");
  assert.deepEqual(cutQuestion("abcd", 3), { text: "abc", note: "The question is 4 characters long; only the first 3 were read." });
  // never half a surrogate pair: "😀" is two UTF-16 units
  assert.equal(cutQuestion("ab😀cd", 3).text, "ab");
  assert.equal(cutQuestion("ab cd", 3).text, "ab"); // nor a trailing blank
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
