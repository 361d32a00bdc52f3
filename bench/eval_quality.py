"""Retrieval quality on real projects, with queries other people wrote; every ranking feature ablated.

Usage (one command, prints the tables and writes bench/results/eval_quality.{json,md}):

    .venv/bin/python -m bench.eval_quality
    .venv/bin/python -m bench.eval_quality --embedder hashing --code 50     # quick, no model

Three tasks per project (details in bench/eval/*.py and bench/README.md):

* code: a function's docstring first line -> that function, with the docstring blanked out of
  the indexed copy of the tree;
* prose: a docs paragraph or change-log entry naming symbols (Sphinx roles, literals), the names
  removed -> the files defining them;
* connected: "How does X work?" for X with >= 2 in-repo callees -> the share of X's callees and
  callers that the context (same token budget for every config) shows as snippets.

Every config is ``RetrievalOptions()`` (the defaults the CLI and the browser use) with one change.
The held-out project is evaluated with the defaults and baselines only, after the defaults were
chosen on the others.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from bench.common import RESULTS, Stopwatch, load_avg, machine, percentile, write_json
from bench.eval.metrics import mean, summarize_ranks
from bench.eval.project import MemoChannel, Project, load_project, memo
from bench.variants.centrality import with_centrality
from bench.variants.coactivation import with_coactivation
from bench.variants.embedders import VARIANTS
from bench.variants.file_lexical import without_file_lexical
from bench.variants.kind_words import with_reports_asking_for_code, with_tests_asked_by_first_line
from bench.variants.mmr import stored_vectors, with_mmr
from bench.variants.query_plans import with_adaptive_weights, with_long_query_identifiers
from bench.variants.ranking import without_build_chunks_last
from bench.variants.scope import without_scope
from bench.variants.suffix_folds import FoldedBM25Channel
from bench.variants.unembedded import vectors_without
from oya.core.channels import BM25Channel, GraphChannel, MemoryCorpus, VectorChannel, make_channels
from oya.core.options import RetrievalOptions
from oya.core.pipeline import Pipeline, default_pipeline, retrieve
from oya.core.vectors import VectorIndex, decode_f32
from oya.embedding.embedder import make_embedder
from oya.query.searcher import index_channels
from tests.core.core_corpus import bm25_index  # the core's BM25 built in memory, as the tests build it

PROJECTS = ("networkx==3.6.1", "click==8.1.8", "attrs==25.3.0")
HOLDOUT = ("requests==2.32.3",)
DEFAULTS = RetrievalOptions()

# a single channel alone uses no graph at all: no expansion, files ranked from its own chunks
# (by the best chunk, or by the decaying sum; the better of the two is the bar to beat)
BASELINES: dict[str, dict[str, Any]] = {
    "BM25 alone (files: max)": {"channels": ("lexical",), "expand_graph": False, "file_aggregation": "max"},
    "BM25 alone (files: decay)": {
        "channels": ("lexical",),
        "expand_graph": False,
        "file_aggregation": "decay",
    },
    "vector alone (files: max)": {
        "channels": ("semantic",),
        "expand_graph": False,
        "file_aggregation": "max",
    },
    "vector alone (files: decay)": {
        "channels": ("semantic",),
        "expand_graph": False,
        "file_aggregation": "decay",
    },
    # not a single channel (the code graph ranks the files), shown so the file-ranking gain is visible
    "vector + graph file ranking": {"channels": ("semantic",), "expand_graph": False},
    # issue 25: what the semantic channel adds (every project, the held-out one too)
    "no semantic channel": {"channels": ("lexical", "graph")},
    "default": {},
}


def ablations() -> dict[str, dict[str, Any]]:
    """Each ranking feature flipped against the defaults (label says the flipped state).

    An option change is a ``RetrievalOptions`` field; ``_variant`` is a losing variant kept in
    ``bench/variants/`` (a pipeline change); ``_mmr`` is MMR's (diversity, graph weight), with
    the project's stored vectors; ``_lexical``/``_graph``/``_semantic`` swap a channel.
    """
    d = DEFAULTS
    out: dict[str, dict[str, Any]] = {
        "graph channel off": {"channels": ("lexical", "semantic")},
        "adaptive weights on": {"_variant": with_adaptive_weights},
        "centrality on": {"_variant": with_centrality},
        f"graph expansion {'off' if d.expand_graph else 'on'}": {"expand_graph": not d.expand_graph},
        "long-query identifiers on": {"_variant": with_long_query_identifiers},
        f"semantic lead {'off' if d.semantic_lead else '0.04'}": {
            "semantic_lead": 0.0 if d.semantic_lead else 0.04
        },
    }
    out[f"tests weight {1.0 if d.test_weight < 1.0 else 0.7}"] = {
        "test_weight": 1.0 if d.test_weight < 1.0 else 0.7
    }
    out[f"RRF k={60 if d.rrf_k != 60 else 10}"] = {"rrf_k": 60 if d.rrf_k != 60 else 10}
    out["MMR 0.3 (cos+graph)"] = {"_mmr": (0.3, 0.5)}
    out["MMR 0.3 (cos only)"] = {"_mmr": (0.3, 0.0)}
    out["suffix folding on (lexical)"] = {"_lexical": "folded"}
    out["graph names: exact only"] = {"_graph": "exact"}
    out["file-level BM25 off"] = {"_variant": without_file_lexical}
    out["scope prefix off"] = {"_variant": without_scope}
    out["co-activation on"] = {"_variant": with_coactivation}
    out["tests asked by the first line"] = {"_variant": with_tests_asked_by_first_line}
    out["bug reports ask for code"] = {"_variant": with_reports_asking_for_code}
    out["build-file chunks in place"] = {"_variant": without_build_chunks_last}
    out["test files not embedded"] = {"_semantic": ("test",)}  # issue 25: half the build's embedding
    for mode in ("max", "decay", "graph"):
        if mode != d.file_aggregation:
            out[f"files={mode}"] = {"file_aggregation": mode}
    return out


def pipeline_for(change: dict[str, Any]) -> Pipeline:
    """The pipeline of one config: the defaults with its option changes, then its variant."""
    change = {k: v for k, v in change.items() if not k.startswith("_")}
    return default_pipeline(replace(DEFAULTS, **change))


def ranking_of(r: Any) -> dict[str, list[str]]:
    """What a run ranked for one question (``--dump``): hits, files, the context's snippets."""
    return {
        "hits": [h.chunk.id for h in r.hits],
        "files": [f.path for f in r.files],
        "context": [s.citation.chunk_id for s in r.context.snippets],
    }


def run_config(
    project: Project,
    vectors: dict[str, list[float]],
    channels: list[Any],
    pipeline: Pipeline,
    dump: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every query of ``project`` under ``opts``; with ``dump``, each query's ranking is kept there."""
    graph, index = project.index.graph, project.index

    def ask(question: str) -> Any:
        return retrieve(
            question,
            channels=channels,
            graph=graph,
            corpus=index,
            vector=vectors.get(question),
            pipeline=pipeline,
        )

    res: dict[str, Any] = {}
    intents: dict[str, int] = {}
    for task, queries in (("code", project.code), ("prose", project.prose)):
        chunk_ranks: list[int | None] = []
        file_ranks: list[int | None] = []
        for q in queries:
            r = ask(q.query)
            intents[r.quality.intent] = intents.get(r.quality.intent, 0) + 1
            if dump is not None:
                dump.setdefault(task, []).append({"query": q.query, **ranking_of(r)})
            if task == "code":
                want_nodes = {q.node_id}  # type: ignore[union-attr]
                want_files = {q.path}  # type: ignore[union-attr]
            else:
                want_nodes = set(q.nodes)  # type: ignore[union-attr]
                want_files = set(q.files)  # type: ignore[union-attr]
            chunk_ranks.append(
                next((i for i, h in enumerate(r.hits, 1) if h.chunk.node_id in want_nodes), None)
            )
            file_ranks.append(next((i for i, f in enumerate(r.files, 1) if f.path in want_files), None))
        res[task] = {
            "chunk": summarize_ranks(chunk_ranks),
            "file": summarize_ranks(file_ranks),
            "n": len(queries),
            # per query, in query order: for paired comparisons of two runs (bench/eval_compare.py)
            "chunk_ranks": chunk_ranks,
            "file_ranks": file_ranks,
        }
    cov: list[float] = []
    found: list[float] = []
    for cq in project.connected:
        r = ask(cq.query)
        shown = {s.citation.node_id for s in r.context.snippets}
        if dump is not None:
            dump.setdefault("connected", []).append({"query": cq.query, **ranking_of(r)})
        cov.append(len(cq.connected & shown) / len(cq.connected))
        found.append(1.0 if cq.node_id in shown else 0.0)
    res["connected"] = {
        "coverage": mean(cov),
        "target_in_context": mean(found),
        "n": len(cov),
        "coverages": cov,
    }
    res["intents"] = intents
    return res


def core_channels(project: Project) -> tuple[list[Any], MemoryCorpus]:
    """The pure core's channels over the same index, in memory: what the browser runs, here in CPython."""
    index = project.index
    corpus = MemoryCorpus(index.all_chunks())
    blobs = index.embedding_blobs()
    vectors = VectorIndex([i for i, _ in blobs], b"".join(b for _, b in blobs), index.dim)
    bm25 = bm25_index(index.chunk_token_lists())
    channels = make_channels(
        lexical=BM25Channel(bm25), semantic=VectorChannel(vectors), graph=index.graph, corpus=corpus
    )
    return channels, corpus


def measure_latency(
    project: Project, embedder: Any, opts: RetrievalOptions, n: int, *, core: bool = False
) -> dict[str, float]:
    """Warm per-query milliseconds (no memo): engine alone and with the question's embedding.

    ``core=False``: the CLI's channels (DuckDB BM25, numpy cosine); ``core=True``: the pure core in memory.
    """
    graph = project.index.graph
    if core:
        channels, index = core_channels(project)
    else:
        channels, index = index_channels(project.index), project.index  # type: ignore[assignment]
    questions = [q.query for q in project.code][: n // 2] + [q.query for q in project.prose][: n - n // 2]
    for q in questions[:3]:  # warm-up: loads vectors, graph, model
        vec = list(decode_f32(embedder.embed([q])[0]))
        retrieve(q, channels=channels, graph=graph, corpus=index, vector=vec, options=opts)
    engine: list[float] = []
    total: list[float] = []
    for q in questions:
        with Stopwatch() as whole:
            vec = list(decode_f32(embedder.embed([q])[0]))
            with Stopwatch() as alone:
                retrieve(q, channels=channels, graph=graph, corpus=index, vector=vec, options=opts)
        engine.append(alone.ms)
        total.append(whole.ms)
    return {
        "engine_p50": percentile(engine, 50),
        "engine_p95": percentile(engine, 95),
        "total_p50": percentile(total, 50),
        "total_p95": percentile(total, 95),
        "n": len(questions),
    }


def row(res: dict[str, Any]) -> list[float]:
    return [
        res["code"]["chunk"]["R@1"],
        res["code"]["chunk"]["R@10"],
        res["code"]["chunk"]["MRR"],
        res["code"]["file"]["R@5"],
        res["prose"]["file"]["R@1"],
        res["prose"]["file"]["R@5"],
        res["prose"]["file"]["R@10"],
        res["prose"]["file"]["MRR"],
        res["prose"]["chunk"]["R@10"],
        res["connected"]["coverage"],
    ]


HEAD = [
    "code chunk R@1",
    "code chunk R@10",
    "code chunk MRR",
    "code file R@5",
    "prose file R@1",
    "prose file R@5",
    "prose file R@10",
    "prose file MRR",
    "prose chunk R@10",
    "connected coverage",
]


def table(title: str, rows: list[tuple[str, list[float]]], delta_from: list[float] | None = None) -> str:
    lines = [f"**{title}**", "", "| config | " + " | ".join(HEAD) + " |", "|---" * (len(HEAD) + 1) + "|"]
    for name, vals in rows:
        if delta_from is not None and name != "default":
            cells = [f"{v:.3f} ({(v - b) * 100:+.1f})" for v, b in zip(vals, delta_from, strict=True)]
        else:
            cells = [f"{v:.3f}" for v in vals]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def avg_rows(per_project: dict[str, dict[str, Any]], name: str) -> list[float]:
    rows = [row(p[name]) for p in per_project.values() if name in p]
    return [mean([r[i] for r in rows]) for i in range(len(HEAD))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--projects", default=",".join(PROJECTS))
    ap.add_argument("--holdout", default=",".join(HOLDOUT))
    ap.add_argument(
        "--embedder",
        default="minilm",
        choices=("minilm", "hashing", *VARIANTS),
        help="the product's embedders, or a variant of bench/variants/embedders.py",
    )
    ap.add_argument("--code", type=int, default=150, help="code-search queries per project")
    ap.add_argument("--prose", type=int, default=150, help="prose queries per project")
    ap.add_argument("--connected", type=int, default=60, help="connected-code questions per project")
    ap.add_argument("--latency-queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-ablation", action="store_true", help="defaults and baselines only")
    ap.add_argument(
        "--ablations",
        default="",
        help="comma-separated ablation names to run (default: all of them); e.g. 'file-level BM25 on'",
    )
    ap.add_argument(
        "--question-encoder",
        default="embedder",
        choices=("embedder", "static-nl"),
        help="what embeds the questions: the index's embedder, or issue 25's static table "
        "(bench/experiments/query_static_nl.py; the chunks keep the embedder's vectors)",
    )
    ap.add_argument("--out", default=str(RESULTS / "eval_quality.json"))
    ap.add_argument(
        "--dump",
        help="also write every query's ranked hits, files and context ids per project and config "
        "(JSON) to this file: two dumps compare rankings query by query, not only their averages",
    )
    args = ap.parse_args(argv)

    embedder = VARIANTS[args.embedder]() if args.embedder in VARIANTS else make_embedder(args.embedder)
    questions: Any = embedder
    if args.question_encoder == "static-nl":
        from bench.experiments.query_static_nl import QuestionEmbedder

        questions = QuestionEmbedder()
    start = machine()
    chosen = ablations()
    if args.ablations:
        wanted = [n.strip() for n in args.ablations.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in chosen]
        if unknown:
            ap.error(f"unknown ablations {unknown}; choose from {sorted(chosen)}")
        chosen = {n: chosen[n] for n in wanted}
    configs = dict(BASELINES) if args.no_ablation else {**BASELINES, **chosen}
    tuned = [s for s in args.projects.split(",") if s]
    held = [s for s in args.holdout.split(",") if s]
    results: dict[str, dict[str, Any]] = {}
    dumps: dict[str, dict[str, Any]] = {}
    latency: dict[str, dict[str, float]] = {}
    stats: dict[str, dict[str, Any]] = {}
    for spec in tuned + held:
        print(f"{spec}:", file=sys.stderr, flush=True)
        project = load_project(
            spec, embedder, n_code=args.code, n_prose=args.prose, n_connected=args.connected, seed=args.seed
        )
        stats[spec] = project.stats
        texts = sorted(
            {q.query for q in project.code}
            | {q.query for q in project.prose}
            | {q.query for q in project.connected}
        )
        blobs = questions.embed(texts)
        vectors = {t: list(decode_f32(b)) for t, b in zip(texts, blobs, strict=True)}
        channels = [memo(c) for c in index_channels(project.index)]
        results[spec] = {}
        for name, change in (configs if spec in tuned else BASELINES).items():
            t0 = time.perf_counter()
            use = channels
            if change.get("_lexical") == "folded":
                use = [MemoChannel(FoldedBM25Channel(project.index))] + channels[1:]
            if "_semantic" in change:
                use = [
                    channels[0],
                    MemoChannel(vectors_without(project.index, change["_semantic"])),
                    channels[2],
                ]
            if change.get("_graph") == "exact":
                exact = GraphChannel(project.index.graph, project.index, prefix_match=False)
                use = channels[:2] + [MemoChannel(exact)]
            pipeline = pipeline_for(change)
            if "_variant" in change:
                pipeline = change["_variant"](pipeline)
            if "_mmr" in change:
                diversity, graph_weight = change["_mmr"]
                pipeline = with_mmr(pipeline, diversity, graph_weight, vectors=stored_vectors(project.index))
            dump = dumps.setdefault(spec, {}).setdefault(name, {}) if args.dump else None
            results[spec][name] = run_config(project, vectors, use, pipeline, dump)
            print(f"  {name}: {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
        latency[spec] = measure_latency(project, embedder, DEFAULTS, args.latency_queries)
        core_lat = measure_latency(project, embedder, DEFAULTS, args.latency_queries, core=True)
        latency[spec].update({f"core_{k}": v for k, v in core_lat.items()})
        project.index.close()

    md: list[str] = []
    for spec in tuned + held:
        s = stats[spec]
        md.append(
            table(
                f"{spec}{' (held out)' if spec in held else ''}: {s['chunks']} chunks; {s['code_queries']} code, "
                f"{s['prose_queries']} prose, {s['connected_queries']} connected queries",
                [(n, row(results[spec][n])) for n in BASELINES],
            )
        )
    mean_rows = [(n, avg_rows({s: results[s] for s in tuned}, n)) for n in configs]
    md.append(table(f"Mean over {', '.join(tuned)}", mean_rows[: len(BASELINES)]))
    if not args.no_ablation:
        base = avg_rows({s: results[s] for s in tuned}, "default")
        md.append(
            table(
                "Ablation (mean over the tuning projects; in brackets: points against the default)",
                [("default", base)] + [r for r in mean_rows if r[0] not in BASELINES],
                delta_from=base,
            )
        )
    lat_lines = [
        "**Latency (warm, ms, nearest-rank)**",
        "",
        "| project | chunks | channels | engine p50 | engine p95 | with query embedding p50 | p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for spec, lat in latency.items():
        for label, pre in (
            ("CLI (DuckDB BM25, numpy cosine)", ""),
            ("pure core in memory (the browser's code)", "core_"),
        ):
            lat_lines.append(
                f"| {spec} | {stats[spec]['chunks']} | {label} | {lat[pre + 'engine_p50']:.1f} | "
                f"{lat[pre + 'engine_p95']:.1f} | {lat[pre + 'total_p50']:.1f} | {lat[pre + 'total_p95']:.1f} |"
            )
    md.append("\n".join(lat_lines))
    md.append(
        "Intents the classifier reported (weights do not depend on them): "
        + "; ".join(f"{s}: {results[s]['default']['intents']}" for s in tuned + held)
    )
    text = "\n\n".join(md)
    print(text)
    out = Path(args.out)
    record = {
        "embedder": embedder.model_id,
        "defaults": {f.name: getattr(DEFAULTS, f.name) for f in fields(DEFAULTS)},
        "args": vars(args),
        "machine": {**start, "load_avg_end": load_avg()},
        "stats": stats,
        "results": results,
        "latency": latency,
    }
    write_json(out, record, indent=1)
    out.with_suffix(".md").write_text(text + "\n")
    if args.dump:
        Path(args.dump).write_text(json.dumps(dumps, indent=0, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
