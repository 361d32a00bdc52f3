// Hooks for the real-browser tests (tests/site) and the benchmarks (bench/site_bench.py, bench/browser_harness.py):
// globalThis.oyaAsk. Not part of Oya: no site holds this file. The tests and benches answer its URL,
// <root>static/ask/test_hooks.js, with it (bench.browser_harness.route_test_hooks) and import it there,
// so its imports reach the page's own ask.js: it drives the same engine and panel the page runs.

import { askInPanel, engine } from "../ask.js";
import { markTimes } from "./util.js";

function plain(run) {
  return run.error ? run : { result: run.result, vector: run.vector ? Array.from(run.vector) : null, ranked: run.ranked };
}

globalThis.oyaAsk = {
  // through the panel (rendered like a typed question)
  ask: async (question, options = {}) => plain(await askInPanel(question, options)),
  // straight through the engine: embed, the JS kernel and the core
  query: async (question, options = {}) => plain(await engine.ask(question, options)),
  ready: () => engine.ready(),
  rankVectors: (vector, n) => engine.rankVectors(vector, n),
  coreRank: (vector, n) => engine.coreRank(vector, n),
  progress: () => Object.fromEntries(engine.progress()),
  // performance marks "oya:<step>" as [step, ms since the warm-up started]
  marks: () => markTimes(performance.getEntriesByType("mark")),
};
