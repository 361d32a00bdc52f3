// The Ask panel: questions about the repository answered in the browser, offline.
//
// Theory of operation:
// * Nothing heavy loads with the page. The user opening the panel (the toggle), focusing or typing
//   in the box, or asking (also a deep link) starts the loads, all in parallel: Pyodide + the oya
//   core wheel in a module worker (pyodide_worker.js, via pyodide_boot.js), the index bundle
//   (bundle/index.json.gz, bundle/vectors.bin.gz, fetched and inflated here, handed to the worker
//   where Python parses the JSON once), and the query model (embed.js; onnxruntime runs in its own proxy
//   worker). Python never blocks the page, so the model loads while Python boots. A panel that is
//   merely restored open on a new page loads nothing. What to load comes from
//   <root>manifest.json: `wheel` (file name under vendor/, or a path), `model` (model folder name,
//   or null for none) and `bundle` (export_bundle's dict: `index`, `vectors` file names under
//   bundle/). Performance marks "oya:<step>" profile the cold start (oyaAsk.marks()).
// * A question is embedded by transformers.js, scored against the int8 vectors here in JS
//   (rankVectors: the same dequantised float32 rows and (-score, id) order as the core's
//   VectorIndex, ~40x faster than Pyodide), and the ranked list goes into the core's
//   Bundle.ask with the lexical and graph channels, which run in Pyodide (JSON strings each way).
//   If the model cannot load, the core reports the semantic channel unavailable and the other two
//   still answer.
// * Untrusted text (code, paths, questions) only ever reaches the DOM through textContent.
//   The Mermaid SVG is drawn by the vendored mermaid (securityLevel "strict") from the core's
//   sanitised diagram source and inserted as a parsed SVG node.
// * State: the panel's open/closed state in localStorage, the session's questions and answers
//   in sessionStorage (re-rendered on every page, diagrams kept as SVG so no re-render is
//   needed). Deep links ?ask=<question> and ?q=<question> open the panel and ask.
// * A question longer than MAX_QUESTION_CHARS is refused at once with the core's message (the core
//   refuses it too), before anything loads: a link can carry a megabyte of text.

const OPEN_KEY = "oya.ask.open";
const HISTORY_KEY = "oya.ask.history";
const MAX_HISTORY = 12;
const MAX_QUESTION_CHARS = 20000; // = oya.core.query.MAX_QUESTION_CHARS (tests/site/test_ask_limits.py)
const CHANNEL_LABELS = { lexical: "Keyword search", semantic: "Semantic search", graph: "Code-graph search" };
const LEVEL_TEXT = { HIGH: "High confidence", MEDIUM: "Medium confidence", LOW: "Low confidence" };
const EXAMPLES = ["How is this project organised?", "Where is the command-line entry point?", "What happens when an error is raised?"];

const body = document.body;
const rootAttr = body.dataset.root ?? "";
const ROOT = rootAttr === "" || rootAttr.endsWith("/") ? rootAttr : rootAttr + "/";
const BASE = new URL(ROOT || "./", location.href).href;

// ---------------------------------------------------------------------------------------------
// small DOM helpers (text only; never innerHTML with data)
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function pageHref(url) {
  return ROOT + url;
}

function formatMs(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

// Text with `code spans` as <code> elements.
function withCode(text) {
  const parts = text.split("`");
  return parts.map((part, i) => (i % 2 ? el("code", { text: part }) : document.createTextNode(part)));
}

// ---------------------------------------------------------------------------------------------
// storage
function readHistory() {
  try {
    const value = JSON.parse(sessionStorage.getItem(HISTORY_KEY) || "[]");
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

function writeHistory(items) {
  let kept = items.slice(-MAX_HISTORY);
  while (kept.length) {
    try {
      sessionStorage.setItem(HISTORY_KEY, JSON.stringify(kept));
      return;
    } catch {
      kept = kept.slice(1); // over quota: drop the oldest
    }
  }
  try {
    sessionStorage.removeItem(HISTORY_KEY);
  } catch {
    /* storage disabled */
  }
}

function readOpen() {
  try {
    return localStorage.getItem(OPEN_KEY) === "1";
  } catch {
    return false;
  }
}

function writeOpen(open) {
  try {
    localStorage.setItem(OPEN_KEY, open ? "1" : "0");
  } catch {
    /* storage disabled */
  }
}

// ---------------------------------------------------------------------------------------------
// engine: Pyodide + core + bundle, and the query model
let manifestPromise = null;
let enginePromise = null;
let engineReady = false;
let modelPromise = null;
const progress = new Map(); // step -> {label, state, ms, detail}
let progressListener = () => {};

// Performance marks ("oya:<step>"), read back by oyaAsk.marks() (tests, bench/site_bench.py).
function mark(step) {
  try {
    performance.mark(`oya:${step}`);
  } catch {
    /* no performance API */
  }
}

// Every "oya:" mark as [name, ms since the warm-up started] in time order (the first of each name).
function marks() {
  const all = performance.getEntriesByType("mark").filter((m) => m.name.startsWith("oya:"));
  const start = all.find((m) => m.name === "oya:warmup");
  const t0 = start ? start.startTime : 0;
  const seen = new Set();
  const out = [];
  for (const m of all) {
    const name = m.name.slice(4);
    if (seen.has(name)) continue;
    seen.add(name);
    out.push([name, Math.round(m.startTime - t0)]);
  }
  return out;
}

function setStep(step, label, state, extra = {}) {
  progress.set(step, { ...(progress.get(step) || {}), label, state, ...extra });
  progressListener();
}

async function fetchChecked(url, what, kind = "arrayBuffer") {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new Error(`Could not fetch the ${what} (${url}): ${err.message}`);
  }
  if (!response.ok) throw new Error(`Could not fetch the ${what} (${url}): HTTP ${response.status}`);
  return await response[kind]();
}

// The bundle's files are stored gzipped (a third of the bytes on the host). A host that labels
// them Content-Encoding: gzip has the browser inflate them already, so look at the magic bytes.
async function fetchBundleFile(url, what) {
  const buf = await fetchChecked(url, what);
  const head = new Uint8Array(buf, 0, Math.min(2, buf.byteLength));
  if (head.length < 2 || head[0] !== 0x1f || head[1] !== 0x8b) return buf;
  try {
    const stream = new Blob([buf]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).arrayBuffer();
  } catch (err) {
    throw new Error(`Could not unpack the ${what} (${url}): ${err.message}`);
  }
}

function loadManifest() {
  if (!manifestPromise) {
    manifestPromise = fetchChecked(BASE + "manifest.json", "site manifest", "json").catch((err) => {
      manifestPromise = null;
      throw err;
    });
  }
  return manifestPromise;
}

function wheelUrl(manifest) {
  const wheel = manifest.wheel;
  if (!wheel) throw new Error("manifest.json names no core wheel (key 'wheel')");
  return wheel.includes("/") ? wheel : "vendor/" + wheel;
}

function bundleFiles(manifest) {
  const bundle = manifest.bundle;
  if (!bundle) throw new Error("this site was built without an index bundle (manifest.json: bundle is null)");
  const dir = (bundle.path || bundle.dir || "bundle/").replace(/\/?$/, "/");
  return {
    index: dir + (bundle.index || "index.json.gz"),
    vectors: bundle.vectors ? dir + bundle.vectors : null,
  };
}

// Dequantise the int8 rows once: row * scale as float32, exactly the core's VectorIndex rows.
function decodeVectors(buffer, layout) {
  const { dim, count, ids, scales_offset: scalesOffset, data_offset: dataOffset } = layout;
  const scales = new Float32Array(buffer, scalesOffset, count);
  const q = new Int8Array(buffer, dataOffset, count * dim);
  const matrix = new Float32Array(count * dim);
  for (let r = 0; r < count; r++) {
    const s = scales[r];
    const off = r * dim;
    for (let j = 0; j < dim; j++) matrix[off + j] = q[off + j] * s;
  }
  return { dim, count, ids, matrix };
}

// Cosine of the query with every row (float64 accumulation), best n first, ties by chunk id.
export function rankVectors(vectors, query, n) {
  const { dim, count, ids, matrix } = vectors;
  if (query.length !== dim) throw new Error(`question vector has ${query.length} dims, the index ${dim}`);
  const q = Float32Array.from(query);
  const scores = new Float64Array(count);
  for (let r = 0; r < count; r++) {
    let acc = 0;
    const off = r * dim;
    for (let j = 0; j < dim; j++) acc += matrix[off + j] * q[j];
    scores[r] = acc;
  }
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((a, b) => scores[b] - scores[a] || (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));
  return order.slice(0, n).map((i) => [ids[i], scores[i]]);
}

// The Python side (Pyodide + core + bundle) runs in a module worker (pyodide_worker.js): booting
// Python is seconds of CPU that would otherwise freeze the page and stall the model's loading.
class EngineWorker {
  constructor(url) {
    this.url = url;
    this.pending = new Map();
    this.next = 1;
    this.failure = null;
    this.worker = new Worker(url, { type: "module", name: "oya-engine" });
    this.worker.addEventListener("message", (event) => this.receive(event.data || {}));
    this.worker.addEventListener("error", (event) => {
      event.preventDefault();
      this.fail(new Error(`the Python worker failed (${event.message || `could not load ${this.url}`})`));
    });
    this.worker.addEventListener("messageerror", () => this.fail(new Error("the Python worker sent an unreadable message")));
  }

  receive(data) {
    if (data.mark) {
      try {
        performance.mark(`oya:${data.mark}`, { startTime: Math.max(0, data.at - performance.timeOrigin) });
      } catch {
        /* no performance API */
      }
      return;
    }
    const call = this.pending.get(data.id);
    if (!call) return;
    this.pending.delete(data.id);
    if (data.ok) call.resolve(data.value);
    else call.reject(new Error(data.error));
  }

  fail(err) {
    this.failure = err;
    for (const call of this.pending.values()) call.reject(err);
    this.pending.clear();
    this.worker.terminate();
  }

  call(op, args, transfer = []) {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args }, transfer);
    });
  }
}

function loadEngine() {
  if (enginePromise) return enginePromise;
  let worker = null;
  enginePromise = (async () => {
    const t0 = performance.now();
    // The worker's own scripts load while the manifest is fetched; Python boots once the manifest
    // names the wheel, in the worker, while the page fetches the bundle and embed.js loads the model.
    worker = new EngineWorker(BASE + "static/pyodide_worker.js");
    const manifest = await loadManifest();
    mark("manifest");
    const files = bundleFiles(manifest);
    setStep("runtime", "Loading Python runtime…", "busy");
    setStep("bundle", "Loading the index…", "busy");
    const booted = worker.call("boot", { base: BASE, wheelUrl: wheelUrl(manifest) }).then(() => {
      setStep("runtime", "Python runtime ready", "done", { ms: performance.now() - t0 });
    });
    booted.catch(() => {}); // awaited below; a failure while the bundle downloads is reported once
    const [indexBuf, vecBuf] = await Promise.all([
      fetchBundleFile(BASE + files.index, "index bundle"),
      files.vectors ? fetchBundleFile(BASE + files.vectors, "bundle vectors") : Promise.resolve(null),
    ]);
    mark("bundle-fetched");
    // index.json is parsed once, by Python; the worker gets its own copy of the vectors
    const vecCopy = vecBuf ? vecBuf.slice(0) : null;
    const decoded = worker.call("bundle", { index: indexBuf, vectors: vecCopy }, vecCopy ? [indexBuf, vecCopy] : [indexBuf]);
    decoded.catch(() => {}); // awaited below, after boot
    await booted;
    const tl = performance.now();
    const { layout: layoutJson, chunks } = await decoded;
    const layout = JSON.parse(layoutJson);
    let vectors = null;
    if (vecBuf && layout.count > 0) vectors = decodeVectors(vecBuf, layout);
    setStep("bundle", `Index ready (${chunks.toLocaleString()} chunks)`, "done", {
      ms: performance.now() - t0,
      loadMs: performance.now() - tl,
    });
    engineReady = true;
    mark("engine-ready");
    const askFn = (request) => worker.call("ask", request);
    const coreRank = async (vector, n) => JSON.parse(await worker.call("rank", { vector: Array.from(vector), n }));
    return { askFn, coreRank, vectors, manifest, readyMs: performance.now() - t0 };
  })().catch((err) => {
    enginePromise = null;
    engineFailed = true;
    if (worker) worker.fail(err);
    setStep("runtime", "Could not start the question engine", "fail", { detail: err.message });
    throw err;
  });
  return enginePromise;
}

function loadModel() {
  if (modelPromise) return modelPromise;
  modelPromise = (async () => {
    const t0 = performance.now();
    const manifest = await loadManifest();
    if (manifest.model === null || manifest.model === false) {
      throw new Error("this site ships no query model");
    }
    setStep("model", "Loading model…", "busy");
    const embedModule = await import(BASE + "static/embed.js");
    await embedModule.loadEmbedder(BASE);
    setStep("model", "Model ready", "done", { ms: performance.now() - t0 });
    return embedModule;
  })().catch((err) => {
    setStep("model", "Model unavailable — keyword and code-graph search only", "warn", { detail: err.message });
    return { error: err.message };
  });
  return modelPromise;
}

let warmedUp = false;
let engineFailed = false;

// Start loading (idempotent). After a failure only a question retries, not every focus or key.
function warmUp() {
  if (!warmedUp) {
    warmedUp = true;
    mark("warmup");
  }
  if (!engineFailed) loadEngine().catch(() => {});
  loadModel();
}

// One question through the model, the JS vector kernel and the core. Returns the core's dict.
async function runQuestion(question, options = {}) {
  const t0 = performance.now();
  warmUp();
  engineFailed = false; // a question always tries again
  const [engine, model] = await Promise.all([loadEngine(), loadModel()]);
  const tq = performance.now();
  const timings = {};
  const request = { question, options };
  let vector = null;
  if (model.error) {
    request.semantic_reason = `the question model could not be loaded (${model.error})`;
  } else if (!engine.vectors) {
    request.semantic_reason = "the index bundle has no vectors";
  } else {
    const te = performance.now();
    vector = await model.embed(question);
    mark("first-embed");
    timings.embed = performance.now() - te;
    const tv = performance.now();
    const k = options.k || 10;
    const depth = Math.max(options.fetch_k || 100, k * 3) * 5;
    request.ranked = rankVectors(engine.vectors, vector, depth);
    timings.vectors = performance.now() - tv;
  }
  const tp = performance.now();
  const result = JSON.parse(await engine.askFn(JSON.stringify(request)));
  timings.python = performance.now() - tp;
  mark("first-answer");
  timings.query = performance.now() - tq;
  timings.total = performance.now() - t0;
  result.browser_timings_ms = timings;
  return { result, vector, ranked: request.ranked || null };
}

// ---------------------------------------------------------------------------------------------
// mermaid (vendored, strict), loaded the first time a diagram is drawn
let mermaidPromise = null;
let diagramCounter = 0;

function loadMermaid() {
  if (mermaidPromise) return mermaidPromise;
  mermaidPromise = new Promise((resolve, reject) => {
    if (globalThis.mermaid) return resolve(globalThis.mermaid);
    const script = document.createElement("script");
    script.src = BASE + "vendor/mermaid/mermaid.min.js";
    script.onload = () => resolve(globalThis.mermaid);
    script.onerror = () => reject(new Error("could not load mermaid"));
    document.head.append(script);
  }).then((mermaid) => {
    const dark = matchMedia("(prefers-color-scheme: dark)").matches;
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: dark ? "dark" : "neutral",
      htmlLabels: false,
      flowchart: { htmlLabels: false, useMaxWidth: false, curve: "basis", nodeSpacing: 24, rankSpacing: 36, padding: 6 },
      themeVariables: { fontSize: "13px" },
      fontFamily: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
    });
    return mermaid;
  });
  mermaidPromise.catch(() => {
    mermaidPromise = null;
  });
  return mermaidPromise;
}

function svgNode(svgText) {
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const root = doc.documentElement;
  if (!root || root.nodeName.toLowerCase() !== "svg") return null;
  for (const bad of root.querySelectorAll("script, foreignObject")) bad.remove();
  return document.importNode(root, true);
}

async function renderDiagram(source) {
  const mermaid = await loadMermaid();
  diagramCounter += 1;
  const id = `oya-ask-diagram-${Date.now().toString(36)}-${diagramCounter}`;
  const { svg } = await mermaid.render(id, source);
  return svg;
}

// ---------------------------------------------------------------------------------------------
// panel
const state = { panel: null, toggle: null, log: null, status: null, input: null, submit: null, busy: false };

function ensurePanel() {
  let panel = document.getElementById("ask-panel");
  if (!panel) {
    panel = el("aside", { id: "ask-panel", class: "ask-panel", hidden: true });
    body.append(panel);
  }
  panel.classList.add("ask-panel");
  panel.setAttribute("aria-label", "Ask about this code");
  // wiki pages leave the button to this script (it is of no use without it): it goes at the end of
  // the top bar, or floats when a page has none
  let toggle = document.getElementById("ask-toggle");
  if (!toggle) {
    const bar = document.querySelector("header.topbar");
    toggle = el("button", { id: "ask-toggle", type: "button", "aria-controls": "ask-panel" }, "Ask");
    if (bar) bar.append(toggle);
    else {
      toggle.classList.add("ask-fab");
      body.append(toggle);
    }
  }
  toggle.setAttribute("aria-expanded", "false");
  if (!toggle.title) toggle.title = "Ask a question about this code";

  const close = el("button", { type: "button", class: "ask-icon-btn ask-close", "aria-label": "Close the Ask panel", title: "Close (Esc)" }, "×");
  const clear = el("button", { type: "button", class: "ask-text-btn ask-clear", title: "Forget this session's questions" }, "Clear");
  const header = el(
    "header",
    { class: "ask-head" },
    el("div", { class: "ask-title" }, el("span", { class: "ask-logo", "aria-hidden": "true" }, "◆"), el("h2", { text: "Ask the code" })),
    el("div", { class: "ask-head-actions" }, clear, close),
  );
  const log = el("div", { class: "ask-log", role: "log", "aria-live": "polite", "aria-relevant": "additions" });
  const status = el("div", { class: "ask-status", "aria-live": "polite" });
  const input = el("textarea", {
    id: "ask-input",
    class: "ask-input",
    rows: 2,
    placeholder: "Ask about this repository…",
    "aria-label": "Your question",
    autocomplete: "off",
    spellcheck: "false",
  });
  const submit = el("button", { type: "submit", class: "ask-submit" }, "Ask");
  const form = el(
    "form",
    { class: "ask-form", autocomplete: "off" },
    el("div", { class: "ask-input-wrap" }, input, submit),
    el("p", { class: "ask-hint" }, "Enter to ask · Shift+Enter for a new line · answered offline in your browser"),
  );
  panel.replaceChildren(header, log, status, form);

  Object.assign(state, { panel, toggle, log, status, input, submit });

  toggle.addEventListener("click", () => {
    const opening = panel.hidden;
    setOpen(opening, { focus: true });
    if (opening) warmUp(); // the user wants to ask: start loading while they type
  });
  close.addEventListener("click", () => {
    setOpen(false);
    toggle.focus();
  });
  clear.addEventListener("click", () => {
    writeHistory([]);
    renderHistory();
    input.focus();
  });
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      setOpen(false);
      toggle.focus();
    }
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  input.addEventListener("focus", warmUp);
  input.addEventListener("input", () => {
    if (input.value.trim()) warmUp();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (question && !state.busy) ask(question);
  });
  progressListener = renderProgress;
}

function setOpen(open, { focus = false, persist = true } = {}) {
  state.panel.hidden = !open;
  body.classList.toggle("ask-open", open);
  state.toggle.setAttribute("aria-expanded", open ? "true" : "false");
  if (persist) writeOpen(open);
  if (open) {
    if (!state.log.childElementCount) renderHistory();
    if (focus) state.input.focus();
  }
}

function renderProgress() {
  const rows = [];
  for (const [, step] of progress) {
    const icon = { busy: "", done: "✓", warn: "!", fail: "✕" }[step.state] || "";
    rows.push(
      el(
        "li",
        { class: `ask-step ask-step-${step.state}` },
        el("span", { class: "ask-step-icon", "aria-hidden": "true" }, icon),
        el("span", { class: "ask-step-label", text: step.label }),
        step.ms ? el("span", { class: "ask-step-ms", text: formatMs(step.ms) }) : null,
        step.detail ? el("span", { class: "ask-step-detail", text: step.detail }) : null,
      ),
    );
  }
  const busy = [...progress.values()].some((s) => s.state === "busy");
  state.status.replaceChildren(rows.length && (busy || state.busy) ? el("ul", { class: "ask-steps" }, rows) : "");
}

function renderEmpty() {
  const examples = el("div", { class: "ask-examples" });
  for (const q of EXAMPLES) {
    const b = el("button", { type: "button", class: "ask-chip" }, q);
    b.addEventListener("click", () => {
      state.input.value = q;
      ask(q);
    });
    examples.append(b);
  }
  return el(
    "div",
    { class: "ask-empty" },
    el("p", { class: "ask-empty-lead", text: "Ask a question about this repository." }),
    el(
      "p",
      { class: "ask-empty-sub" },
      "Answers come from the code itself — keyword, semantic and code-graph search, run in your browser. Nothing leaves this page.",
    ),
    examples,
  );
}

function renderHistory() {
  const items = readHistory();
  state.log.replaceChildren();
  if (!items.length) {
    state.log.append(renderEmpty());
    return;
  }
  for (const item of items) state.log.append(renderEntry(item));
  state.log.scrollTop = state.log.scrollHeight;
}

function warningsFor(result) {
  const out = [];
  for (const ch of result.search_quality?.channels || []) {
    if (ch.status === "failed" || ch.status === "unavailable") {
      const name = CHANNEL_LABELS[ch.name] || ch.name;
      const others = (result.search_quality.channels || [])
        .filter((c) => c.status === "ran")
        .map((c) => (CHANNEL_LABELS[c.name] || c.name).toLowerCase());
      const rest = others.length ? ` Answered with ${others.join(" and ")} only.` : "";
      out.push(`${name} did not run${ch.detail ? ` — ${ch.detail}` : ""}.${rest}`);
    }
  }
  return out;
}

function citationLink(c, label) {
  return el("a", { class: "ask-cite", href: pageHref(c.url), title: `${c.path}, lines ${c.start_line}–${c.end_line}` }, label);
}

// The extractive answer: "[n] title (path:a-b): description" lines become a list whose titles link to
// the cited lines; the connected code the graph expansion found becomes a row of linked chips.
function renderAnswer(result) {
  const citations = result.answer?.citations || [];
  const byN = new Map(citations.map((c) => [c.n, c]));
  const box = el("div", { class: "ask-answer" });
  let list = null;
  let connected = false;
  for (const line of (result.answer?.text || "").split("\n")) {
    const m = /^\[(\d+)\]\s+(.*)$/.exec(line);
    if (!m) {
      list = null;
      connected = /^Connected code/.test(line);
      box.append(el("p", { class: connected ? "ask-answer-head ask-answer-sub" : "ask-answer-head" }, withCode(line)));
      continue;
    }
    const n = Number(m[1]);
    const c = byN.get(n);
    if (connected && c) {
      if (!list) {
        list = el("div", { class: "ask-connected" });
        box.append(list);
      }
      list.append(
        el(
          "a",
          { class: "ask-node", href: pageHref(c.url), title: `${c.path}, lines ${c.start_line}–${c.end_line}` },
          el("span", { class: "ask-node-n", text: String(n) }),
          c.title,
        ),
      );
      continue;
    }
    if (!list) {
      list = el("ol", { class: "ask-answer-list" });
      box.append(list);
    }
    let rest = m[2];
    let title = null;
    if (c) {
      const prefix = `${c.title} (${c.path}:${c.start_line}-${c.end_line})`;
      if (rest.startsWith(prefix)) {
        rest = rest.slice(prefix.length).replace(/^:\s*/, "");
        title = el(
          "div",
          { class: "ask-answer-title" },
          citationLink(c, c.title),
          el("span", { class: "ask-answer-loc", text: `${c.path}:${c.start_line}` }),
        );
      }
    }
    // "`signature` — first sentence of the docstring": the signature gets a code line of its own
    let signature = null;
    const sig = /^`([^`]+)`(?:\s+—\s+(.*))?$/.exec(rest);
    if (sig) {
      signature = el("code", { class: "ask-answer-sig", text: sig[1] });
      rest = sig[2] || "";
    }
    list.append(
      el(
        "li",
        {},
        c
          ? el("a", { class: "ask-ref", href: pageHref(c.url), "aria-label": `source ${n}` }, String(n))
          : el("span", { class: "ask-ref", text: String(n) }),
        el(
          "div",
          { class: "ask-answer-body" },
          title,
          signature,
          rest ? el("div", { class: "ask-answer-desc" }, withCode(rest)) : null,
        ),
      ),
    );
  }
  return box;
}

// Shrink a wide diagram towards the panel's width, but never below 60% (labels stay readable; the
// box scrolls for the rest and "Expand" shows it full size).
function fitDiagram(holder, svg) {
  const fit = () => {
    const box = svg.viewBox?.baseVal;
    const natural = box && box.width ? box.width : svg.getBBox().width;
    const room = holder.clientWidth - 16;
    if (!natural || room <= 0) return;
    const scale = Math.min(1, Math.max(0.6, room / natural));
    svg.style.width = `${Math.round(natural * scale)}px`;
    svg.style.maxWidth = "none";
    svg.removeAttribute("height");
  };
  requestAnimationFrame(fit);
}

// A full-size view of a diagram in a modal dialog (Escape or the button closes it).
function openDiagramDialog(svg, question) {
  const dialog = el("dialog", { class: "ask-dialog", "aria-label": "Connected code diagram" });
  const close = el("button", { type: "button", class: "ask-icon-btn", "aria-label": "Close the diagram" }, "×");
  dialog.append(
    el("header", { class: "ask-dialog-head" }, el("h2", {}, "Connected code"), el("span", { class: "ask-dialog-q", text: question }), close),
    el("div", { class: "ask-dialog-body" }, svg.cloneNode(true)),
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
  dialog.addEventListener("close", () => {
    dialog.remove();
    state.panel.querySelector(`[data-entry] .ask-expand`)?.focus();
  });
  body.append(dialog);
  dialog.showModal();
  close.focus();
}

function renderDiagramBlock(item) {
  const expand = el("button", { type: "button", class: "ask-text-btn ask-expand", title: "Show the diagram full size" }, "Expand");
  const block = el(
    "details",
    { class: "ask-block ask-diagram", open: true },
    el("summary", {}, "Connected code", el("span", { class: "ask-legend", "aria-hidden": "true" }, el("i", { class: "ask-key ask-key-seed" }), "match", el("i", { class: "ask-key ask-key-cls" }), "class", el("i", { class: "ask-key ask-key-fn" }), "function", el("i", { class: "ask-key ask-key-mod" }), "module")),
  );
  const holder = el("div", { class: "ask-mermaid", tabindex: "0", role: "img", "aria-label": "Diagram of the code connected to the answer" });
  block.append(holder);
  expand.disabled = true;
  const put = (svgText) => {
    const node = svgText && svgNode(svgText);
    if (node) {
      holder.replaceChildren(node);
      fitDiagram(holder, node);
      expand.disabled = false;
      expand.onclick = () => openDiagramDialog(node, item.question);
      block.append(el("div", { class: "ask-diagram-foot" }, el("span", { class: "ask-muted", text: "Scroll to pan" }), expand));
    } else {
      holder.replaceChildren(el("pre", { class: "ask-mermaid-src", text: item.result.mermaid }));
    }
  };
  if (item.svg) put(item.svg);
  else {
    holder.append(el("p", { class: "ask-muted", text: "Drawing the diagram…" }));
    renderDiagram(item.result.mermaid)
      .then((svg) => {
        item.svg = svg;
        put(svg);
        const items = readHistory();
        const stored = items.find((x) => x.id === item.id);
        if (stored) {
          stored.svg = svg;
          writeHistory(items);
        }
      })
      .catch((err) => {
        holder.replaceChildren(
          el("p", { class: "ask-muted", text: `Diagram unavailable (${err.message}); its source:` }),
          el("pre", { class: "ask-mermaid-src", text: item.result.mermaid }),
        );
      });
  }
  return block;
}

function renderSnippets(result) {
  const snippets = result.snippets || [];
  const cites = result.citations || [];
  const block = el("details", { class: "ask-block ask-snippets" }, el("summary", {}, `Code snippets (${snippets.length})`));
  snippets.forEach((s, i) => {
    const c = cites[i] || { url: s.url, path: s.path, start_line: s.start_line, end_line: s.start_line, title: s.path };
    block.append(
      el(
        "figure",
        { class: "ask-snippet" },
        el("figcaption", {}, citationLink(c, `${c.path}:${c.start_line}–${c.end_line}`), el("span", { class: "ask-snippet-title", text: c.title })),
        el("pre", {}, el("code", { text: s.text })),
      ),
    );
  });
  return block;
}

const SOURCES_SHOWN = 6;

function renderSources(result) {
  const cites = result.citations || [];
  const list = el("ol", { class: "ask-sources" });
  cites.forEach((c, i) => {
    list.append(
      el(
        "li",
        { hidden: i >= SOURCES_SHOWN },
        citationLink(c, `${c.path}:${c.start_line}–${c.end_line}`),
        el("span", { class: "ask-source-title", text: c.title }),
      ),
    );
  });
  const block = el("div", { class: "ask-block ask-sources-block" }, el("h3", { text: `Sources (${cites.length})` }), list);
  if (cites.length > SOURCES_SHOWN) {
    const more = el("button", { type: "button", class: "ask-text-btn ask-more" }, `Show ${cites.length - SOURCES_SHOWN} more`);
    more.addEventListener("click", () => {
      for (const li of list.children) li.hidden = false;
      more.remove();
    });
    block.append(more);
  }
  return block;
}

function renderFooter(item) {
  const r = item.result;
  const chips = (r.search_quality?.channels || []).map((c) =>
    el("span", { class: `ask-chan ask-chan-${c.status}`, title: c.detail || `${c.found} found, ${c.used} used` }, `${c.status === "ran" ? "✓" : "✕"} ${c.name}`),
  );
  const ms = r.browser_timings_ms?.query;
  return el(
    "footer",
    { class: "ask-foot" },
    chips,
    el("span", { class: "ask-foot-meta", text: `${r.search_quality?.intent || ""}${ms ? ` · ${formatMs(ms)}` : ""}` }),
  );
}

function renderEntry(item) {
  const r = item.result;
  const entry = el("article", { class: "ask-entry", "data-entry": item.id });
  entry.append(el("div", { class: "ask-q" }, el("span", { class: "ask-q-text", text: item.question })));
  if (item.error) {
    entry.append(el("div", { class: "ask-error", role: "alert", text: item.error }));
    return entry;
  }
  const level = r.confidence?.level || "LOW";
  entry.append(
    el(
      "div",
      { class: `ask-banner ask-banner-${level.toLowerCase()}`, "data-level": level },
      el("strong", { class: "ask-banner-level", text: LEVEL_TEXT[level] || level }),
      el("span", { class: "ask-banner-text", text: r.confidence?.disclaimer || "" }),
    ),
  );
  for (const w of warningsFor(r)) entry.append(el("div", { class: "ask-warning", role: "note" }, el("span", { "aria-hidden": "true" }, "⚠ "), w));
  entry.append(renderAnswer(r));
  if (r.mermaid) entry.append(renderDiagramBlock(item));
  if ((r.citations || []).length) entry.append(renderSources(r));
  if ((r.snippets || []).length) entry.append(renderSnippets(r));
  entry.append(renderFooter(item));
  return entry;
}

function compact(result) {
  // what the history keeps (hits and files are not rendered)
  const { hits, files, ...rest } = result;
  return { ...rest, hit_ids: (hits || []).map((h) => h.chunk_id) };
}

let lastRun = null;

// Scroll the panel's log (never the page) so that an entry's question is at the top.
function scrollLogTo(node) {
  state.log.scrollTop = Math.max(0, node.offsetTop - 8);
}

// The core's one-line refusal (oya.core.query.question_too_long), said before anything loads.
function questionTooLong(question) {
  if (question.length <= MAX_QUESTION_CHARS) return null;
  const n = (x) => x.toLocaleString("en-US");
  return `The question is ${n(question.length)} characters long; the limit is ${n(MAX_QUESTION_CHARS)}: keep the error message, the traceback and the names that matter.`;
}

function refuse(question, message) {
  setOpen(true, { persist: true });
  state.input.value = question; // kept in the box, to be shortened
  const shown = `${question.slice(0, 200)}…`; // the history keeps a glimpse, not the megabyte
  const item = { id: `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`, question: shown, at: Date.now(), error: message };
  const history = readHistory();
  history.push(item);
  writeHistory(history);
  const empty = state.log.querySelector(".ask-empty");
  if (empty) empty.remove();
  const node = renderEntry(item);
  state.log.append(node);
  scrollLogTo(node);
  lastRun = { error: message };
  return lastRun;
}

async function ask(question, options = {}) {
  const tooLong = questionTooLong(question);
  if (tooLong) return refuse(question, tooLong);
  mark("asked");
  setOpen(true, { persist: true });
  state.busy = true;
  state.submit.disabled = true;
  state.panel.classList.add("ask-busy");
  state.input.value = question;
  const empty = state.log.querySelector(".ask-empty");
  if (empty) empty.remove();
  const pending = el("article", { class: "ask-entry ask-pending" }, el("div", { class: "ask-q" }, el("span", { class: "ask-q-text", text: question })), el("div", { class: "ask-thinking" }, el("span", { class: "ask-spinner", "aria-hidden": "true" }), engineReady ? "Searching the code…" : "Starting the in-browser search — the first question takes a few seconds…"));
  state.log.append(pending);
  scrollLogTo(pending);
  renderProgress();
  const item = { id: `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`, question, at: Date.now() };
  try {
    const run = await runQuestion(question, options);
    lastRun = run;
    item.result = compact(run.result);
  } catch (err) {
    item.error = `Could not answer: ${err.message}`;
    lastRun = { error: err.message };
  }
  const history = readHistory();
  history.push(item);
  writeHistory(history);
  const node = renderEntry(item);
  pending.replaceWith(node);
  state.busy = false;
  state.submit.disabled = false;
  state.panel.classList.remove("ask-busy");
  state.input.value = "";
  renderProgress();
  scrollLogTo(node);
  state.input.focus({ preventScroll: true });
  return lastRun;
}

function deepLinkQuestion() {
  const params = new URLSearchParams(location.search);
  const q = params.get("ask") || params.get("q");
  if (!q || !q.trim()) return null;
  params.delete("ask");
  params.delete("q");
  const search = params.toString();
  history.replaceState(history.state, "", location.pathname + (search ? `?${search}` : "") + location.hash);
  return q.trim();
}

function init() {
  ensurePanel();
  setOpen(readOpen(), { persist: false });
  const q = deepLinkQuestion();
  if (q) ask(q);
  // hooks for tests and the benchmark
  globalThis.oyaAsk = {
    ask: async (question, options = {}) => {
      const run = await ask(question, options);
      return run.error ? run : { result: run.result, vector: run.vector ? Array.from(run.vector) : null, ranked: run.ranked };
    },
    query: async (question, options = {}) => {
      const run = await runQuestion(question, options);
      return { result: run.result, vector: run.vector ? Array.from(run.vector) : null, ranked: run.ranked };
    },
    ready: () => Promise.all([loadEngine(), loadModel()]).then(([e]) => e.readyMs),
    rankVectors: async (vector, n) => rankVectors((await loadEngine()).vectors, vector, n),
    coreRank: async (vector, n) => (await loadEngine()).coreRank(vector, n),
    progress: () => Object.fromEntries(progress),
    marks,
  };
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
