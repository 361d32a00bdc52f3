// The question engine's Python side in a dedicated (module) worker: Pyodide, the oya core wheel and
// the index bundle, so that booting Python (seconds of CPU) never freezes the page and runs while
// the main thread loads the query model.
//
// Protocol (ask.js's EngineWorker): the page posts {id, op, args}; the worker answers
// {id, ok: true, value} or {id, ok: false, error}, and posts {mark: name, at: epoch ms} for the
// cold-start profile. Ops, handled in order of arrival:
//   boot   {base, wheelUrl}              -> true, once oya.core imports
//   bundle {index: ArrayBuffer, vectors}  -> {layout: JSON string, chunks: n}   (waits for boot)
//   ask    request JSON string            -> result JSON string (oya.core.bundle.ask_json)
//   rank   {vector, n}                    -> JSON string of Bundle.rank_vectors (tests, bench)
// Strings cross the boundary as JSON, so no Python object outlives a call on the page's side.

import { bootCore } from "./pyodide_boot.js";

let bootPromise = null;
let bundlePromise = null;

function post(message) {
  self.postMessage(message);
}

// Forward a performance mark to the page, as an absolute time (the clocks' origins differ).
function forward(step) {
  post({ mark: step, at: performance.timeOrigin + performance.now() });
}

// pyodide_boot.js marks its own steps with performance.mark; relay them as they happen.
try {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.name.startsWith("oya:")) post({ mark: entry.name.slice(4), at: performance.timeOrigin + entry.startTime });
    }
  }).observe({ type: "mark" });
} catch {
  /* no PerformanceObserver: no profile */
}

async function boot({ base, wheelUrl }) {
  const pyodide = await bootCore(base, { wheelUrl });
  pyodide.runPython("import json\nfrom oya.core.bundle import decode_bundle, ask_json");
  forward("core-ready");
  return pyodide;
}

async function loadBundle({ index, vectors }) {
  if (!bootPromise) throw new Error("the engine worker got a bundle before 'boot'");
  const pyodide = await bootPromise;
  // The bytes go straight to decode_bundle (one JSON parse, in Python); no file system copy.
  pyodide.globals.set("OYA_INDEX_BYTES", new Uint8Array(index));
  pyodide.globals.set("OYA_VECTOR_BYTES", vectors ? new Uint8Array(vectors) : null);
  pyodide.runPython(`
OYA_BUNDLE = decode_bundle(
    OYA_INDEX_BYTES.to_bytes(), None if OYA_VECTOR_BYTES is None else OYA_VECTOR_BYTES.to_bytes()
)
del OYA_INDEX_BYTES, OYA_VECTOR_BYTES
`);
  forward("bundle-decoded");
  const layout = pyodide.runPython("json.dumps(OYA_BUNDLE.vector_layout())");
  const chunks = pyodide.runPython("len(OYA_BUNDLE)");
  return { pyodide, askFn: pyodide.runPython("lambda request: ask_json(OYA_BUNDLE, request)"), layout, chunks };
}

const handlers = {
  boot: (args) => {
    if (!bootPromise) bootPromise = boot(args);
    return bootPromise.then(() => true);
  },
  bundle: (args) => {
    if (!bundlePromise) bundlePromise = loadBundle(args);
    return bundlePromise.then(({ layout, chunks }) => ({ layout, chunks }));
  },
  ask: async (request) => {
    if (!bundlePromise) throw new Error("no bundle loaded");
    const { askFn } = await bundlePromise;
    return askFn(request);
  },
  rank: async ({ vector, n }) => {
    if (!bundlePromise) throw new Error("no bundle loaded");
    const { pyodide } = await bundlePromise;
    pyodide.globals.set("OYA_QVEC", JSON.stringify(vector));
    return pyodide.runPython(`json.dumps(OYA_BUNDLE.rank_vectors(json.loads(OYA_QVEC), ${Number(n)}))`);
  },
};

self.addEventListener("message", async (event) => {
  const { id, op, args } = event.data || {};
  const handler = handlers[op];
  try {
    if (!handler) throw new Error(`unknown engine operation ${op}`);
    post({ id, ok: true, value: await handler(args) });
  } catch (err) {
    post({ id, ok: false, error: err && err.message ? err.message : String(err) });
  }
});
