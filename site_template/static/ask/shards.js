// The sharded bundle, worker side (format and reader: oya/core/shards.py). The core opens the bundle
// over a fetcher that reads a JS map of shard bytes and, for a name the map lacks, raises
// ShardsMissing; ask_json then answers {"missing": [names]}. This module holds that map and the loop:
// call the core, fetch every name it lacks in parallel (one round trip for all of a stage's shards),
// call it again. Retrieval is deterministic, so the last call answers as an uninterrupted run; a
// question costs a few rounds (the question's term buckets, the candidate pool's chunks, the
// connected chunks), each shard is fetched once per page.
//
// Rules: only names of the shard form are fetched, as URLs relative to the shards' folder (never
// another path); bytes are kept as stored (gzipped: the core checks them against the hash in their
// name); a call that asks again for a shard it was given, or that needs more than MAX_ROUNDS rounds,
// is an error rather than a loop. Pure apart from the injected fetch (tests/js/shards.test.js).

export const MAX_ROUNDS = 8;
const SHARD_NAME = /^(manifest|terms|chunks|graph|nodes|vectors)-[0-9a-f]{16}\.(json|bin)\.gz$/;

export function isShardName(name) {
  return typeof name === "string" && SHARD_NAME.test(name);
}

// dir: the shards' folder as an absolute URL ending in "/".
export function createShardStore(dir, fetchFn = (url) => fetch(url)) {
  const bytes = new Map();
  const pending = new Map();

  async function fetchOne(name) {
    if (!isShardName(name)) throw new Error(`not a shard name: ${String(name).slice(0, 80)}`);
    const url = new URL(name, dir).href;
    let response;
    try {
      response = await fetchFn(url);
    } catch (err) {
      throw new Error(`Could not fetch the index shard ${url}: ${err.message}`);
    }
    if (!response.ok) throw new Error(`Could not fetch the index shard ${url}: HTTP ${response.status}`);
    // as stored (gzipped), or inflated by a host that labels .gz files Content-Encoding: gzip: the
    // core inflates what is gzipped and checks the name's hash on the inflated bytes either way
    return new Uint8Array(await response.arrayBuffer());
  }

  // Fetch every name not held yet, all at once; a name already on its way is awaited, not fetched again.
  async function fetchAll(names) {
    await Promise.all(
      names.map((name) => {
        if (bytes.has(name)) return null;
        if (!pending.has(name)) {
          const p = fetchOne(name)
            .then((data) => void bytes.set(name, data))
            .finally(() => pending.delete(name));
          pending.set(name, p);
        }
        return pending.get(name);
      }),
    );
  }

  return {
    fetchAll,
    has: (name) => bytes.has(name),
    // what the core's fetcher reads: the stored bytes, or undefined (None in Python: ShardsMissing)
    get: (name) => bytes.get(name),
    get count() {
      return bytes.size;
    },
  };
}

// The names of a {"missing": [...]} answer, or null for any other answer (an answer is a JSON string).
export function missingShards(out) {
  if (typeof out !== "string" || !out.startsWith('{"missing":')) return null;
  const doc = JSON.parse(out);
  const keys = Object.keys(doc);
  return keys.length === 1 && Array.isArray(doc.missing) ? doc.missing.map(String) : null;
}

// call(): the core's answer as a JSON string (ask_json, or a call wrapped the same way). Returns the
// first answer that is not {"missing"}, and how many rounds of fetching it took. whileFetching(), if
// given, runs while each round's shards are on the way (work the core will need, done during the
// wait instead of after it: the worker builds the graph's name index there).
export async function untilFetched(store, call, { maxRounds = MAX_ROUNDS, whileFetching = null } = {}) {
  for (let rounds = 0; ; rounds++) {
    const out = call();
    const missing = missingShards(out);
    if (!missing) return { out, rounds };
    const held = missing.filter((name) => store.has(name));
    if (held.length) throw new Error(`the core asked again for index shards it was given: ${held.slice(0, 3).join(", ")}`);
    if (rounds >= maxRounds) throw new Error(`the question still lacked index shards after ${maxRounds} rounds`);
    const fetching = store.fetchAll(missing);
    if (whileFetching) whileFetching();
    await fetching;
  }
}
