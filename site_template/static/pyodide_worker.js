// The question engine's worker: Pyodide with the oya core wheel and the index bundle's shards, and the
// JS vector kernel (ask/vectors.js), so that booting Python (seconds of CPU) never freezes the page.
//
// Ops (ask/protocol.js carries them; handled in order of arrival):
//   boot    {base, wheelUrl, runtime, copies, brotli}
//                                            -> true, once oya.core imports (runtime: Pyodide's folder;
//                                               copies: how to fetch its large files, ask/decoded.js;
//                                               brotli: the Brotli decoder's folder, ask/brotli.js)
//   shards  {dir, manifest, prefetch, vectors}
//                                            -> {chunks, vectors: 0, rounds}: the sharded bundle
//                                               (oya.core.shards) opened over shards this worker
//                                               fetches from dir (ask/shards.js); prefetch: fetched
//                                               at once, before boot ends (manifest, graph). The
//                                               vectors shard (its name: vectors) is not fetched
//                                               here: the first answer does not read it
//   vectors {}                               -> {vectors: rows}: the vectors shard fetched and the JS
//                                               kernel built (the page asks once the first answer's
//                                               files are in, with the query model: only the
//                                               semantic channel reads it); 0 rows for a bundle
//                                               without vectors. Once only; later calls await it
//   condense {question, more}                -> {text, note}: a question over the core's limit condensed
//                                               (oya.core.report.condense_report, as the CLI condenses it;
//                                               note null when it fits; more: "more than", it was capped)
//   ask     {question, options, vector, semantic_reason}
//                                            -> {result: JSON string (oya.core.bundle.ask_json), ranked, timings}
//                                               (asked again after each round of missing shards;
//                                               timings.shards: ms fetching, timings.rounds; a vector
//                                               before the vectors shard is in waits for it)
//   rank    {vector, n}                      -> JSON string of Bundle.rank_vectors (the core's ranking; tests, bench)
//   rank_js {vector, n}                      -> the JS kernel's ranking (tests, bench)
// The semantic channel's ranking is computed here in JS, as deep as the core says it reads
// (Bundle.fetch_depth for the request's options), and handed to the core with the question.
// Strings cross into Python as JSON, so no Python object outlives a call.

import { bootCore } from "./pyodide_boot.js";
import { serve } from "./ask/protocol.js";
import { createShardStore, untilFetched } from "./ask/shards.js";
import { decodeVectors, rankVectors } from "./ask/vectors.js";

// Forward a performance mark to the page, as an absolute time (the clocks' origins differ).
function forward(step, startTime = performance.now(), detail = null) {
  self.postMessage({ mark: step, at: performance.timeOrigin + startTime, detail });
}

// pyodide_boot.js marks its own steps with performance.mark; relay them as they happen.
try {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.name.startsWith("oya:")) forward(entry.name.slice(4), entry.startTime, entry.detail);
  }).observe({ type: "mark" });
} catch {
  /* no PerformanceObserver: no profile */
}

// gzipped bytes (a shard) inflated into an ArrayBuffer (the vector kernel's input)
async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).arrayBuffer();
}

function engineHandlers() {
  let booting = null;
  let loading = null;
  let condenser = null;

  async function boot({ base, wheelUrl, runtime, copies, brotli }) {
    const pyodide = await bootCore(base, { wheelUrl, runtime, copies, brotli });
    pyodide.runPython(`
import json
from oya.core.bundle import ask_json
from oya.core.channels import DataMissing
from oya.core.query import MAX_QUESTION_CHARS
from oya.core.report import condense_report
from oya.core.shard_store import ShardsMissing
from oya.core.shards import open_shards


def _oya_fetch(name):
    # oya_shard_bytes: the worker's map of fetched shards (ask/shards.js); undefined -> None
    data = oya_shard_bytes(name)
    if data is None or not hasattr(data, "to_bytes"):
        raise ShardsMissing([name])
    return data.to_bytes()


def _oya_or_missing(call):
    # a call over a sharded bundle, answered like ask_json: {"missing": [names]} until it has them
    try:
        return call()
    except DataMissing as exc:
        return json.dumps({"missing": list(exc.names)})


def oya_open_shards(manifest):
    def open_():
        global OYA_BUNDLE
        OYA_BUNDLE = open_shards(_oya_fetch, manifest)
        layout = OYA_BUNDLE.vector_layout() if OYA_BUNDLE.vector_ids else None
        return json.dumps({"chunks": len(OYA_BUNDLE), "layout": layout})

    return _oya_or_missing(open_)
`);
    forward("core-ready");
    return pyodide;
  }

  // The bundle's shards: the manifest and graph are fetched at once (while Python boots); opening
  // reads them, a question reads its own postings and chunks (ask loops). The vectors shard waits
  // for the "vectors" op: it is MBs, and only the semantic channel reads it.
  async function openSharded({ dir, manifest, prefetch = [], vectors = null }) {
    if (!booting) throw new Error("the engine worker got a bundle before 'boot'");
    const store = createShardStore(dir);
    const fetched = store.fetchAll(prefetch);
    fetched.catch(() => {}); // awaited below, after boot
    const pyodide = await booting;
    await fetched;
    forward("bundle-fetched");
    pyodide.globals.set("oya_shard_bytes", (name) => store.get(name));
    const open = pyodide.globals.get("oya_open_shards");
    const { out, rounds } = await untilFetched(store, () => open(manifest));
    const { chunks, layout } = JSON.parse(out);
    forward("bundle-decoded");
    return {
      pyodide,
      kernel: null,
      // the kernel's input: the vectors shard, fetched when first asked (listed in the site's
      // manifest; the core's own loader reads the same bytes from the store, never fetching twice)
      vectorShard: layout && layout.count > 0 && vectors ? { name: vectors, layout } : null,
      store,
      chunks,
      rounds,
      askJson: pyodide.runPython("lambda request: ask_json(OYA_BUNDLE, request)"),
      depth: pyodide.runPython("lambda options: OYA_BUNDLE.fetch_depth(**json.loads(options))"),
      // while a question's shards download: what the core builds on the first question anyway
      prepare: pyodide.runPython("lambda: OYA_BUNDLE.prepare()"),
    };
  }

  // The JS kernel, built once from the vectors shard.
  async function buildKernel(engine) {
    const { name, layout } = engine.vectorShard;
    await engine.store.fetchAll([name]);
    engine.kernel = decodeVectors(await inflate(engine.store.get(name)), layout);
    forward("vectors-ready");
    return engine.kernel;
  }

  // The loaded engine with its kernel, if the bundle has vectors (the shard fetched now, once).
  async function withVectors() {
    const engine = await loaded();
    if (!engine.kernel && engine.vectorShard) {
      engine.vectorsLoading ??= buildKernel(engine).catch((err) => {
        engine.vectorsLoading = null; // a later call tries again
        throw err;
      });
      await engine.vectorsLoading;
    }
    return engine;
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
    shards: (args) => {
      if (!loading) loading = openSharded(args);
      return loading.then(({ chunks, kernel, rounds }) => ({ chunks, vectors: kernel ? kernel.count : 0, rounds }));
    },
    vectors: async () => {
      const { kernel } = await withVectors();
      return { vectors: kernel ? kernel.count : 0 };
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
      const engine = vector && !reason ? await withVectors() : await loaded();
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
      const body = JSON.stringify(request);
      let python = 0;
      const { out: result, rounds } = await untilFetched(engine.store, () => {
        const t = performance.now();
        const answer = engine.askJson(body);
        python += performance.now() - t;
        return answer;
      }, {
        whileFetching: () => {
          const t = performance.now();
          engine.prepare();
          python += performance.now() - t;
        },
      });
      timings.shards = performance.now() - tp - python;
      timings.rounds = rounds;
      timings.python = python;
      return { result, ranked, timings };
    },
    rank: async ({ vector, n }) => {
      const { pyodide, store } = await loaded();
      pyodide.globals.set("OYA_QVEC", JSON.stringify(vector));
      const rank = () =>
        pyodide.runPython(`_oya_or_missing(lambda: json.dumps(OYA_BUNDLE.rank_vectors(json.loads(OYA_QVEC), ${Number(n)})))`);
      return (await untilFetched(store, rank)).out;
    },
    rank_js: async ({ vector, n }) => {
      const { kernel } = await withVectors();
      if (!kernel) throw new Error("the index bundle has no vectors");
      return rankVectors(kernel, vector, n);
    },
  };
}

serve(self, engineHandlers());
