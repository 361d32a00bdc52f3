// The question engine, page side, without DOM: the manifest, the index bundle (its shards, which the
// worker fetches as questions need them), the Python worker (pyodide_worker.js: Pyodide, the core and
// the JS vector kernel) and the query model (embed.js). Nothing loads until warmUp() or ask(); after
// a failure only a question retries.
// The first answer's path comes first: the runtime, the wheel and the shards every question reads
// (manifest, graph), then a waiting question's own shards. The query model and the vectors shard
// (the semantic channel's, MBs together) load after them, once the engine is ready and no question
// waits for its first answer, so they never compete for the link. A question asked before both
// are in is answered twice: at once without the semantic channel (marked partial), then in full
// (ask's onPartial).
// A question over the core's limit (a pasted bug report) is condensed in the worker first
// (oya.core.report, as the CLI condenses it), and that text is embedded and asked: the browser
// embeds what `oya ask` embeds, and both say what went with the core's one line.
// All state lives in the closure of createEngine; fetch, the worker and the model's import are
// passed in, so tests/js/engine.test.js runs it in Node against a deterministic fake worker.
//
// Progress: a Map step -> {label, state: busy|done|warn|fail, ms?, detail?}; onProgress() is called
// on every change. Performance marks "oya:<step>" profile the cold start (util.markTimes).

import { copiesFor } from "./decoded.js";
import { createClient, runtimePaths, shardFiles, shipsModel, wheelUrl } from "./protocol.js";
import { mark, MAX_QUESTION_CHARS } from "./util.js";

// The parsed body and how the host encoded it (Content-Encoding, "" for none).
async function fetchChecked(fetchFn, url, what, kind) {
  let response;
  try {
    response = await fetchFn(url);
  } catch (err) {
    throw new Error(`Could not fetch the ${what} (${url}): ${err.message}`);
  }
  if (!response.ok) throw new Error(`Could not fetch the ${what} (${url}): HTTP ${response.status}`);
  return { body: await response[kind](), encoding: response.headers?.get("Content-Encoding") || "" };
}

function workerMark(name, at, detail = null) {
  mark(name, { startTime: Math.max(0, at - performance.timeOrigin), detail });
}

// base: the site's root URL (absolute, ending in "/").
export function createEngine({
  base,
  makeWorker = (url) => new Worker(url, { type: "module", name: "oya-engine" }),
  fetchFn = (url) => fetch(url),
  importModule = (url) => import(url),
  onProgress = () => {},
} = {}) {
  const progress = new Map();
  let manifestPromise = null;
  // how the runtime's large files are fetched from this host (ask/decoded.js): known with the manifest
  let copies = "raw";
  let enginePromise = null;
  let modelPromise = null;
  let modelGate = null;
  let modelSettled = false; // loaded, or known not to load
  let vectorsPromise = null;
  let vectorsSettled = false; // the worker holds the vectors (or the bundle has none), or they failed
  let vectorsFailed = false; // the next question tries again
  let releaseModel = null;
  let holds = 0; // questions whose first answer is on its way: the semantic downloads wait for them
  let ready = false;
  let failed = false;
  let warmedUp = false;

  function setStep(step, label, state, extra = {}) {
    progress.set(step, { ...(progress.get(step) || {}), label, state, ...extra });
    onProgress();
  }

  function loadManifest() {
    if (!manifestPromise) {
      manifestPromise = fetchChecked(fetchFn, base + "manifest.json", "site manifest", "json").then(
        ({ body, encoding }) => {
          copies = copiesFor(encoding);
          return body;
        },
        (err) => {
          manifestPromise = null;
          throw err;
        },
      );
    }
    return manifestPromise;
  }

  // The worker's own scripts load while the manifest is fetched; Python boots once the manifest
  // names the wheel, while the worker fetches the shards every question reads.
  async function startEngine(holder) {
    const t0 = performance.now();
    const client = createClient(makeWorker(base + "static/pyodide_worker.js"), { onMark: workerMark });
    holder.client = client;
    const manifest = await loadManifest();
    mark("manifest");
    const shards = shardFiles(manifest);
    setStep("runtime", "Loading Python runtime…", "busy");
    setStep("bundle", "Loading the index…", "busy");
    const { pyodide: runtime, brotli } = runtimePaths(manifest);
    const booted = client.call("boot", { base, wheelUrl: wheelUrl(manifest), runtime, copies, brotli }).then(() => {
      setStep("runtime", "Python runtime ready", "done", { ms: performance.now() - t0 });
    });
    booted.catch(() => {}); // awaited below; a failure while the shards download is reported once
    const decoded = openShards(client, shards);
    decoded.catch(() => {}); // awaited below, after boot
    await booted;
    const tl = performance.now();
    const { chunks } = await decoded;
    setStep("bundle", `Index ready (${chunks.toLocaleString("en-US")} chunks)`, "done", {
      ms: performance.now() - t0,
      loadMs: performance.now() - tl,
    });
    ready = true;
    mark("engine-ready");
    return { client, readyMs: performance.now() - t0 };
  }

  // The worker fetches the shards itself (a question's own, on demand; the shared ones at once,
  // while Python boots). URLs under base, so a site under a sub-path works.
  function openShards(client, shards) {
    return client.call("shards", { ...shards, dir: new URL(shards.dir, base).href });
  }

  function loadEngine() {
    if (enginePromise) return enginePromise;
    const holder = { client: null };
    enginePromise = startEngine(holder).catch((err) => {
      enginePromise = null;
      failed = true;
      holder.client?.fail(err);
      setStep("runtime", "Could not start the question engine", "fail", { detail: err.message });
      throw err;
    });
    return enginePromise;
  }

  // Resolves to the embed module, or {error} when the site ships no model or it cannot load.
  function loadModel() {
    if (modelPromise) return modelPromise;
    modelPromise = (async () => {
      const t0 = performance.now();
      const manifest = await loadManifest();
      if (!shipsModel(manifest)) throw new Error("this site ships no query model");
      setStep("model", "Loading model…", "busy");
      const embedModule = await importModule(base + "static/embed.js");
      const { transformers, model } = runtimePaths(manifest);
      await embedModule.loadEmbedder(base, { vendor: transformers, model, copies });
      setStep("model", "Model ready", "done", { ms: performance.now() - t0 });
      modelSettled = true;
      return embedModule;
    })().catch((err) => {
      setStep("model", "Model unavailable — keyword and code-graph search only", "warn", { detail: err.message });
      modelSettled = true;
      return { error: err.message };
    });
    return modelPromise;
  }

  // The vectors shard, fetched by the worker into its JS kernel: resolves to {vectors: rows}, or
  // {error}.
  function loadVectors(engine) {
    if (vectorsPromise) return vectorsPromise;
    const t0 = performance.now();
    vectorsSettled = false;
    setStep("vectors", "Loading the index vectors…", "busy");
    vectorsPromise = engine.client
      .call("vectors", {})
      .then((done) => {
        setStep("vectors", "Index vectors ready", "done", { ms: performance.now() - t0 });
        return done;
      })
      .catch((err) => {
        setStep("vectors", "Index vectors unavailable — keyword and code-graph search only", "warn", { detail: err.message });
        vectorsFailed = true;
        return { error: err.message };
      })
      .finally(() => (vectorsSettled = true));
    return vectorsPromise;
  }

  // Let the semantic downloads go once the engine is ready and no question waits for its first answer.
  function openGate() {
    if (ready && holds === 0) releaseModel?.();
  }

  // A question holds the gate until its first answer is shown; the returned function lets go (once).
  function holdGate() {
    holds += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      holds -= 1;
      openGate();
    };
  }

  // The query model (~20 MB compressed, most of the bytes) and the vectors shard wait for the
  // first answer's files (the engine is ready) and its question's shards: sharing the link with
  // them would delay the first answer. Resolves to [model (loadModel's), vectors (loadVectors')].
  function loadSemanticAfterEngine() {
    if (!modelGate) {
      modelGate = new Promise((resolve) => (releaseModel = resolve)).then(async () => {
        const engine = await loadEngine();
        return await Promise.all([loadModel(), loadVectors(engine)]);
      });
      modelGate.catch(() => {}); // a failed engine: its own error is reported, and a question retries
      loadEngine().then(openGate, () => {
        modelGate = null; // the next question starts over
      });
    }
    return modelGate;
  }

  // Start loading (idempotent). After a failure only a question retries, not every focus or key.
  function warmUp() {
    if (!warmedUp) {
      warmedUp = true;
      mark("warmup");
    }
    if (!failed) loadEngine().catch(() => {});
    if (!failed) loadSemanticAfterEngine();
  }

  // {text, note}: the question as the core reads it, and the core's line on what was condensed
  // (null when it fits). more: the question was capped before (the note says "more than").
  async function condense(engine, question, more) {
    if (question.length <= MAX_QUESTION_CHARS) return { text: question, note: null };
    return await engine.client.call("condense", { question, more });
  }

  async function answer(engine, question, options, vector, semanticReason, timings) {
    const request = { question, options, vector: vector && Array.from(vector), semantic_reason: semanticReason };
    const answered = await engine.client.call("ask", request);
    Object.assign(timings, answered.timings);
    return { result: JSON.parse(answered.result), ranked: answered.ranked };
  }

  // One question: condensed past the core's limit, embedded here, ranked and answered in the worker.
  // Returns {result, vector, ranked, question, note}: question is the text asked (condensed or as
  // given), note the core's line on what was condensed, or null. onPartial(run): when the engine is
  // ready before the query model and the vectors, the core answers at once without the semantic
  // channel (result.partial = true, its report says why) and the full answer follows as the return
  // value, once both are in. more: the caller kept only the first part of a longer question.
  async function ask(question, options = {}, { onPartial = null, more = false } = {}) {
    const t0 = performance.now();
    warmUp();
    failed = false; // a question always tries again
    if (vectorsFailed) [vectorsPromise, vectorsFailed, vectorsSettled] = [null, false, false]; // so do the vectors
    const release = holdGate();
    let engine, asked;
    // a run as returned: what was asked (condensed or as given) and the core's line on it
    const said = (run, extra) => ({ ...run, ...extra, question, note: asked.note ?? run.result.question_note ?? null });
    try {
      engine = await loadEngine();
      asked = await condense(engine, question, more);
      question = asked.text;
      if (onPartial && !(modelSettled && vectorsSettled)) {
        const waiting = modelSettled ? "the index vectors are still loading" : "the question model is still loading";
        const timings = {};
        const partial = await answer(engine, question, options, null, waiting, timings);
        mark("first-answer");
        timings.total = timings.query = performance.now() - t0;
        partial.result.partial = true;
        partial.result.browser_timings_ms = timings;
        onPartial(said(partial, { vector: null }));
      }
    } finally {
      release(); // the first answer is out (or failed): the model and the vectors may come
    }
    const [model] = await loadSemanticAfterEngine();
    const vectors = await loadVectors(engine); // the gate's, or this question's retry after a failure
    const tq = performance.now();
    const timings = {};
    let vector = null;
    let semanticReason = null;
    if (model.error) {
      semanticReason = `the question model could not be loaded (${model.error})`;
    } else if (vectors.error) {
      semanticReason = `the index vectors could not be loaded (${vectors.error})`;
    } else {
      const te = performance.now();
      vector = await model.embed(question);
      mark("first-embed");
      timings.embed = performance.now() - te;
    }
    const run = await answer(engine, question, options, vector, semanticReason, timings);
    mark("first-answer");
    mark("full-answer");
    timings.query = performance.now() - tq;
    timings.total = performance.now() - t0;
    run.result.browser_timings_ms = timings;
    return said(run, { vector });
  }

  return {
    warmUp,
    ask,
    isReady: () => ready,
    progress: () => progress,
    ready: () => Promise.all([loadEngine(), loadSemanticAfterEngine()]).then(([e]) => e.readyMs),
    // the core's ranking (VectorIndex in Pyodide) and the JS kernel's, for the parity tests and the bench
    coreRank: async (vector, n) => JSON.parse(await (await loadEngine()).client.call("rank", { vector: Array.from(vector), n })),
    rankVectors: async (vector, n) => (await loadEngine()).client.call("rank_js", { vector: Array.from(vector), n }),
  };
}
