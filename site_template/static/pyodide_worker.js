// The question engine's worker: Pyodide with the oya core wheel and the index bundle, and the JS vector
// kernel (ask/vectors.js), so that booting Python (seconds of CPU) never freezes the page and runs
// while the page loads the query model.
//
// Ops (ask/protocol.js carries them; handled in order of arrival):
//   boot    {base, wheelUrl, runtime}        -> true, once oya.core imports (runtime: Pyodide's folder)
//   bundle  {index: ArrayBuffer, vectors}    -> {chunks, vectors: rows}   (waits for boot)
//   condense {question, more}                -> {text, note}: a question over the core's limit condensed
//                                               (oya.core.report.condense_report, as the CLI condenses it;
//                                               note null when it fits; more: "more than", it was capped)
//   ask     {question, options, vector, semantic_reason}
//                                            -> {result: JSON string (oya.core.bundle.ask_json), ranked, timings}
//   rank    {vector, n}                      -> JSON string of Bundle.rank_vectors (the core's ranking; tests, bench)
//   rank_js {vector, n}                      -> the JS kernel's ranking (tests, bench)
// The semantic channel's ranking is computed here in JS, as deep as the core says it reads
// (Bundle.fetch_depth for the request's options), and handed to the core with the question.
// Strings cross into Python as JSON, so no Python object outlives a call.

import { bootCore } from "./pyodide_boot.js";
import { serve } from "./ask/protocol.js";
import { decodeVectors, rankVectors } from "./ask/vectors.js";

// Forward a performance mark to the page, as an absolute time (the clocks' origins differ).
function forward(step, startTime = performance.now()) {
  self.postMessage({ mark: step, at: performance.timeOrigin + startTime });
}

// pyodide_boot.js marks its own steps with performance.mark; relay them as they happen.
try {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.name.startsWith("oya:")) forward(entry.name.slice(4), entry.startTime);
  }).observe({ type: "mark" });
} catch {
  /* no PerformanceObserver: no profile */
}

function engineHandlers() {
  let booting = null;
  let loading = null;
  let condenser = null;

  async function boot({ base, wheelUrl, runtime }) {
    const pyodide = await bootCore(base, { wheelUrl, runtime });
    pyodide.runPython(`
import json
from oya.core.bundle import decode_bundle, ask_json
from oya.core.query import MAX_QUESTION_CHARS
from oya.core.report import condense_report
`);
    forward("core-ready");
    return pyodide;
  }

  async function loadBundle({ index, vectors }) {
    if (!booting) throw new Error("the engine worker got a bundle before 'boot'");
    const pyodide = await booting;
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
    const layout = JSON.parse(pyodide.runPython("json.dumps(OYA_BUNDLE.vector_layout())"));
    const kernel = vectors && layout.count > 0 ? decodeVectors(vectors, layout) : null;
    return {
      pyodide,
      kernel,
      chunks: pyodide.runPython("len(OYA_BUNDLE)"),
      askJson: pyodide.runPython("lambda request: ask_json(OYA_BUNDLE, request)"),
      depth: pyodide.runPython("lambda options: OYA_BUNDLE.fetch_depth(**json.loads(options))"),
    };
  }

  async function loaded() {
    if (!loading) throw new Error("no bundle loaded");
    return await loading;
  }

  return {
    boot: (args) => {
      if (!booting) booting = boot(args);
      return booting.then(() => true);
    },
    bundle: (args) => {
      if (!loading) loading = loadBundle(args);
      return loading.then(({ chunks, kernel }) => ({ chunks, vectors: kernel ? kernel.count : 0 }));
    },
    condense: async ({ question, more = false }) => {
      if (!booting) throw new Error("the engine worker got a question to condense before 'boot'");
      const pyodide = await booting;
      condenser ??= pyodide.runPython(`lambda question, more: json.dumps(
    {"text": question, "note": None}
    if (c := condense_report(question, MAX_QUESTION_CHARS)) is None
    else {"text": c.text, "note": c.note(more=more)}
)`);
      return JSON.parse(condenser(String(question), Boolean(more)));
    },
    ask: async ({ question, options = {}, vector = null, semantic_reason: reason = null }) => {
      const engine = await loaded();
      const request = { question, options };
      const timings = {};
      let ranked = null;
      if (reason) request.semantic_reason = reason;
      else if (!vector) request.semantic_reason = "no embedding for the question";
      else if (!engine.kernel) request.semantic_reason = "the index bundle has no vectors";
      else {
        const tv = performance.now();
        ranked = rankVectors(engine.kernel, vector, engine.depth(JSON.stringify(options)));
        request.ranked = ranked;
        timings.vectors = performance.now() - tv;
      }
      const tp = performance.now();
      const result = engine.askJson(JSON.stringify(request));
      timings.python = performance.now() - tp;
      return { result, ranked, timings };
    },
    rank: async ({ vector, n }) => {
      const { pyodide } = await loaded();
      pyodide.globals.set("OYA_QVEC", JSON.stringify(vector));
      return pyodide.runPython(`json.dumps(OYA_BUNDLE.rank_vectors(json.loads(OYA_QVEC), ${Number(n)}))`);
    },
    rank_js: async ({ vector, n }) => {
      const { kernel } = await loaded();
      if (!kernel) throw new Error("the index bundle has no vectors");
      return rankVectors(kernel, vector, n);
    },
  };
}

serve(self, engineHandlers());
