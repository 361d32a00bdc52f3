"""The wiki of a big repository (networkx 3.6.1, >= 100k lines) as its readers meet it.

Theory of operation:

* Corpus: networkx 3.6.1's sdist (``bench/corpus.py``: ``bench/.cache/src/``), copied whole to
  ``bench/.cache/big_site/repo`` and made a git work tree (the reader lists git's files), as
  ``full_build_bench.py`` does: 855 files, ~216k lines. The index is built once with the real int8
  MiniLM (``pipelines.build.run_build``; embeddings cached under ``bench/.cache/big_site/cache``)
  and reused unless ``--rebuild``; the site is rendered again on every run (``render_wiki_pages``), so
  the page code measured is the checked-out one.
* Sizes (no browser): every file of the site, raw and gzip -6, per group (runtime, model, bundle,
  pages) and per 1k lines of source; the largest page and the pages over 300 kB. "First answer,
  gzip" is what the Ask panel needs before it can answer, each file gzipped: Pyodide, the core
  wheel, the model and onnxruntime, transformers.js, mermaid (the answer draws a diagram), the
  bundle and the panel's scripts.
* Browser (``bench/browser_harness.py``, helper B's harness): headless Chromium under 20 Mbit/s /
  40 ms RTT, a fresh profile (cold, median of ``--cold-runs``) and the same profile again (warm);
  bytes over the wire as the server sent them (``oya serve``'s server), seconds from navigation to
  the first answer, then ``--queries`` questions on the warm page: the engine's own ms
  (embed + JS vector scan + the core in Pyodide) p50/p95, the panel's wall ms, the page's JS heap
  and the PSS of every Chromium process (Pyodide lives in the renderer with its workers).
* Same ranking in the CLI and the browser: for every question the CLI's ``Searcher`` (float32
  vectors, DuckDB BM25) and the bundle's core (``oya.core.bundle``: int8 vectors with a per-row
  scale, the core's BM25) retrieve with the same question vector; the bench counts questions
  whose hit lists and file lists are identical, the top-10 overlap, and whether each question's
  source function (the docstring it came from) is in the top 10 of each.
* Percentiles are nearest-rank (``bench.common.percentile``). ``results/big_site_bench.json`` of
  2026-11-27 took p50 as the interpolated median and p95 at index round(0.95 (n - 1)): the same
  p95 for its 51 and 50 questions, the same p50 for the 51, but its Pyodide p50s (50 questions)
  are the mean of the 25th and 26th values where nearest-rank takes the 25th.
* Questions: the first lines of networkx's own function docstrings (>= 4 words, unique),
  sampled with a fixed seed (``site_bench.large_questions``), after a few hand-written ones.

Run: ``PYTHONPATH=$PWD nice -n 10 .venv/bin/python -m bench.big_site_bench [--no-browser]
[--queries 50] [--cold-runs 3] [--rebuild]``; prints a table, writes
``bench/results/big_site_bench.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.browser_harness import warm_line
from bench.common import BENCH_DIR, CACHE_DIR, RESULTS, ROOT, load_avg, machine, percentile, write_json
from bench.corpus import fetch_project
from bench.site_bench import GROUPS, LARGE_EXTRA, build_index_and_site, group_of, large_questions
from oya.site.assets import site_file

WORK = CACHE_DIR / "big_site"
RESULT = RESULTS / "big_site_bench.json"
SPEC = "networkx==3.6.1"
PAGE_BUDGET = 300_000
BUDGETS = {"first_answer_gzip_mb": 25.0, "warm_p95_ms": 150.0, "largest_page_kb": 300.0}
# what the panel fetches before its first answer (mermaid too: the answer draws its diagram)
# What the Ask panel fetches for its answers (bundle.<hash>/: oya.site.assets); the first answer,
# the core's without the semantic channel, is given before the query model and transformers.js
FULL_ANSWER = ("vendor/", "models/", "bundle/", "bundle.", "static/")
NOT_FIRST = ("models/", "vendor/transformers")
EXTRA_QUESTIONS = [
    "How is the shortest path between two nodes computed?",
    "Where is PageRank implemented?",
    "How does a graph read an edge list from a file?",
    "How are connected components found?",
]


# -- corpus, index, site ------------------------------------------------------------------------
def corpus() -> Path:
    repo = WORK / "repo"
    if not (repo / ".git").is_dir():
        shutil.rmtree(repo, ignore_errors=True)
        shutil.copytree(fetch_project(SPEC), repo)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def build(repo: Path, rebuild: bool) -> tuple[Path, Path, dict[str, Any]]:
    return build_index_and_site(repo, WORK / "out", WORK / "site", rebuild, cache_dir=WORK / "cache")


# -- sizes --------------------------------------------------------------------------------------
def sizes(site: Path, lines: int) -> dict[str, Any]:
    groups = {
        g: {"bytes": 0, "gzip": 0, "files": 0} for g in (*GROUPS, "total", "first_answer", "full_answer")
    }
    pages: list[tuple[int, str]] = []
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(site).as_posix()
        if path.suffix in (".br", ".gz") and path.with_suffix("").is_file():
            continue  # the build's compressed copy of a file counted here (oya.site.assets)
        data = path.read_bytes()
        gz = len(data) if rel.endswith(".gz") else len(gzip.compress(data, compresslevel=6, mtime=0))
        names = [group_of(rel), "total"]
        if rel.startswith(FULL_ANSWER):
            names += ["full_answer"] if rel.startswith(NOT_FIRST) else ["first_answer", "full_answer"]
        for g in names:
            groups[g]["bytes"] += len(data)
            groups[g]["gzip"] += gz
            groups[g]["files"] += 1
        if rel.endswith(".html"):
            pages.append((len(data), rel))
    pages.sort(reverse=True)
    per_k = 1000 / max(lines, 1)
    return {
        "groups": groups,
        "total_mb": round(groups["total"]["bytes"] / 1e6, 1),
        "total_mb_per_1k_lines": round(groups["total"]["bytes"] / 1e6 * per_k, 3),
        "without_runtime_mb_per_1k_lines": round(
            (groups["bundle"]["bytes"] + groups["pages"]["bytes"]) / 1e6 * per_k, 3
        ),
        "first_answer_gzip_mb": round(groups["first_answer"]["gzip"] / 1e6, 2),
        "full_answer_gzip_mb": round(groups["full_answer"]["gzip"] / 1e6, 2),
        "largest_pages": [[rel, n] for n, rel in pages[:5]],
        "pages_over_budget": [rel for n, rel in pages if n > PAGE_BUDGET],
    }


# -- the CLI's ranking and the bundle's ---------------------------------------------------------
def same_ranking(
    index_dir: Path, site: Path, questions: list[str], targets: dict[str, str], requests: list[dict[str, Any]]
) -> dict[str, Any]:
    """The CLI's retrieval against the bundle's core, question by question, with one question vector.

    Appends to ``requests`` what the browser's worker would send the core for each question."""
    from oya.core.bundle import load_bundle
    from oya.query.searcher import Searcher

    bundle = load_bundle(site_file(site, "bundle/"))
    same_hits = same_files = 0
    overlaps: list[float] = []
    found = {"cli": 0, "bundle": 0}
    core_cpu: list[float] = []
    with Searcher.open(index_dir) as searcher:
        for q in questions:
            cli = searcher.search(q)
            vector, _ = searcher.embed_query(q)
            ranked = bundle.rank_vectors(vector, bundle.fetch_depth()) if vector else None
            t0 = time.process_time()  # CPU, not wall: the core's own work, whatever the machine's load
            web = bundle.retrieve(q, vector, ranked=ranked)
            core_cpu.append((time.process_time() - t0) * 1000)
            requests.append({"question": q, "vector": vector, "ranked": ranked})
            cli_ids = [h.chunk.id for h in cli.hits]
            web_ids = [h.chunk.id for h in web.hits]
            same_hits += cli_ids == web_ids
            same_files += [f.path for f in cli.files] == [f.path for f in web.files]
            overlaps.append(len(set(cli_ids[:10]) & set(web_ids[:10])) / max(len(cli_ids[:10]), 1))
            node = targets.get(q)
            if node:
                found["cli"] += node in {h.chunk.node_id for h in cli.hits[:10]}
                found["bundle"] += node in {h.chunk.node_id for h in web.hits[:10]}
    n_targets = sum(1 for q in questions if targets.get(q))
    return {
        "questions": len(questions),
        "identical_hits": same_hits,
        "identical_files": same_files,
        "top10_overlap_mean": round(statistics.mean(overlaps), 4) if overlaps else None,
        "source_in_top10": {k: f"{v}/{n_targets}" for k, v in found.items()},
        # the core answering from a ranked vector list (the browser's path), CPU ms in CPython
        "core_cpu_ms": {"p50": round(percentile(core_cpu, 50), 1), "p95": round(percentile(core_cpu, 95), 1)},
    }


def pyodide_core(site: Path, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Each request through ``ask_json`` under Pyodide in Node (``pyodide_core_time.mjs``): CPU ms.

    The first request pays for the lazy parts of the bundle (name tables, postings), as the
    browser's first answer does; the rest are the warm questions."""
    from oya.site.vendor import ensure_vendor

    node = shutil.which("node")
    if node is None:
        return {"skipped": "no node on PATH"}
    modules = ensure_vendor(WORK / "cache")
    path = WORK / "pyodide_requests.json"
    path.write_text(json.dumps(requests), encoding="utf-8")
    cmd = [node, str(BENCH_DIR / "pyodide_core_time.mjs"), "--pyodide", str(modules / "pyodide")]
    cmd += ["--repo", str(ROOT), "--bundle", str(site_file(site, "bundle/")), "--requests", str(path)]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    cpu, wall = out["cpu_ms"][1:], out["wall_ms"][1:]
    return {
        "load_ms": round(out["load_ms"]),
        "first_cpu_ms": round(out["cpu_ms"][0], 1),
        "warm_cpu_ms": {"p50": round(percentile(cpu, 50), 1), "p95": round(percentile(cpu, 95), 1)},
        "warm_wall_ms": {"p50": round(percentile(wall, 50), 1), "p95": round(percentile(wall, 95), 1)},
        "questions": len(cpu),
    }


def question_targets(site: Path) -> dict[str, str]:
    """Docstring first line -> the node it came from (for questions drawn from docstrings)."""
    doc = json.loads(gzip.decompress(site_file(site, "bundle/index.json.gz").read_bytes()))
    nodes = doc["nodes"]
    out: dict[str, str] = {}
    for nid, docstring in zip(nodes["id"], nodes["docstring"], strict=True):
        if docstring:
            out.setdefault(docstring.strip().splitlines()[0].strip(), nid)
    return out


def first_page(site: Path) -> str:
    """The page the browser opens: the file with the most chunks (its page or its first part)."""
    doc = json.loads(gzip.decompress(site_file(site, "bundle/index.json.gz").read_bytes()))
    counts: dict[int, int] = {}
    for p in doc["chunks"]["path"]:
        counts[p] = counts.get(p, 0) + 1
    return str(doc["pages"][max(counts, key=lambda p: (counts[p], -p))])


# -- report -------------------------------------------------------------------------------------
def print_table(r: dict[str, Any]) -> None:
    s, c = r["sizes"], r["build"]["counts"]
    print(f"\n== {SPEC}: {c.get('files')} files, {c.get('lines'):,} lines, {c.get('chunks'):,} chunks")
    print(f"{'part':<14}{'MB':>9}{'MB gzip':>9}{'files':>8}")
    for g in (*GROUPS, "total", "first_answer", "full_answer"):
        v = s["groups"][g]
        print(f"{g:<14}{v['bytes'] / 1e6:>9.2f}{v['gzip'] / 1e6:>9.2f}{v['files']:>8}")
    print(
        f"site total {s['total_mb']} MB = {s['total_mb_per_1k_lines']} MB per 1k lines "
        f"({s['without_runtime_mb_per_1k_lines']} MB without the fixed runtime and model)"
    )
    big = s["largest_pages"][0]
    print(f"largest page {big[0]} {big[1] / 1e3:.0f} kB; pages over 300 kB: {len(s['pages_over_budget'])}")
    print(
        f"first answer needs {s['first_answer_gzip_mb']} MB gzipped (budget {BUDGETS['first_answer_gzip_mb']}), "
        f"the full answer {s['full_answer_gzip_mb']} MB"
    )
    b = r.get("browser")
    if b:
        w = b.get("warm_questions", {})
        print(f"{'visit':<6}{'MB wire':>9}{'requests':>10}{'s first answer':>16}")
        for visit in ("cold", "warm"):
            v = b[visit]
            print(f"{visit:<6}{v['bytes'] / 1e6:>9.2f}{v['requests']:>10}{v['seconds']:>16.2f}")
        print(f"cold runs s: {b['cold'].get('runs_s')}")
        flying = b["cold"].get("in_flight_at_first_answer", [])
        print(
            "cold, in flight at the first answer (not waited for): "
            + (", ".join(f"{p} {n / 1e6:.2f} MB" for p, n, _ in flying) or "none")
        )
        if w:
            print(f"{warm_line(w)} (budget p95 {BUDGETS['warm_p95_ms']} ms)")
        print(f"memory: {b['memory']}")
    rk = r.get("same_ranking")
    if rk:
        print(
            f"CLI vs bundle, {rk['questions']} questions: identical hits {rk['identical_hits']}, identical files "
            f"{rk['identical_files']}, top-10 overlap {rk['top10_overlap_mean']}, source in top 10 {rk['source_in_top10']}"
        )
        print(f"the bundle's core per question, CPU ms in CPython (not Pyodide): {rk['core_cpu_ms']}")
    py = r.get("pyodide_core", {})
    if "warm_cpu_ms" in py:
        print(
            f"the core under Pyodide (Node), {py['questions']} warm questions: CPU ms {py['warm_cpu_ms']}, "
            f"wall ms {py['warm_wall_ms']}; first question {py['first_cpu_ms']} ms; bundle load {py['load_ms']} ms"
        )
    print(f"load average before/after: {r['loadavg']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=50, help="warm questions after the first")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rebuild", action="store_true", help="re-index even when an index exists")
    ap.add_argument("--no-browser", action="store_true", help="sizes and rankings only")
    ap.add_argument("--out", type=Path, default=RESULT, help="where the JSON goes")
    args = ap.parse_args()
    os.environ.setdefault("OYA_CACHE_DIR", str(WORK / "cache"))
    WORK.mkdir(parents=True, exist_ok=True)
    load = load_avg()
    repo = corpus()
    print(f"building {SPEC} …", flush=True)
    index_dir, site, timings = build(repo, args.rebuild)
    lines = int(timings["counts"].get("lines", 0))
    drawn = large_questions(site, args.queries + 1 + len(LARGE_EXTRA), args.seed)[len(LARGE_EXTRA) :]
    questions = (EXTRA_QUESTIONS + drawn)[: args.queries + 1]  # site_bench's extras are Django's
    result: dict[str, Any] = {
        "spec": SPEC,
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "build": timings,
        "sizes": sizes(site, lines),
        "budgets": BUDGETS,
    }
    print("comparing the CLI's rankings with the bundle's …", flush=True)
    requests: list[dict[str, Any]] = []
    result["same_ranking"] = same_ranking(index_dir, site, questions, question_targets(site), requests)
    print("the core under Pyodide in Node …", flush=True)
    result["pyodide_core"] = pyodide_core(site, requests)
    if not args.no_browser:
        from bench.browser_harness import Network, measure

        print(f"measuring in Chromium ({len(questions)} questions) …", flush=True)
        result["browser"] = measure(
            site, questions, page=first_page(site), network=Network(), cold_runs=args.cold_runs
        )
    result["loadavg"] = {"before": load, "after": load_avg()}
    write_json(args.out, result, indent=1)
    print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
