"""Index a real open-source project and measure Oya: build speed and memory, rebuilds, search latency.

Theory of operation:

* The corpus is a PyPI source distribution (``bench/corpus.py``), unpacked once and cached.
* Every build runs ``pipelines.build.run_build`` (the Dagster job ``oya build`` runs) in a CHILD
  process, so its peak RSS is the child's own ``ru_maxrss`` from ``os.wait4`` and nothing of
  this process leaks into it. The child writes the build summary as JSON.
* Build 1 indexes the tree as it is (it embeds whatever the shared embedding cache lacks),
  build 2 rebuilds with nothing changed (must embed 0), build 3 indexes a copy of the tree in
  which one function got one extra line, into a copy of build 2's output folder (so it reuses
  the unchanged files' parses, chunks and tokens from the previous index, as a rebuild in place
  does). The chunks that edit changes are computed beforehand
  in-process and their cache entries (and only those: their text carries the bench marker) are
  deleted, so build 3 really embeds them on every run of the bench.
* Queries are the first lines of the project's own docstrings (functions and methods outside
  tests, unique first lines, at least four words), sampled with a fixed seed. Latency is warm
  and in-process: the Searcher is opened once and warmed with three other queries. Recall@10
  counts a query as found when any chunk of the function it documents is in the top 10; the
  docstring is inside that chunk, so the number is optimistic (a sanity check, not a quality
  claim).

Run: ``.venv/bin/python -m bench.index_bench [--project networkx==3.6.1] [--embedder minilm|hashing]
[--queries 100]``; results go to ``bench/results/index_bench.json``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import CACHE_DIR, RESULTS, ROOT, Stopwatch, load_avg, machine, percentile, write_json
from bench.corpus import fetch_project, parse_spec

RESULT = RESULTS / "index_bench.json"
EDIT_MARKER = "_oya_bench_edit"
NON_EMBED_ASSETS = ("source_files", "code_graph", "chunks", "search_index")
TARGETS = {
    "search_p95_ms": 100.0,  # warm, at >= 10k chunks
    "non_embed_lines_per_s": 20_000.0,
    "one_file_rebuild_s_per_100k_lines": 10.0,
}


# -- the child build ---------------------------------------------------------------------------
def _child_build(argv: Sequence[str]) -> None:
    repo, out, embedder, cache_dir, summary_path = argv
    from pipelines.build import run_build

    t0 = time.perf_counter()
    summary = run_build(
        Path(repo), Path(out), embedder=embedder, cache_dir=Path(cache_dir) if cache_dir else None
    ).to_dict()
    summary["child_run_build_seconds"] = time.perf_counter() - t0
    Path(summary_path).write_text(json.dumps(summary, default=str))


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[int, str, Any, float]:
    """Run ``cmd`` from the repository root: exit code, stderr, its own rusage and wall seconds."""
    with Stopwatch() as wall:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        stderr = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
    return os.waitstatus_to_exitcode(status), stderr, usage, wall.seconds


def run_child_build(
    repo: Path, out: Path, embedder: str, cache_dir: Path | None, profile: Path | None = None
) -> dict[str, Any]:
    """One ``oya build`` in a fresh process: its summary, wall seconds and peak RSS."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        summary_path = Path(fh.name)
    cmd = [sys.executable]
    if profile is not None:
        cmd += ["-m", "cProfile", "-o", str(profile)]
    cmd += ["-m", "bench.index_bench", "--child-build"]
    cmd += [str(repo), str(out), embedder, str(cache_dir or ""), str(summary_path)]
    env = dict(os.environ)
    if "DAGSTER_HOME" not in env:  # Dagster wants a home; keep telemetry off as the repo's own does
        home = CACHE_DIR / "dagster_home"
        home.mkdir(parents=True, exist_ok=True)
        if (ROOT / "dagster.yaml").exists() and not (home / "dagster.yaml").exists():
            shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
        env["DAGSTER_HOME"] = str(home)
    returncode, stderr, usage, wall = run_measured(cmd, env)
    try:
        if returncode != 0:
            raise RuntimeError(f"the child build failed ({returncode}):\n{stderr[-3000:]}")
        summary = json.loads(summary_path.read_text())
    finally:
        summary_path.unlink(missing_ok=True)
    md = summary["metadata"]
    return {
        "wall_seconds": round(wall, 3),
        "run_build_seconds": round(summary["seconds"], 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: KiB
        "cpu_user_s": round(usage.ru_utime, 2),
        "cpu_sys_s": round(usage.ru_stime, 2),
        "assets_seconds": {row["asset"]: row["seconds"] for row in summary["assets"]},
        "files": md["source_files"]["files"],
        "lines": md["source_files"]["lines"],
        "skipped": md["source_files"]["skipped"],
        "symbols": md["code_graph"]["symbols"],
        "edges": md["code_graph"]["edges"],
        "parses_reused": md["code_graph"].get("parses_reused", 0),
        "chunks": md["chunks"]["chunks"],
        "embedded": md["chunk_embeddings"]["embedded"],
        "cached": md["chunk_embeddings"]["cached"],
        "model": md["chunk_embeddings"]["model"],
        "index_mb": round(md["search_index"]["bytes"] / 1e6, 1),
        "checks": summary["checks"],
        "index": summary["index"],
    }


def derive(build: dict[str, Any]) -> dict[str, Any]:
    non_embed = sum(build["assets_seconds"][a] for a in NON_EMBED_ASSETS)
    embed_s = build["assets_seconds"]["chunk_embeddings"]
    return {
        "non_embed_seconds": round(non_embed, 3),
        "non_embed_lines_per_s": round(build["lines"] / non_embed) if non_embed else None,
        "embed_chunks_per_s": round(build["embedded"] / embed_s, 1)
        if build["embedded"] and embed_s
        else None,
        "dagster_overhead_seconds": round(
            build["run_build_seconds"] - sum(build["assets_seconds"].values()), 3
        ),
        "process_overhead_seconds": round(build["wall_seconds"] - build["run_build_seconds"], 3),
    }


# -- the one-function edit -----------------------------------------------------------------------
def _is_test(path: str) -> bool:
    parts = path.split("/")
    return any(p in ("tests", "test", "testing") for p in parts) or parts[-1].startswith("test_")


_NOT_LIBRARY = ("doc/", "docs/", "examples/", "benchmarks/", "tools/", "scripts/")


def choose_edit(src: Path, seed: int) -> tuple[str, str, int, int]:
    """(relative path, function, 1-based line, column) of the statement after the docstring of a
    module-level library function (docstring plus at least three statements), picked with ``seed``."""
    candidates: list[tuple[str, str, int, int]] = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if _is_test(rel) or rel.startswith(_NOT_LIBRARY) or "/" not in rel:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:  # module-level functions only: one chunk, one node
            if isinstance(node, ast.FunctionDef) and ast.get_docstring(node) and len(node.body) >= 4:
                first = node.body[1]  # the statement after the docstring; never a decorated def
                if not isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    candidates.append((rel, node.name, first.lineno, first.col_offset))
    if not candidates:
        raise RuntimeError(f"no editable function found under {src}")
    return random.Random(seed).choice(candidates)


def apply_edit(tree: Path, rel: str, line: int, col: int, marker_value: str) -> None:
    """Insert one assignment before ``line``: the function's body changes, later lines shift."""
    path = tree / rel
    lines = path.read_text(encoding="utf-8").split("\n")
    lines.insert(
        line - 1, " " * col + f"{EDIT_MARKER} = {marker_value!r}  # one-line edit by bench/index_bench.py"
    )
    path.write_text("\n".join(lines), encoding="utf-8")


def changed_embed_texts(original_index: Path, edited_tree: Path) -> tuple[dict[str, str], list[str]]:
    """Embed texts (by cache key-less text) of the edited tree that the original index lacks,
    with their paths; computed with the same pipeline functions the build uses."""
    from oya.build import steps
    from oya.embedding.embedder import embed_text
    from oya.store.index import Index

    with Index(original_index) as idx:
        before = {embed_text(c) for c in idx.all_chunks()}
    scan = steps.scan(edited_tree)
    graph = steps.parse_and_link(scan)
    chunks = steps.make_chunks(scan, graph)
    new = {embed_text(c): c.path for c in chunks if embed_text(c) not in before}
    return new, sorted(set(new.values()))


def evict(cache_path: Path, model_id: str, texts: Sequence[str]) -> int:
    """Delete the cache entries of ``texts``: chunk texts that exist only because of the bench's
    edit (the caller checks they are absent from the original index), so no real entry goes."""
    from oya.embedding.cache import EmbeddingCache

    if not cache_path.exists() or not texts:
        return 0
    cache = EmbeddingCache(cache_path)
    try:
        keys = [cache.key(model_id, t) for t in texts]
        with cache.con:
            cur = cache.con.executemany("DELETE FROM vectors WHERE key = ?", [(k,) for k in keys])
        return cur.rowcount if cur.rowcount >= 0 else len(keys)
    finally:
        cache.close()


# -- queries -------------------------------------------------------------------------------------
def docstring_queries(
    index_dir: Path, n: int, seed: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(query, node id) pairs: ``n`` for measuring and 3 others for warming up."""
    from oya.store.index import Index

    with Index(index_dir) as idx:
        rows = idx.con.execute(
            "SELECT id, path, docstring FROM nodes WHERE kind IN ('function', 'method') AND docstring <> '' ORDER BY id"
        ).fetchall()
    by_line: dict[str, list[str]] = {}
    for nid, path, doc in rows:
        if _is_test(str(path)) or str(path).startswith(("doc/", "docs/")):
            continue
        first = str(doc).strip().splitlines()[0].strip()
        if len(first.split()) >= 4 and len(first) >= 20:
            by_line.setdefault(first, []).append(str(nid))
    unique = sorted((line, ids[0]) for line, ids in by_line.items() if len(ids) == 1)
    rng = random.Random(seed)
    picked = rng.sample(unique, min(len(unique), n + 3))
    return picked[3:], picked[:3]


class TimedEmbedder:
    """Wraps the Searcher's embedder to time query embedding separately."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.last_ms = 0.0

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        t0 = time.perf_counter()
        out = self.inner.embed(texts)
        self.last_ms = (time.perf_counter() - t0) * 1000
        return out


def measure_queries(
    index_dir: Path, queries: list[tuple[str, str]], warmup: list[tuple[str, str]], k: int
) -> dict[str, Any]:
    from oya.query.searcher import Searcher

    with Stopwatch() as opening:
        searcher = Searcher.open(index_dir)
    timed = TimedEmbedder(searcher.embedder) if searcher.embedder is not None else None
    searcher.embedder = timed
    cold: list[float] = []
    for q, _ in warmup:
        with Stopwatch() as sw:
            searcher.search(q, k=k)
        cold.append(sw.ms)
    totals: list[float] = []
    embeds: list[float] = []
    channels: dict[str, list[float]] = {}
    found = 0
    rr = 0.0
    misses: list[dict[str, Any]] = []
    targets = searcher.index.chunk_ids_for_nodes([nid for _, nid in queries])
    for q, nid in queries:
        with Stopwatch() as sw:
            result = searcher.search(q, k=k)
        totals.append(sw.ms)
        embeds.append(timed.last_ms if timed else 0.0)
        for name, ms in result.timings_ms.items():
            channels.setdefault(name, []).append(ms)
        ids = [h.chunk.id for h in result.hits[:k]]
        want = set(targets.get(nid, ()))
        rank = next((i for i, cid in enumerate(ids, 1) if cid in want), None)
        if rank is not None:
            found += 1
            rr += 1 / rank
        elif len(misses) < 5:
            misses.append({"query": q, "target": nid, "top1": ids[0] if ids else None})
    searcher.index.close()
    rest = [t - e for t, e in zip(totals, embeds, strict=True)]

    def summary(vals: list[float]) -> dict[str, float]:
        return {
            "p50": round(percentile(vals, 50), 2),
            "p95": round(percentile(vals, 95), 2),
            "max": round(max(vals), 2),
            "mean": round(statistics.fmean(vals), 2),
        }

    return {
        "queries": len(queries),
        "k": k,
        "open_ms": round(opening.ms, 1),
        "warmup_ms": [round(v, 1) for v in cold],
        "total_ms": summary(totals),
        "query_embedding_ms": summary(embeds),
        "search_without_embedding_ms": summary(rest),
        "query_embedding_share": round(sum(embeds) / sum(totals), 3),
        "engine_timings_p50_ms": {name: round(percentile(v, 50), 2) for name, v in sorted(channels.items())},
        "recall_at_k": round(found / len(queries), 3),
        "mrr_at_k": round(rr / len(queries), 3),
        "example_misses": misses,
    }


def print_profile(prof: Path, out: Path, top: int = 40) -> None:
    """The unchanged rebuild's hottest functions (cumulative and own time) as text."""
    import io
    import pstats

    buf = io.StringIO()
    stats = pstats.Stats(str(prof), stream=buf)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    out.write_text(buf.getvalue())
    print(f"profile of the unchanged rebuild: {out}")


# -- report ----------------------------------------------------------------------------------------
def print_report(r: dict[str, Any], out: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    m = r["machine"]
    con.print(
        f"[bold]oya index bench[/bold] — {r['project']} ({r['embedder']}) on {m['host']}, {m['cpus']} CPUs "
        f"{m['cpu']}, {m['memory_gb']} GB, {m['date_utc']}, load {m['load_avg_start']} -> {m['load_avg_end']}"
    )

    b = r["builds"]
    t = Table(title="builds", header_style="bold")
    t.add_column("")
    names = list(b)
    for name in names:
        t.add_column(name, justify="right")
    rows = [
        ("files", "files"),
        ("lines", "lines"),
        ("symbols", "symbols"),
        ("edges", "edges"),
        ("parses reused", "parses_reused"),
        ("chunks", "chunks"),
        ("embedded", "embedded"),
        ("cached", "cached"),
    ]
    for label, key in rows:
        t.add_row(label, *[f"{b[n][key]:,}" for n in names])
    for asset in ("source_files", "code_graph", "chunks", "chunk_embeddings", "search_index"):
        t.add_row(f"  {asset} s", *[f"{b[n]['assets_seconds'][asset]:.2f}" for n in names])
    t.add_row("non-embedding s", *[f"{b[n]['derived']['non_embed_seconds']:.2f}" for n in names])
    t.add_row("lines/s (non-embedding)", *[f"{b[n]['derived']['non_embed_lines_per_s']:,}" for n in names])
    t.add_row("chunks/s embedded", *[str(b[n]["derived"]["embed_chunks_per_s"] or "-") for n in names])
    t.add_row("Dagster overhead s", *[f"{b[n]['derived']['dagster_overhead_seconds']:.2f}" for n in names])
    t.add_row("run_build s", *[f"{b[n]['run_build_seconds']:.2f}" for n in names])
    t.add_row("process wall s", *[f"{b[n]['wall_seconds']:.2f}" for n in names])
    t.add_row("peak RSS MB", *[f"{b[n]['peak_rss_mb']:,.0f}" for n in names])
    t.add_row("CPU user+sys s", *[f"{b[n]['cpu_user_s'] + b[n]['cpu_sys_s']:.1f}" for n in names])
    t.add_row("index MB", *[f"{b[n]['index_mb']}" for n in names])
    con.print(t)

    e = r["edit"]
    con.print(
        f"edit: one line into [bold]{e['function']}[/bold] in {e['path']}; chunks it changes: "
        f"{e['expected_changed_chunks']} (in {', '.join(e['changed_paths'])}); evicted from cache: {e['evicted']}"
    )

    q = r["queries"]
    t = Table(title=f"warm search, {q['queries']} docstring queries, k={q['k']}", header_style="bold")
    t.add_column("ms")
    for col in ("p50", "p95", "max", "mean"):
        t.add_column(col, justify="right")
    for label, key in (
        ("search (total)", "total_ms"),
        ("  query embedding", "query_embedding_ms"),
        ("  everything else", "search_without_embedding_ms"),
    ):
        t.add_row(label, *[f"{q[key][c]:.1f}" for c in ("p50", "p95", "max", "mean")])
    con.print(t)
    con.print(
        f"query-embedding share of search time: {q['query_embedding_share']:.0%}; engine p50 ms: "
        + ", ".join(f"{k} {v}" for k, v in q["engine_timings_p50_ms"].items())
    )
    con.print(f"open {q['open_ms']:.0f} ms; warm-up queries {q['warmup_ms']} ms")
    con.print(
        f"Recall@{q['k']} docstring first line -> its own function: {q['recall_at_k']:.3f} "
        f"(MRR {q['mrr_at_k']:.3f}); optimistic: the docstring is inside the indexed chunk"
    )

    t = Table(title="targets", header_style="bold")
    for col in ("target", "measured", "goal", "met"):
        t.add_column(col)
    for row in r["targets"]:
        t.add_row(
            row["target"],
            row["measured"],
            row["goal"],
            "[green]yes[/green]" if row["met"] else "[red]NO[/red]",
        )
    con.print(t)
    con.print(f"written: {out}")


def judge(r: dict[str, Any]) -> list[dict[str, Any]]:
    full, edit = r["builds"]["full"], r["builds"]["one_file_edit"]
    q = r["queries"]
    # only the per-line work scales with size; embedding the edit (mostly loading the model) and
    # Dagster's own overhead are fixed costs, so a plain linear scaling would flatter a big corpus
    d = edit["derived"]
    per_100k = (
        d["non_embed_seconds"] * 100_000 / edit["lines"]
        + edit["assets_seconds"]["chunk_embeddings"]
        + d["dagster_overhead_seconds"]
    )
    lps = min(r["builds"][n]["derived"]["non_embed_lines_per_s"] for n in r["builds"])
    return [
        {
            "target": f"warm search p95 ({full['chunks']:,} chunks)",
            "measured": f"{q['total_ms']['p95']:.1f} ms",
            "goal": "<= 100 ms at >= 10k chunks",
            "met": q["total_ms"]["p95"] <= TARGETS["search_p95_ms"] and full["chunks"] >= 10_000,
        },
        {
            "target": "non-embedding throughput (slowest build)",
            "measured": f"{lps:,} lines/s",
            "goal": ">= 20,000 lines/s",
            "met": lps >= TARGETS["non_embed_lines_per_s"],
        },
        {
            "target": f"one-file rebuild ({edit['lines']:,} lines)",
            "measured": f"{edit['run_build_seconds']:.1f} s run_build, {edit['wall_seconds']:.1f} s process; "
            f"at 100k lines about {per_100k:.1f} s run_build (non-embedding scaled, the rest fixed)",
            "goal": "<= 10 s on 100k lines",
            "met": per_100k <= TARGETS["one_file_rebuild_s_per_100k_lines"],
        },
        {
            "target": "unchanged rebuild embeds 0",
            "measured": str(r["builds"]["unchanged"]["embedded"]),
            "goal": "0",
            "met": r["builds"]["unchanged"]["embedded"] == 0,
        },
        {
            "target": "edit embeds only its changed chunks",
            "measured": f"{edit['embedded']} embedded",
            "goal": f"{r['edit']['expected_changed_chunks']} (one file)",
            "met": edit["embedded"] == r["edit"]["expected_changed_chunks"]
            and len(r["edit"]["changed_paths"]) == 1,
        },
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["--child-build"]:
        _child_build(args_in[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--project", default="networkx==3.6.1", help="PyPI pin of the source distribution to index"
    )
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="embedding cache (default: $OYA_CACHE_DIR or ~/.cache/oya)",
    )
    ap.add_argument(
        "--profile-rebuild",
        action="store_true",
        help="afterwards, cProfile one more unchanged rebuild into results/rebuild_profile.txt",
    )
    ap.add_argument("--out", type=Path, default=RESULT)
    ap.add_argument("--reprint", action="store_true", help="re-judge and print the results file; run nothing")
    args = ap.parse_args(args_in)
    if args.reprint:
        report = json.loads(args.out.read_text())
        report["targets"] = judge(report)
        write_json(args.out, report)
        print_report(report, args.out)
        return 0
    if args.queries < 50:
        ap.error("use at least 50 queries")

    report: dict[str, Any] = {"project": args.project, "embedder": args.embedder, "machine": machine()}
    name, version = parse_spec(args.project)
    src = fetch_project(args.project)
    tag = f"{src.name}-{args.embedder}"
    index_dir = CACHE_DIR / "index" / tag
    print(f"corpus: {src}", flush=True)

    builds: dict[str, dict[str, Any]] = {}
    print("build 1/3: full ...", flush=True)
    builds["full"] = run_child_build(src, index_dir, args.embedder, args.cache_dir)
    print(f"  {builds['full']['run_build_seconds']:.1f} s, embedded {builds['full']['embedded']}", flush=True)
    print("build 2/3: unchanged rebuild ...", flush=True)
    builds["unchanged"] = run_child_build(src, index_dir, args.embedder, args.cache_dir)

    # build 3: a copy of the tree with one function edited
    edited = CACHE_DIR / "src-edited" / src.name
    shutil.rmtree(edited, ignore_errors=True)
    shutil.copytree(src, edited, symlinks=True)
    rel, func, line, col = choose_edit(src, args.seed)
    apply_edit(edited, rel, line, col, args.project)
    new_texts, changed_paths = changed_embed_texts(index_dir, edited)
    from oya.embedding.embedder import make_embedder
    from oya.settings import CachePaths

    model_id = make_embedder(args.embedder).model_id
    cache_path = CachePaths.resolve(args.cache_dir).embeddings(model_id)
    evicted = evict(cache_path, model_id, [t for t, path in new_texts.items() if path == rel])
    report["edit"] = {
        "path": rel,
        "function": func,
        "line": line,
        "expected_changed_chunks": len(new_texts),
        "changed_paths": changed_paths,
        "evicted": evicted,
    }
    print(f"build 3/3: one-function edit ({rel}::{func}) ...", flush=True)
    # the edited tree's output folder starts as the unchanged build's (as when a user edits a
    # file and rebuilds in place), so the build finds the previous index to reuse from
    edited_out = CACHE_DIR / "index" / f"{tag}-edited"
    shutil.rmtree(edited_out, ignore_errors=True)
    shutil.copytree(index_dir, edited_out)
    builds["one_file_edit"] = run_child_build(edited, edited_out, args.embedder, args.cache_dir)
    for b in builds.values():
        b["derived"] = derive(b)
    report["builds"] = builds

    print("queries ...", flush=True)
    queries, warmup = docstring_queries(index_dir, args.queries, args.seed)
    if len(queries) < 50:
        raise SystemExit(f"only {len(queries)} usable docstring queries in {args.project}; need 50")
    report["queries"] = measure_queries(index_dir, queries, warmup, args.k)
    report["queries"]["sample"] = [q for q, _ in queries[:5]]
    report["machine"]["load_avg_end"] = load_avg()
    report["targets"] = judge(report)

    write_json(args.out, report)
    print_report(report, args.out)
    if args.profile_rebuild:  # an extra build: cProfile slows it, so it is not in the table
        profile = CACHE_DIR / "rebuild.prof"
        run_child_build(src, index_dir, args.embedder, args.cache_dir, profile)
        print_profile(profile, args.out.parent / "rebuild_profile.txt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
