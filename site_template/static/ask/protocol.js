// The engine's message protocol between the page and its worker (pyodide_worker.js), and what the
// page reads from manifest.json. No DOM, no globals: the port is passed in (tests/js/protocol.test.js
// runs both ends over a MessageChannel).
//
// The page posts {id, op, args}; the worker answers {id, ok: true, value} or {id, ok: false, error},
// and posts {mark: name, at: epoch ms, detail} for the cold-start profile. A worker that fails (cannot load,
// sends an unreadable message) rejects every pending and later call with that one error.

// The page's end. `port`: a Worker (or MessagePort) — postMessage, addEventListener, and terminate
// if it has one. `onMark(name, at, detail)` receives the worker's performance marks.
export function createClient(port, { onMark = () => {} } = {}) {
  const pending = new Map();
  let next = 1;
  let failure = null;

  function fail(err) {
    if (failure) return;
    failure = err;
    for (const call of pending.values()) call.reject(err);
    pending.clear();
    port.terminate?.();
  }

  port.addEventListener("message", (event) => {
    const data = event.data || {};
    if (data.mark) {
      onMark(data.mark, data.at, data.detail ?? null);
      return;
    }
    const call = pending.get(data.id);
    if (!call) return;
    pending.delete(data.id);
    if (data.ok) call.resolve(data.value);
    else call.reject(new Error(data.error));
  });
  port.addEventListener("error", (event) => {
    event.preventDefault?.();
    fail(new Error(`the Python worker failed (${event.message || "it could not be loaded"})`));
  });
  port.addEventListener("messageerror", () => fail(new Error("the Python worker sent an unreadable message")));
  port.start?.();

  return {
    call(op, args, transfer = []) {
      if (failure) return Promise.reject(failure);
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        port.postMessage({ id, op, args }, transfer);
      });
    },
    fail,
    get failure() {
      return failure;
    },
  };
}

// The worker's end: `handlers[op](args)` may return a value or a promise; calls are answered as they settle.
export function serve(port, handlers) {
  port.addEventListener("message", async (event) => {
    const { id, op, args } = event.data || {};
    if (id === undefined) return;
    try {
      const handler = Object.hasOwn(handlers, op) ? handlers[op] : null;
      if (!handler) throw new Error(`unknown engine operation ${op}`);
      const value = await handler(args);
      port.postMessage({ id, ok: true, value });
    } catch (err) {
      port.postMessage({ id, ok: false, error: err && err.message ? err.message : String(err) });
    }
  });
  port.start?.();
}

// Where a file of the built site is now: manifest.assets maps names to content-hashed ones
// (oya/site/assets.py; a folder's name ends in "/" and covers its files). Unlisted names stay.
export function assetPath(manifest, rel) {
  const assets = manifest.assets || {};
  let best = "";
  for (const old of Object.keys(assets)) {
    const covers = rel === old || (old.endsWith("/") && rel.startsWith(old));
    if (covers && old.length > best.length) best = old;
  }
  return best ? assets[best] + rel.slice(best.length) : rel;
}

// What manifest.json names: the core wheel's URL (under the site) and the bundle's shards.
export function wheelUrl(manifest) {
  const wheel = manifest.wheel;
  if (!wheel) throw new Error("manifest.json names no core wheel (key 'wheel')");
  return wheel.includes("/") ? wheel : "vendor/" + wheel;
}

function bundleDir(manifest) {
  const bundle = manifest.bundle;
  if (!bundle) throw new Error("this site was built without an index bundle (manifest.json: bundle is null)");
  return (bundle.path || bundle.dir || "bundle/").replace(/\/?$/, "/");
}

// The bundle's shards (oya/site/shards.py): their folder (under the site), the shard manifest's name,
// and what to fetch at once (manifest, graph: every question reads them). vectors: the vectors
// shard's name (the JS kernel's file), or null; not prefetched, since only the semantic channel
// reads it and the first answer does without (the "vectors" op). The bundle folder holds nothing else.
export function shardFiles(manifest) {
  const bundle = bundleDir(manifest);
  const shards = manifest.bundle.shards;
  if (!shards || !shards.manifest) throw new Error("this site's index bundle has no shards (manifest.json: bundle.shards); rebuild the site");
  const dir = bundle + (shards.path || "shards/").replace(/\/?$/, "/");
  const vectors = shards.vectors || null;
  return { dir, manifest: shards.manifest, prefetch: [shards.manifest, shards.graph].filter(Boolean), vectors };
}

// The site paths of the runtimes (folders ending in "/") and the query model (a folder, no slash).
export function runtimePaths(manifest) {
  return {
    pyodide: assetPath(manifest, "vendor/pyodide/"),
    brotli: assetPath(manifest, "vendor/brotli/"),
    transformers: assetPath(manifest, "vendor/transformers/"),
    model: manifest.model || null,
  };
}

// The manifest's `model`: null or false means the site ships no query model.
export function shipsModel(manifest) {
  return manifest.model !== null && manifest.model !== false;
}
