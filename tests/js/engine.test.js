import assert from "node:assert/strict";
import { test } from "node:test";

import { createEngine } from "../../site_template/static/ask/engine.js";
import { serve } from "../../site_template/static/ask/protocol.js";
import { MAX_QUESTION_CHARS } from "../../site_template/static/ask/util.js";

const BASE = "http://site.test/";
const SHARDS = {
  path: "shards/",
  manifest: "manifest-0123456789abcdef.json.gz",
  graph: "graph-0123456789abcdef.json.gz",
  vectors: "vectors-0123456789abcdef.bin.gz",
};
const MANIFEST = { wheel: "oya_core.whl", model: "all-MiniLM-L6-v2", bundle: { path: "bundle/", index: "index.json.gz", shards: SHARDS } };

// A site over a fake fetch: path -> body (object: JSON; Uint8Array: bytes); records every request.
// encoding: the Content-Encoding the host labels its answers with (as if it had decoded them).
function fakeSite(files, { failFirst = new Set(), encoding = null } = {}) {
  const requested = [];
  const fetchFn = async (url) => {
    const path = url.slice(BASE.length);
    requested.push(path);
    if (failFirst.delete(path)) throw new TypeError("Failed to fetch");
    if (!(path in files)) return new Response("missing", { status: 404 });
    const body = files[path];
    const headers = encoding ? { "Content-Encoding": encoding } : {};
    return new Response(body instanceof Uint8Array ? body : JSON.stringify(body), { headers });
  };
  return { fetchFn, requested };
}

// The worker, deterministic: it records what it was given and answers like the core's ask_json.
// vectors(): the "vectors" op's answer (a promise: the vectors shard still on its way).
function fakeWorker(log, { vectors = async () => ({ vectors: 2 }) } = {}) {
  const ports = [];
  const makeWorker = (url) => {
    log.push(["worker", url]);
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    serve(port2, {
      boot: (args) => (log.push(["boot", args]), true),
      shards: (args) => (log.push(["shards", args]), { chunks: 1234, vectors: 0, rounds: 1 }),
      vectors: () => (log.push(["vectors"]), vectors()),
      // the core condenses a long report (oya.core.report); here: its last 40 characters, and a line
      condense: ({ question, more }) => {
        log.push(["condense", question.length, more]);
        return { text: question.slice(-40), note: `condensed ${question.length}${more ? "+" : ""}` };
      },
      ask: (request) => {
        log.push(["ask", request]);
        const ranked = request.vector ? [["c1", 0.9]] : null;
        const result = { question: request.question, semantic_reason: request.semantic_reason, options: request.options };
        return { result: JSON.stringify(result), ranked, timings: { python: 5, ...(ranked ? { vectors: 1 } : {}) } };
      },
    });
    return port1;
  };
  return { makeWorker, close: () => ports.forEach((p) => p.close()) };
}

const fakeModel = (log) => async (url) => {
  log.push(["import", url]);
  return { loadEmbedder: async (base, paths) => log.push(["loadEmbedder", base, paths]), embed: async (text) => Float32Array.from([text.length, 0.5]) };
};

// The page fetches only manifest.json: the worker fetches the shards (the fake one fetches nothing).
function siteFiles(manifest = MANIFEST) {
  return { "manifest.json": manifest };
}

test("nothing loads until asked; a question goes through the model, the worker and back", async () => {
  const log = [];
  const site = fakeSite(siteFiles());
  const worker = fakeWorker(log);
  let changes = 0;
  const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log), onProgress: () => changes++ });
  try {
    assert.deepEqual(site.requested, []);
    assert.equal(engine.isReady(), false);
    const run = await engine.ask("where?", { k: 5 });
    assert.deepEqual(site.requested, ["manifest.json"]);
    assert.deepEqual(log[0], ["worker", BASE + "static/pyodide_worker.js"]);
    // a host that sent manifest.json as it is: the runtime's gzip copies (ask/decoded.js)
    assert.deepEqual(log.find((e) => e[0] === "boot")[1], {
      base: BASE,
      wheelUrl: "vendor/oya_core.whl",
      runtime: "vendor/pyodide/",
      copies: "gz",
      brotli: "vendor/brotli/",
    });
    assert.equal(log.find((e) => e[0] === "shards")[1].dir, BASE + "bundle/shards/");
    assert.deepEqual(log.find((e) => e[0] === "import"), ["import", BASE + "static/embed.js"]);
    const request = log.find((e) => e[0] === "ask")[1];
    assert.deepEqual(request, { question: "where?", options: { k: 5 }, vector: [6, 0.5], semantic_reason: null });
    assert.deepEqual(run.result.question, "where?");
    assert.deepEqual(run.ranked, [["c1", 0.9]]);
    assert.deepEqual(Array.from(run.vector), [6, 0.5]);
    const t = run.result.browser_timings_ms;
    assert.deepEqual(Object.keys(t).sort(), ["embed", "python", "query", "total", "vectors"]);
    assert.equal(engine.isReady(), true);
    const steps = Object.fromEntries([...engine.progress()].map(([k, v]) => [k, [v.state, v.label]]));
    assert.deepEqual(steps, {
      runtime: ["done", "Python runtime ready"],
      bundle: ["done", "Index ready (1,234 chunks)"],
      model: ["done", "Model ready"],
      vectors: ["done", "Index vectors ready"],
    });
    assert.ok(changes >= 6);
    // a second question reuses everything
    await engine.ask("again?");
    assert.equal(site.requested.length, 1);
    assert.equal(log.filter((e) => e[0] === "worker").length, 1);
  } finally {
    worker.close();
  }
});

test("a site without a model answers with the semantic channel's reason", async () => {
  const log = [];
  const site = fakeSite(siteFiles({ ...MANIFEST, model: null }));
  const worker = fakeWorker(log);
  const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    const run = await engine.ask("where?");
    assert.equal(run.vector, null);
    assert.equal(run.result.semantic_reason, "the question model could not be loaded (this site ships no query model)");
    assert.equal(log.filter((e) => e[0] === "import").length, 0);
    const model = engine.progress().get("model");
    assert.equal(model.state, "warn");
    assert.match(model.label, /keyword and code-graph search only/);
  } finally {
    worker.close();
  }
});

test("a failed start is reported, warm-ups do not retry it, the next question does", async () => {
  const log = [];
  const site = fakeSite(siteFiles(), { failFirst: new Set(["manifest.json"]) });
  const worker = fakeWorker(log);
  const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    await assert.rejects(engine.ask("first"), /Could not fetch the site manifest \(http:\/\/site.test\/manifest.json\): Failed to fetch/);
    const runtime = engine.progress().get("runtime");
    assert.equal(runtime.state, "fail");
    assert.match(runtime.detail, /Failed to fetch/);
    const before = site.requested.length;
    engine.warmUp();
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(site.requested.length, before); // focus and typing do not hammer a broken site
    const run = await engine.ask("second");
    assert.equal(run.result.question, "second");
    assert.equal(log.filter((e) => e[0] === "worker").length, 2); // the failed worker was dropped
  } finally {
    worker.close();
  }
});

test("a site without shards or without a bundle: the question fails with the reason, the panel step says it", async () => {
  const log = [];
  const worker = fakeWorker(log);
  try {
    for (const [bundle, reason] of [
      [{ index: "index.json.gz", vectors: "vectors.bin.gz" }, /index bundle has no shards/],
      [null, /built without an index bundle/],
    ]) {
      const site = fakeSite(siteFiles({ ...MANIFEST, bundle }));
      const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
      await assert.rejects(engine.ask("q"), reason);
      assert.deepEqual(site.requested, ["manifest.json"]); // no whole index.json.gz
      const step = engine.progress().get("runtime");
      assert.equal(step.state, "fail");
      assert.match(step.detail, reason);
    }
    assert.equal(log.filter((e) => e[0] === "shards" || e[0] === "ask").length, 0);
  } finally {
    worker.close();
  }
});

test("a built site's content-hashed folders reach the worker and the model loader", async () => {
  const log = [];
  const manifest = {
    wheel: "vendor/oya_core.1a2b.whl",
    model: "models/all-MiniLM-L6-v2.9f8e",
    bundle: { path: "bundle.77aa/", index: "index.json.gz", shards: SHARDS },
    assets: {
      "vendor/pyodide/": "vendor/pyodide.0c0c/",
      "vendor/brotli/": "vendor/brotli.b7b7/",
      "vendor/transformers/": "vendor/transformers.5d5d/",
      "bundle/": "bundle.77aa/",
    },
  };
  const site = fakeSite(siteFiles(manifest));
  const worker = fakeWorker(log);
  const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    await engine.ask("where?");
    assert.deepEqual(site.requested, ["manifest.json"]);
    assert.equal(log.find((e) => e[0] === "shards")[1].dir, BASE + "bundle.77aa/shards/");
    assert.deepEqual(log.find((e) => e[0] === "boot")[1], {
      base: BASE,
      wheelUrl: "vendor/oya_core.1a2b.whl",
      runtime: "vendor/pyodide.0c0c/",
      copies: "gz",
      brotli: "vendor/brotli.b7b7/",
    });
    assert.deepEqual(log.find((e) => e[0] === "loadEmbedder"), [
      "loadEmbedder",
      BASE,
      { vendor: "vendor/transformers.5d5d/", model: "models/all-MiniLM-L6-v2.9f8e", copies: "gz" },
    ]);
  } finally {
    worker.close();
  }
});

test("a host that sent the manifest in Brotli (oya serve) gets the runtime's own URLs asked, worker and model alike", async () => {
  const log = [];
  const site = fakeSite(siteFiles(), { encoding: "br" });
  const worker = fakeWorker(log);
  const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    await engine.ask("where?");
    assert.equal(log.find((e) => e[0] === "boot")[1].copies, "raw");
    assert.equal(log.find((e) => e[0] === "loadEmbedder")[2].copies, "raw");
  } finally {
    worker.close();
  }
});

test("a site under a sub-path: the worker fetches the shards under the site's folder, the page no bundle file", async () => {
  const log = [];
  const base = "http://site.test/docs/wiki/"; // a site under a sub-path
  const shards = { path: "shards/", manifest: "manifest-0123456789abcdef.json.gz", graph: "graph-0123456789abcdef.json.gz", vectors: null };
  const manifest = { ...MANIFEST, bundle: { path: "bundle.77aa/", index: "index.json.gz", vectors: "vectors.bin.gz", shards } };
  const requested = [];
  const fetchFn = async (url) => (requested.push(url), new Response(JSON.stringify(manifest)));
  const worker = fakeWorker(log);
  const engine = createEngine({ base, fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    const run = await engine.ask("where?");
    assert.deepEqual(requested, [base + "manifest.json"]);
    assert.deepEqual(log.find((e) => e[0] === "shards")[1], {
      dir: base + "bundle.77aa/shards/",
      manifest: shards.manifest,
      prefetch: [shards.manifest, shards.graph],
      vectors: null,
    });
    assert.equal(run.result.question, "where?");
    assert.equal(engine.progress().get("bundle").label, "Index ready (1,234 chunks)");
  } finally {
    worker.close();
  }
});

test("a question asked before the model is in is answered at once without it, then in full", async () => {
  const log = [];
  const site = fakeSite(siteFiles());
  const worker = fakeWorker(log);
  let release;
  const modelGate = new Promise((resolve) => (release = resolve));
  const slowModel = async (url) => {
    await modelGate;
    return fakeModel(log)(url);
  };
  const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: slowModel });
  try {
    const partials = [];
    const asked = engine.ask("where?", {}, { onPartial: (run) => (partials.push(run), release()) });
    const run = await asked;
    assert.equal(partials.length, 1);
    assert.equal(partials[0].result.partial, true);
    assert.equal(partials[0].result.semantic_reason, "the question model is still loading");
    assert.equal(partials[0].vector, null);
    assert.equal(run.result.partial, undefined);
    assert.equal(run.result.semantic_reason, null);
    assert.deepEqual(Array.from(run.vector), [6, 0.5]);
    const asks = log.filter((e) => e[0] === "ask").map((e) => e[1].semantic_reason);
    assert.deepEqual(asks, ["the question model is still loading", null]);
    // once the model is in, a question is answered once, in full
    const again = [];
    await engine.ask("again?", {}, { onPartial: (r) => again.push(r) });
    assert.deepEqual(again, []);
  } finally {
    worker.close();
  }
});

test("a question over the core's limit is condensed in the worker first: that text is embedded and asked", async () => {
  const log = [];
  const site = fakeSite(siteFiles());
  const worker = fakeWorker(log);
  let release;
  const modelGate = new Promise((resolve) => (release = resolve));
  const slowModel = async (url) => {
    await modelGate;
    return fakeModel(log)(url);
  };
  const engine = createEngine({ base: BASE, fetchFn: site.fetchFn, makeWorker: worker.makeWorker, importModule: slowModel });
  try {
    const report = "Crash on restock\n" + "log line\n".repeat(MAX_QUESTION_CHARS / 9) + "KeyError: 'ABC' in restock_item";
    const condensed = report.slice(-40);
    const partials = [];
    const run = await engine.ask(report, {}, { onPartial: (r) => (partials.push(r), release()) });
    assert.deepEqual(log.filter((e) => e[0] === "condense"), [["condense", report.length, false]]); // once for both answers
    // the first answer (no model yet) and the full one ask the condensed text; the model embeds it
    assert.deepEqual(log.filter((e) => e[0] === "ask").map((e) => e[1].question), [condensed, condensed]);
    assert.deepEqual(Array.from(run.vector), [condensed.length, 0.5]);
    for (const r of [partials[0], run]) {
      assert.equal(r.question, condensed);
      assert.equal(r.note, `condensed ${report.length}`);
    }
    // a question the caller capped says "more than"; one at the limit is not condensed
    await engine.ask(report, {}, { more: true }).then((r) => assert.equal(r.note, `condensed ${report.length}+`));
    const atLimit = await engine.ask("q".repeat(MAX_QUESTION_CHARS));
    assert.equal(atLimit.note, null);
    assert.equal(atLimit.question.length, MAX_QUESTION_CHARS);
    assert.equal(log.filter((e) => e[0] === "condense").length, 2);
  } finally {
    worker.close();
  }
});

// A site with shards (a sub-path's), and a model whose import waits for release().
function shardSite() {
  const base = "http://site.test/docs/";
  const shards = {
    path: "shards/",
    manifest: "manifest-0123456789abcdef.json.gz",
    graph: "graph-0123456789abcdef.json.gz",
    vectors: "vectors-0123456789abcdef.bin.gz",
  };
  const manifest = { ...MANIFEST, bundle: { path: "bundle/", shards } };
  const fetchFn = async () => new Response(JSON.stringify(manifest));
  return { base, shards, fetchFn };
}

function gate() {
  let open;
  const promise = new Promise((resolve) => (open = resolve));
  return { promise, open };
}

test("the first answer comes before the model and the vectors shard are asked for; the full answer after both", async () => {
  const log = [];
  const { base, shards, fetchFn } = shardSite();
  const worker = fakeWorker(log);
  const engine = createEngine({ base, fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    const partials = [];
    const run = await engine.ask("where?", {}, { onPartial: (r) => partials.push(r) });
    // the worker opens the bundle over manifest + graph; the vectors shard is only named
    const opened = log.find((e) => e[0] === "shards")[1];
    assert.deepEqual(opened.prefetch, [shards.manifest, shards.graph]);
    assert.equal(opened.vectors, shards.vectors);
    const order = log.map((e) => (e[0] === "ask" ? `ask:${e[1].semantic_reason}` : e[0]));
    const first = order.indexOf("ask:the question model is still loading");
    assert.ok(first > order.indexOf("shards"), order.join(" "));
    assert.ok(order.indexOf("import") > first, `the model was asked for before the first answer: ${order.join(" ")}`);
    assert.ok(order.indexOf("vectors") > first, `the vectors before the first answer: ${order.join(" ")}`);
    assert.ok(order.indexOf("ask:null") > order.indexOf("vectors"), order.join(" "));
    assert.equal(partials.length, 1);
    assert.equal(run.result.semantic_reason, null);
    assert.deepEqual(run.ranked, [["c1", 0.9]]);
  } finally {
    worker.close();
  }
});

test("the model in before the vectors shard: the first answer says the vectors are loading, the full one follows", async () => {
  const log = [];
  const { base, fetchFn } = shardSite();
  const held = gate();
  const worker = fakeWorker(log, { vectors: () => held.promise.then(() => ({ vectors: 2 })) });
  const engine = createEngine({ base, fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    engine.warmUp();
    // wait until the model is in (the vectors are held)
    while (engine.progress().get("model")?.state !== "done") await new Promise((r) => setTimeout(r, 1));
    assert.equal(engine.progress().get("vectors").state, "busy");
    const partials = [];
    const asked = engine.ask("where?", {}, { onPartial: (r) => (partials.push(r), held.open()) });
    const run = await asked;
    assert.equal(partials.length, 1);
    assert.equal(partials[0].result.semantic_reason, "the index vectors are still loading");
    assert.equal(partials[0].result.partial, true);
    assert.equal(run.result.semantic_reason, null);
    assert.equal(engine.progress().get("vectors").state, "done");
  } finally {
    worker.close();
  }
});

test("vectors that cannot be fetched: the answer says so without the semantic channel, the next question retries", async () => {
  const log = [];
  const { base, fetchFn } = shardSite();
  let calls = 0;
  const vectors = async () => {
    calls += 1;
    if (calls === 1) throw new Error("Could not fetch the index shard x: HTTP 503");
    return { vectors: 2 };
  };
  const worker = fakeWorker(log, { vectors });
  const engine = createEngine({ base, fetchFn, makeWorker: worker.makeWorker, importModule: fakeModel(log) });
  try {
    const run = await engine.ask("where?");
    assert.equal(run.result.semantic_reason, "the index vectors could not be loaded (Could not fetch the index shard x: HTTP 503)");
    assert.equal(run.vector, null);
    const step = engine.progress().get("vectors");
    assert.equal(step.state, "warn");
    assert.match(step.detail, /HTTP 503/);
    const again = await engine.ask("again?");
    assert.equal(again.result.semantic_reason, null);
    assert.equal(calls, 2);
    assert.equal(engine.progress().get("vectors").state, "done");
  } finally {
    worker.close();
  }
});
