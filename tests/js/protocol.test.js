import assert from "node:assert/strict";
import { test } from "node:test";

import { assetPath, createClient, serve, shardFiles, shipsModel, wheelUrl } from "../../site_template/static/ask/protocol.js";

function channel(handlers) {
  const { port1, port2 } = new MessageChannel();
  serve(port2, handlers);
  return { port1, port2, close: () => (port1.close(), port2.close()) };
}

test("a call reaches its handler and its value comes back; errors come back as errors", async () => {
  const ch = channel({
    add: ({ a, b }) => a + b,
    later: async (x) => new Promise((resolve) => setTimeout(() => resolve(x * 2), 5)),
    broken: () => {
      throw new Error("no such chunk");
    },
  });
  const client = createClient(ch.port1);
  try {
    // answers are matched by id, not by order
    const [slow, fast] = await Promise.all([client.call("later", 21), client.call("add", { a: 1, b: 2 })]);
    assert.equal(slow, 42);
    assert.equal(fast, 3);
    await assert.rejects(client.call("broken"), /no such chunk/);
    await assert.rejects(client.call("nope"), /unknown engine operation nope/);
    await assert.rejects(client.call("toString"), /unknown engine operation toString/);
  } finally {
    ch.close();
  }
});

test("ArrayBuffers are transferred, not copied", async () => {
  const ch = channel({ size: ({ buf }) => buf.byteLength });
  const client = createClient(ch.port1);
  try {
    const buf = new ArrayBuffer(16);
    assert.equal(await client.call("size", { buf }, [buf]), 16);
    assert.equal(buf.byteLength, 0); // detached on this side
  } finally {
    ch.close();
  }
});

test("marks are forwarded to onMark, with their detail, and answer no call", async () => {
  const { port1, port2 } = new MessageChannel();
  const marks = [];
  const client = createClient(port1, { onMark: (name, at, detail) => marks.push([name, at, detail]) });
  serve(port2, { ping: () => "pong" });
  try {
    port2.postMessage({ mark: "core-ready", at: 123 });
    port2.postMessage({ mark: "brotli pyodide.asm.wasm", at: 124, detail: { ms: 95, bytes: 9598218 } });
    assert.equal(await client.call("ping"), "pong");
    assert.deepEqual(marks, [
      ["core-ready", 123, null],
      ["brotli pyodide.asm.wasm", 124, { ms: 95, bytes: 9598218 }],
    ]);
  } finally {
    port1.close();
    port2.close();
  }
});

test("a failed worker rejects pending and later calls with one error and is terminated", async () => {
  const listeners = {};
  let terminated = 0;
  const fakeWorker = {
    addEventListener: (type, fn) => (listeners[type] = fn),
    postMessage() {},
    terminate: () => (terminated += 1),
  };
  const client = createClient(fakeWorker);
  const pending = client.call("boot", {});
  listeners.error({ message: "SyntaxError in pyodide_worker.js", preventDefault() {} });
  await assert.rejects(pending, /the Python worker failed \(SyntaxError in pyodide_worker.js\)/);
  await assert.rejects(client.call("ask", {}), /the Python worker failed/);
  client.fail(new Error("again"));
  assert.equal(terminated, 1);
  assert.match(client.failure.message, /SyntaxError/);
});

test("manifest: the wheel under vendor/ unless a path, the model flag", () => {
  assert.equal(wheelUrl({ wheel: "oya_core-1-py3-none-any.whl" }), "vendor/oya_core-1-py3-none-any.whl");
  assert.equal(wheelUrl({ wheel: "wheels/x.whl" }), "wheels/x.whl");
  assert.throws(() => wheelUrl({}), /names no core wheel/);
  assert.equal(shipsModel({ model: "all-MiniLM-L6-v2" }), true);
  assert.equal(shipsModel({ model: null }), false);
  assert.equal(shipsModel({ model: false }), false);
});

test("manifest: the bundle's shards, under the bundle's folder, an error without them; the vectors shard is not prefetched", () => {
  const shards = { path: "shards/", manifest: "manifest-0123456789abcdef.json.gz", graph: "graph-0123456789abcdef.json.gz" };
  assert.deepEqual(shardFiles({ bundle: { path: "bundle.77aa/", shards: { ...shards, vectors: "vectors-0123456789abcdef.bin.gz" } } }), {
    dir: "bundle.77aa/shards/",
    manifest: shards.manifest,
    prefetch: [shards.manifest, shards.graph], // the first answer does without the vectors
    vectors: "vectors-0123456789abcdef.bin.gz",
  });
  assert.deepEqual(shardFiles({ bundle: { shards: { ...shards, path: "s", vectors: null } } }), {
    dir: "bundle/s/",
    manifest: shards.manifest,
    prefetch: [shards.manifest, shards.graph],
    vectors: null,
  });
  assert.throws(() => shardFiles({ bundle: { index: "index.json.gz" } }), /index bundle has no shards .*rebuild the site/);
  assert.throws(() => shardFiles({ bundle: null }), /built without an index bundle/);
});

test("assetPath: the longest renamed folder or file of manifest.assets applies; other names stay", () => {
  const manifest = { assets: { "vendor/pyodide/": "vendor/pyodide.ab/", "vendor/pyodide/x/": "vendor/x.cd/", "vendor/w.whl": "vendor/w.ef.whl" } };
  assert.equal(assetPath(manifest, "vendor/pyodide/pyodide.mjs"), "vendor/pyodide.ab/pyodide.mjs");
  assert.equal(assetPath(manifest, "vendor/pyodide/x/y.js"), "vendor/x.cd/y.js");
  assert.equal(assetPath(manifest, "vendor/w.whl"), "vendor/w.ef.whl");
  assert.equal(assetPath(manifest, "vendor/w.whl2"), "vendor/w.whl2");
  assert.equal(assetPath(manifest, "vendor/pyodide-2/a"), "vendor/pyodide-2/a");
  assert.equal(assetPath({}, "vendor/pyodide/"), "vendor/pyodide/");
});
