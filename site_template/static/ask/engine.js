// The question engine, page side, without DOM: the manifest, the index bundle's files, the Python
// worker (pyodide_worker.js: Pyodide, the core and the JS vector kernel) and the query model
// (embed.js). Nothing loads until warmUp() or ask(); after a failure only a question retries.
// All state lives in the closure of createEngine; fetch, the worker and the model's import are
// passed in, so tests/js/engine.test.js runs it in Node against a deterministic fake worker.
//
// Progress: a Map step -> {label, state: busy|done|warn|fail, ms?, detail?}; onProgress() is called
// on every change. Performance marks "oya:<step>" profile the cold start (util.markTimes).

import { bundleFiles, createClient, isGzip, shipsModel, wheelUrl } from "./protocol.js";
import { mark } from "./util.js";

async function fetchChecked(fetchFn, url, what, kind = "arrayBuffer") {
  let response;
  try {
    response = await fetchFn(url);
  } catch (err) {
    throw new Error(`Could not fetch the ${what} (${url}): ${err.message}`);
  }
  if (!response.ok) throw new Error(`Could not fetch the ${what} (${url}): HTTP ${response.status}`);
  return await response[kind]();
}

async function fetchBundleFile(fetchFn, url, what) {
  const buf = await fetchChecked(fetchFn, url, what);
  if (!isGzip(buf)) return buf;
  try {
    const stream = new Blob([buf]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).arrayBuffer();
  } catch (err) {
    throw new Error(`Could not unpack the ${what} (${url}): ${err.message}`);
  }
}

function workerMark(name, at) {
  mark(name, { startTime: Math.max(0, at - performance.timeOrigin) });
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
  let enginePromise = null;
  let modelPromise = null;
  let ready = false;
  let failed = false;
  let warmedUp = false;

  function setStep(step, label, state, extra = {}) {
    progress.set(step, { ...(progress.get(step) || {}), label, state, ...extra });
    onProgress();
  }

  function loadManifest() {
    if (!manifestPromise) {
      manifestPromise = fetchChecked(fetchFn, base + "manifest.json", "site manifest", "json").catch((err) => {
        manifestPromise = null;
        throw err;
      });
    }
    return manifestPromise;
  }

  // The worker's own scripts load while the manifest is fetched; Python boots once the manifest
  // names the wheel, while the page fetches the bundle and embed.js loads the model.
  async function startEngine(holder) {
    const t0 = performance.now();
    const client = createClient(makeWorker(base + "static/pyodide_worker.js"), { onMark: workerMark });
    holder.client = client;
    const manifest = await loadManifest();
    mark("manifest");
    const files = bundleFiles(manifest);
    setStep("runtime", "Loading Python runtime…", "busy");
    setStep("bundle", "Loading the index…", "busy");
    const booted = client.call("boot", { base, wheelUrl: wheelUrl(manifest) }).then(() => {
      setStep("runtime", "Python runtime ready", "done", { ms: performance.now() - t0 });
    });
    booted.catch(() => {}); // awaited below; a failure while the bundle downloads is reported once
    const [index, vectors] = await Promise.all([
      fetchBundleFile(fetchFn, base + files.index, "index bundle"),
      files.vectors ? fetchBundleFile(fetchFn, base + files.vectors, "bundle vectors") : Promise.resolve(null),
    ]);
    mark("bundle-fetched");
    // both files move to the worker: index.json is parsed once, by Python; the vectors serve the JS kernel and the core
    const decoded = client.call("bundle", { index, vectors }, vectors ? [index, vectors] : [index]);
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
      await embedModule.loadEmbedder(base);
      setStep("model", "Model ready", "done", { ms: performance.now() - t0 });
      return embedModule;
    })().catch((err) => {
      setStep("model", "Model unavailable — keyword and code-graph search only", "warn", { detail: err.message });
      return { error: err.message };
    });
    return modelPromise;
  }

  // Start loading (idempotent). After a failure only a question retries, not every focus or key.
  function warmUp() {
    if (!warmedUp) {
      warmedUp = true;
      mark("warmup");
    }
    if (!failed) loadEngine().catch(() => {});
    loadModel();
  }

  // One question: embedded here, ranked and answered in the worker. Returns {result, vector, ranked}.
  async function ask(question, options = {}) {
    const t0 = performance.now();
    warmUp();
    failed = false; // a question always tries again
    const [engine, model] = await Promise.all([loadEngine(), loadModel()]);
    const tq = performance.now();
    const timings = {};
    let vector = null;
    let semanticReason = null;
    if (model.error) {
      semanticReason = `the question model could not be loaded (${model.error})`;
    } else {
      const te = performance.now();
      vector = await model.embed(question);
      mark("first-embed");
      timings.embed = performance.now() - te;
    }
    const request = { question, options, vector: vector && Array.from(vector), semantic_reason: semanticReason };
    const answered = await engine.client.call("ask", request);
    mark("first-answer");
    Object.assign(timings, answered.timings);
    timings.query = performance.now() - tq;
    timings.total = performance.now() - t0;
    const result = JSON.parse(answered.result);
    result.browser_timings_ms = timings;
    return { result, vector, ranked: answered.ranked };
  }

  return {
    warmUp,
    ask,
    isReady: () => ready,
    progress: () => progress,
    ready: () => Promise.all([loadEngine(), loadModel()]).then(([e]) => e.readyMs),
    // the core's ranking (VectorIndex in Pyodide) and the JS kernel's, for the parity tests and the bench
    coreRank: async (vector, n) => JSON.parse(await (await loadEngine()).client.call("rank", { vector: Array.from(vector), n })),
    rankVectors: async (vector, n) => (await loadEngine()).client.call("rank_js", { vector: Array.from(vector), n }),
  };
}
