// The Ask panel: questions about the repository answered in the browser, offline. This module wires
// the pieces under ask/ together; site.js imports it on every page.
//
// Theory of operation:
// * Nothing heavy loads with the page. Opening the panel, focusing or typing in the box, or asking
//   (also a deep link) starts the loads, all in parallel (ask/engine.js): Pyodide + the oya core
//   wheel in a module worker (pyodide_worker.js, via pyodide_boot.js), the index bundle's shards
//   (bundle/shards/: the manifest and graph at once, the rest as a question needs them, fetched by
//   the worker), and the query model (embed.js; onnxruntime runs in its own proxy worker). A panel that
//   is merely restored open on a new page loads nothing. What to load comes from <root>manifest.json.
// * A question is embedded by transformers.js on the page; in the worker the JS vector kernel
//   (ask/vectors.js) ranks the int8 rows as deep as the core says its semantic channel reads, and the
//   core's Bundle.ask runs the lexical and graph channels and answers (JSON strings each way). If the
//   model cannot load, the core reports the semantic channel unavailable and the other two answer.
// * The answer is drawn from the core's structured data (ask/answer.js, ask/answer_view.js): items
//   with their kind, symbol, span and URL, the confidence, the degraded flag and the channel reports.
//   Untrusted text (code, paths, questions) only reaches the DOM as text; the Mermaid SVG is drawn
//   by the vendored mermaid (securityLevel "strict") from the core's sanitised source, stripped of
//   anything active and inserted as a parsed node (ask/diagram.js).
// * State: the panel's open/closed state in localStorage, the session's questions and answers in
//   sessionStorage (ask/history.js; re-rendered on every page, diagrams kept as SVG). Deep links
//   ?ask=<question> and ?q=<question> open the panel and ask. A question over the core's length
//   limit (a pasted bug report) is condensed by the core in the worker before it is embedded, as
//   the CLI condenses it, and the entry shows the core's line on what went.
// * Tests and the benchmarks drive the panel through test hooks served beside it (bench/ask_test_hooks.js).

import { createDiagrams } from "./ask/diagram.js";
import { createEngine } from "./ask/engine.js";
import { createHistory, createOpenFlag } from "./ask/history.js";
import { createPanel } from "./ask/panel.js";

function storage(name) {
  try {
    return globalThis[name] ?? null; // reading it throws where storage is disabled
  } catch {
    return null;
  }
}

// The session history is written once the page is idle (after the answer is painted), not before.
function whenIdle(fn) {
  if (globalThis.requestIdleCallback) requestIdleCallback(fn, { timeout: 1000 });
  else setTimeout(fn, 100);
}

const rootAttr = document.body.dataset.root ?? "";
const root = rootAttr === "" || rootAttr.endsWith("/") ? rootAttr : rootAttr + "/";
const base = new URL(root || "./", location.href).href;

// (the panel exists before the engine first reports progress: nothing loads until it asks)
export const engine = createEngine({ base, onProgress: () => panel.renderProgress() });
const panel = createPanel({
  root,
  engine,
  history: createHistory(storage("sessionStorage"), { later: whenIdle }),
  openFlag: createOpenFlag(storage("localStorage")),
  diagrams: createDiagrams(base),
});
export const askInPanel = panel.ask;

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", panel.start);
else panel.start();
