import assert from "node:assert/strict";
import { test } from "node:test";

import { compactResult, createHistory, createOpenFlag } from "../../site_template/static/ask/history.js";

// A Storage with a byte quota (like sessionStorage), or one that refuses everything (disabled storage).
function fakeStorage(quota = Infinity) {
  const data = new Map();
  return {
    data,
    getItem: (k) => (data.has(k) ? data.get(k) : null),
    setItem(k, v) {
      if (v.length > quota) throw new Error("QuotaExceededError");
      data.set(k, String(v));
    },
    removeItem: (k) => data.delete(k),
  };
}
const disabled = {
  getItem() {
    throw new Error("SecurityError");
  },
  setItem() {
    throw new Error("SecurityError");
  },
  removeItem() {
    throw new Error("SecurityError");
  },
};

test("history: push, read back, keep only the newest max entries", () => {
  const h = createHistory(fakeStorage(), { max: 3 });
  assert.deepEqual(h.read(), []);
  for (let i = 1; i <= 5; i++) h.push({ id: `q${i}` });
  assert.deepEqual(
    h.read().map((x) => x.id),
    ["q3", "q4", "q5"],
  );
  h.clear();
  assert.deepEqual(h.read(), []);
});

test("history: over quota the oldest entries go until the rest fits", () => {
  const storage = fakeStorage(120);
  const h = createHistory(storage);
  h.push({ id: "a", text: "x".repeat(50) });
  h.push({ id: "b", text: "y".repeat(50) });
  assert.deepEqual(
    h.read().map((x) => x.id),
    ["b"],
  );
  h.push({ id: "huge", text: "z".repeat(500) }); // nothing fits: the key is removed
  assert.deepEqual(h.read(), []);
  assert.equal(storage.data.size, 0);
});

test("history: update merges fields into a stored entry only", () => {
  const h = createHistory(fakeStorage());
  h.push({ id: "a", question: "q" });
  assert.equal(h.update("a", { svg: "<svg/>" }), true);
  assert.equal(h.update("gone", { svg: "x" }), false);
  assert.deepEqual(h.read(), [{ id: "a", question: "q", svg: "<svg/>" }]);
});

test("history: corrupt, non-array, missing or disabled storage reads as empty and never throws", () => {
  const s = fakeStorage();
  s.setItem("oya.ask.history", "{not json");
  assert.deepEqual(createHistory(s).read(), []);
  s.setItem("oya.ask.history", '{"a": 1}');
  assert.deepEqual(createHistory(s).read(), []);
  assert.deepEqual(createHistory(null).read(), []);
  const h = createHistory(disabled);
  assert.deepEqual(h.read(), []);
  assert.deepEqual(h.push({ id: "a" }), []);
});

test("open flag: stored as 1/0, false when unset or disabled", () => {
  const s = fakeStorage();
  const flag = createOpenFlag(s);
  assert.equal(flag.read(), false);
  flag.write(true);
  assert.equal(s.getItem("oya.ask.open"), "1");
  assert.equal(flag.read(), true);
  flag.write(false);
  assert.equal(flag.read(), false);
  const off = createOpenFlag(disabled);
  off.write(true);
  assert.equal(off.read(), false);
});

test("compactResult: hits become their ids, files go, the rest stays", () => {
  const r = { question: "q", hits: [{ chunk_id: "c1", score: 1 }, { chunk_id: "c2" }], files: [{ path: "a" }], answer: { items: [] } };
  assert.deepEqual(compactResult(r), { question: "q", answer: { items: [] }, hit_ids: ["c1", "c2"] });
  assert.deepEqual(compactResult({ question: "q" }).hit_ids, []);
});

test("history: with later(), a push is written when flushed; read, update and clear see it before", () => {
  const storage = fakeStorage();
  const waiting = [];
  const h = createHistory(storage, { max: 3, later: (fn) => waiting.push(fn) });
  h.push({ id: "q1" });
  h.push({ id: "q2" });
  assert.equal(storage.data.size, 0, "nothing written before the page is idle");
  assert.equal(waiting.length, 1, "one write scheduled for both");
  assert.deepEqual(h.read().map((x) => x.id), ["q1", "q2"]);
  assert.equal(h.update("q2", { svg: "<svg/>" }), true); // writes what was waiting, then the field
  assert.deepEqual(JSON.parse(storage.data.get("oya.ask.history")), [{ id: "q1" }, { id: "q2", svg: "<svg/>" }]);
  h.push({ id: "q3" });
  h.clear(); // "Forget this session's questions": the waiting one too
  waiting.forEach((fn) => fn());
  assert.deepEqual(h.read(), []);
  assert.deepEqual(JSON.parse(storage.data.get("oya.ask.history") || "[]"), []);
  h.push({ id: "q4" });
  h.flush(); // the page is hidden before it was idle
  assert.deepEqual(JSON.parse(storage.data.get("oya.ask.history")).map((x) => x.id), ["q4"]);
});

