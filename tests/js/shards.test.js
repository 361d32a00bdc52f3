import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

import { createShardStore, isShardName, missingShards, untilFetched } from "../../site_template/static/ask/shards.js";

const DIR = "http://site.test/sub/bundle.77aa/shards/";
const T1 = "terms-0123456789abcdef.json.gz";
const T2 = "terms-fedcba9876543210.json.gz";
const C1 = "chunks-00000000000000aa.json.gz";

// A folder of shards over a fake fetch (gzipped bodies); records every URL, answers after a tick.
function fakeShards(names, { plain = new Set() } = {}) {
  const requested = [];
  const fetchFn = async (url) => {
    requested.push(url);
    await new Promise((resolve) => setTimeout(resolve, 1));
    const name = url.slice(DIR.length);
    if (!url.startsWith(DIR) || !names.includes(name)) return new Response("missing", { status: 404 });
    return new Response(plain.has(name) ? new TextEncoder().encode(name) : new Uint8Array(gzipSync(Buffer.from(name))));
  };
  return { fetchFn, requested };
}

// A core that needs `stages` of shards in turn, like ask_json over a sharded bundle: it answers
// {"missing": [...]} for the first stage it lacks, then its answer; it reads the store's bytes.
function fakeCore(store, stages) {
  const calls = [];
  const call = () => {
    calls.push(store.count);
    for (const names of stages) {
      const missing = names.filter((n) => store.get(n) === undefined);
      if (missing.length) return JSON.stringify({ missing });
    }
    return JSON.stringify({ hits: stages.flat().map((n) => [n, store.get(n)[0]]) });
  };
  return { call, calls };
}

test("a question's shards are fetched a stage at a time, in parallel, under the shards' folder", async () => {
  const site = fakeShards([T1, T2, C1]);
  const store = createShardStore(DIR, site.fetchFn);
  const core = fakeCore(store, [[T1, T2], [C1]]);
  const { out, rounds } = await untilFetched(store, core.call);
  assert.equal(rounds, 2);
  assert.deepEqual(JSON.parse(out), { hits: [[T1, 0x1f], [T2, 0x1f], [C1, 0x1f]] }); // kept gzipped
  assert.deepEqual(site.requested, [DIR + T1, DIR + T2, DIR + C1]);
  assert.deepEqual(core.calls, [0, 2, 3]);
  // asked again: nothing fetched, no round
  assert.deepEqual(await untilFetched(store, core.call), { out, rounds: 0 });
  assert.equal(site.requested.length, 3);
});

test("whileFetching runs in each round while its shards are still on the way", async () => {
  const site = fakeShards([T1, T2, C1]);
  const store = createShardStore(DIR, site.fetchFn);
  const core = fakeCore(store, [[T1, T2], [C1]]);
  const seen = [];
  const whileFetching = () => seen.push([site.requested.length, store.count]);
  const { rounds } = await untilFetched(store, core.call, { whileFetching });
  assert.equal(rounds, 2);
  assert.deepEqual(seen, [[2, 0], [3, 2]]); // requested, none of the round's bytes in yet
});

test("a shard asked for twice at once is fetched once", async () => {
  const site = fakeShards([T1, T2]);
  const store = createShardStore(DIR, site.fetchFn);
  await Promise.all([store.fetchAll([T1, T2]), store.fetchAll([T2]), store.fetchAll([T1])]);
  assert.deepEqual(site.requested.sort(), [DIR + T1, DIR + T2].sort());
});

test("only shard names are fetched: no other path, no escape from the folder", async () => {
  assert.equal(isShardName(T1), true);
  for (const bad of ["../index.json.gz", "terms-0123.json.gz", "x/" + T1, "https://evil.test/" + T1, T1 + "?x", 7]) {
    assert.equal(isShardName(bad), false, String(bad));
  }
  const site = fakeShards([T1]);
  const store = createShardStore(DIR, site.fetchFn);
  await assert.rejects(store.fetchAll(["../index.json.gz"]), /not a shard name/);
  await assert.rejects(untilFetched(store, () => JSON.stringify({ missing: ["https://evil.test/x"] })), /not a shard name/);
  assert.deepEqual(site.requested, []);
});

test("a missing shard, a core that asks again: errors, not loops; an inflated one is kept", async () => {
  const site = fakeShards([T1, T2], { plain: new Set([T2]) });
  const store = createShardStore(DIR, site.fetchFn);
  await assert.rejects(store.fetchAll([C1]), /Could not fetch the index shard .*chunks-00000000000000aa.json.gz: HTTP 404/);
  // a host that sends .gz files with Content-Encoding: gzip: the bytes arrive inflated, the core checks them
  await store.fetchAll([T2]);
  assert.equal(store.has(T2), true);
  await store.fetchAll([T1]);
  await assert.rejects(untilFetched(store, () => JSON.stringify({ missing: [T1] })), /asked again for index shards it was given: terms-0123/);
  const endless = createShardStore(DIR, async () => new Response(new Uint8Array(gzipSync(Buffer.from("x")))));
  let n = 0;
  const next = () => JSON.stringify({ missing: [`terms-${String(n++).padStart(16, "0")}.json.gz`] });
  await assert.rejects(untilFetched(endless, next, { maxRounds: 3 }), /after 3 rounds/);
});

test("missingShards: only the core's {missing} answer, never an answer that mentions it", () => {
  assert.deepEqual(missingShards('{"missing": ["a", "b"]}'), ["a", "b"]);
  assert.equal(missingShards('{"missing": ["a"], "hits": []}'), null);
  assert.equal(missingShards('{"hits": [], "missing": ["a"]}'), null);
  assert.equal(missingShards('{"missing": "a"}'), null);
  assert.equal(missingShards(null), null);
});
