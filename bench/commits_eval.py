"""Oya's file ranking on real fix commits (../shared/eval/commits), beside reference rows.

Usage (from the project root; the mirrors as the set's README says):

    OYA_MIRRORS=/work/.mirror nice -n 10 .venv/bin/python -m bench.commits_eval --per-repo 5
    ... -m bench.commits_eval --languages Go,Rust --per-repo 3
    ... -m bench.commits_eval --repos pallets/click,encode/httpx

For each query: the base tree is extracted (``materialize.sh``, cached in
bench/.cache/commits/trees/), indexed by ``oya build`` (index only; one index folder per
repository, so consecutive commits reuse parses and the embedding cache), and every row of
``commits_rank.IndexRankers`` ranks files for the commit message. Each row is scored by the
set's own ``score.py`` in three views: ``all`` (every indexed file may rank), ``source`` (the
same list with non-source files removed: tests, docs, change logs, templates, config) and
``prior`` (the same list with tests, docs, change logs and templates the question does not ask
about moved after the rest; issue 16 item 7). Tables per language and overall are printed and
written to bench/results/commits_eval.{json,md}; per-query rankings go to the cache (resumable
with --resume).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.commits_report import VIEWS, render_markdown, summarize
from bench.commits_set import EvalSet, sample
from bench.common import CACHE_DIR, RESULTS, ROOT, git_head, load_avg, write_json

CACHE = CACHE_DIR / "commits"  # this checkout's run log and rankings
# Trees, embeddings and indexes can be shared by several checkouts (OYA_COMMITS_CACHE); only one
# process may build at a time, the others rank from kept indexes (--kept-only).
STORE = Path(os.environ.get("OYA_COMMITS_CACHE", CACHE))
BYTES_PER_CHUNK = 1500  # seen on cobra: 407 chunks from 606 kB of tree


def build_index(tree: Path, out: Path) -> dict[str, Any]:
    """``oya build TREE --out OUT`` (index only) in a child process; its summary line counts."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), DAGSTER_HOME=str(_dagster_home()))
    env.setdefault("OYA_CACHE_DIR", str(STORE / "embed-cache"))
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "oya",
            "build",
            str(tree),
            "--out",
            str(out),
            "--cache-dir",
            env["OYA_CACHE_DIR"],
            "-q",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"oya build failed for {tree}: {proc.stderr.strip()[-500:]}")
    text = proc.stdout
    return {
        "seconds": time.perf_counter() - t0,
        "chunks": _count(text, "chunks"),
        "embedded": _count(text, "embedded"),
    }


def _count(text: str, word: str) -> int:
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")]
        for cell in cells:
            parts = cell.split()
            for i, p in enumerate(parts[1:], 1):
                if p.rstrip(",") == word and parts[i - 1].isdigit():
                    return int(parts[i - 1])
    return -1


def _dagster_home() -> Path:
    home = STORE / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    cfg = ROOT / "dagster.yaml"
    if cfg.exists() and not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text(cfg.read_text())
    return home


def run_queries(
    evalset: EvalSet,
    queries: Sequence[dict[str, Any]],
    done: dict[str, Any],
    log: Path,
    spread: bool,
    kept_only: bool = False,
    reference: dict[str, Any] | None = None,
) -> None:
    from bench.commits_rank import IndexRankers

    for q in interleaved(queries, spread):
        if q["id"] in done:
            continue
        if kept_only and not (kept_index(q["id"]) / "index.duckdb").exists():
            continue
        if reference is not None and q["id"] not in reference:
            continue
        tree = evalset.materialize(q["id"], STORE / "trees" / q["id"])
        out, built = index_for(q)
        t0 = time.perf_counter()
        rankers = IndexRankers(out, tree)
        try:
            rows = (
                rankers.rank(q["query"])
                if reference is None
                else with_reference(rankers.rank_oya(q["query"]), reference[q["id"]]["rows"])
            )
        finally:
            rankers.close()
        rec = {"id": q["id"], "rows": rows, "build": built, "rank_seconds": time.perf_counter() - t0}
        rec["confidence"] = rankers.confidence
        done[q["id"]] = rec
        with log.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(
            f"  {q['id']}: build {built['seconds']:.0f}s ({built['chunks']} chunks, {built['embedded']} embedded),"
            f" rank {rec['rank_seconds']:.1f}s, oya top1 {rows['oya'][:1]}",
            flush=True,
        )


def with_reference(mine: dict[str, list[str]], ref: dict[str, list[str]]) -> dict[str, list[str]]:
    """This checkout's Oya rows over another run's rows (``--reference-log``): the reference rows
    (BM25, embedding) depend on the tree and the question only, and the other run's ``oya`` and
    ``oya-nokinds`` rows become ``oya-main`` and ``oya-nokinds`` when it ran main's code."""
    rows = {
        ("oya-main" if k == "oya" else "oya-main-k30" if k == "oya-k30" else k): v for k, v in ref.items()
    }
    return {**rows, **mine}


def kept_index(query_id: str) -> Path:
    """Where a query's built index is kept, so rankings can be recomputed without building."""
    return STORE / "kept" / query_id


def index_for(q: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """The query's kept index if one exists; otherwise build the repository's rolling index for
    this tree (consecutive commits reuse parses and embeddings) and keep a copy of it."""
    kept = kept_index(q["id"])
    if (kept / "index.duckdb").exists():
        return kept, {"seconds": 0.0, "chunks": -1, "embedded": 0, "kept": True}
    tree = STORE / "trees" / q["id"]
    out = STORE / "index" / q["repo"].replace("/", "+")
    built = build_index(tree, out)
    tmp = kept.with_name(kept.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy2(out / "index.duckdb", tmp / "index.duckdb")
    tmp.rename(kept)
    return kept, built


def backfill_tree_rows(
    evalset: EvalSet, queries: Sequence[dict[str, Any]], done: dict[str, Any], log: Path
) -> None:
    """Add the ``bm25-tree`` row to logged queries that lack it (it needs the tree only)."""
    from bench.commits_rank import bm25_tree

    missing = [q for q in queries if "bm25-tree" not in done[q["id"]]["rows"]]
    for q in missing:
        tree = evalset.materialize(q["id"], STORE / "trees" / q["id"])
        done[q["id"]]["rows"]["bm25-tree"] = bm25_tree(tree, q["query"])
    if missing:
        log.write_text("".join(json.dumps(rec) + "\n" for rec in done.values()))
        print(f"bm25-tree row added to {len(missing)} logged queries", flush=True)


def interleaved(queries: Sequence[dict[str, Any]], spread: bool) -> list[dict[str, Any]]:
    """Rounds over the repositories, so a run stopped early still covers every repository and
    language: oldest fix first, then (``spread``) the newest and the middle ones, or the next."""
    by_repo: dict[str, list[dict[str, Any]]] = {}
    for q in queries:
        by_repo.setdefault(q["repo"], []).append(q)
    keyed = []
    for qs in by_repo.values():
        for rnd, i in enumerate(spread_order(len(qs)) if spread else range(len(qs))):
            keyed.append((rnd, qs[i]))
    return [q for _, q in sorted(keyed, key=lambda t: t[0])]


def spread_order(n: int) -> list[int]:
    """0 .. n-1 as ends first, then repeated midpoints: 5 -> [0, 4, 2, 1, 3]."""
    if n <= 0:
        return []
    order, spans = [0], [(0, n - 1)]
    if n > 1:
        order.append(n - 1)
    while spans:
        lo, hi = spans.pop(0)
        if hi - lo < 2:
            continue
        mid = (lo + hi) // 2
        order.append(mid)
        spans += [(lo, mid), (mid, hi)]
    return order


def load_log(log: Path) -> dict[str, Any]:
    done: dict[str, Any] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                done[rec["id"]] = rec
    return done


def default_set() -> Path:
    """``../shared/eval/commits`` seen from the project root, or from a folder above it (worktrees)."""
    for parent in ROOT.parents:
        cand = parent / "shared" / "eval" / "commits"
        if cand.exists():
            return cand
    return ROOT.parent / "shared" / "eval" / "commits"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--set", default=str(default_set()), help="the eval set folder (default: ../shared/eval/commits)"
    )
    ap.add_argument("--repos", default="", help="comma-separated owner/name (default: all)")
    ap.add_argument("--languages", default="", help="comma-separated languages as the set labels them")
    ap.add_argument("--per-repo", type=int, default=0, help="queries per repository (0 = all); see --sample")
    ap.add_argument(
        "--sample",
        default="oldest",
        choices=["oldest", "spread"],
        help="with --per-repo: the oldest fixes (cheap: consecutive trees share chunks) or evenly spread",
    )
    ap.add_argument("--jobs", type=int, default=1, choices=[1], help="one query at a time (2 shared cores)")
    ap.add_argument("--resume", action="store_true", help="keep rankings already in the run log")
    ap.add_argument(
        "--kept-only",
        action="store_true",
        help="rank only queries whose index is kept (OYA_COMMITS_CACHE); build nothing",
    )
    ap.add_argument(
        "--reference-log",
        default="",
        help="a run log (runs.jsonl) of main's code over the same kept indexes: rank only this "
        "checkout's Oya rows and take the reference rows (and main's oya as oya-main) from it",
    )
    ap.add_argument("--out", default=str(RESULTS / "commits_eval.json"))
    ap.add_argument(
        "--log",
        default=str(CACHE / "runs.jsonl"),
        help="the run log (default: bench/.cache/commits/runs.jsonl); another path lets a ranking run "
        "from kept indexes go on beside a building one",
    )
    ap.add_argument("--report-only", action="store_true", help="score what the run log holds; build nothing")
    ap.add_argument("--estimate-only", action="store_true", help="print the chunk estimate and stop")
    a = ap.parse_args(argv)

    evalset = EvalSet(Path(a.set))
    queries = sample(evalset.queries, a.repos, a.languages, a.per_repo, a.sample)
    if not queries:
        print("no queries match --repos/--languages", file=sys.stderr)
        return 2
    est = evalset.estimate_chunks(queries, BYTES_PER_CHUNK)
    print(
        f"{len(queries)} queries from {len({q['repo'] for q in queries})} repositories; first builds embed about "
        f"{est:,} chunks (~{est / 80 / 60:.0f} min at 80 chunks/s idle; later commits embed only changed chunks)",
        flush=True,
    )
    if a.estimate_only:
        return 0
    log = Path(a.log)
    log.parent.mkdir(parents=True, exist_ok=True)
    done = load_log(log) if a.resume or a.report_only else {}
    if not (a.resume or a.report_only) and log.exists():
        log.unlink()
    t0 = time.perf_counter()
    if a.report_only:
        queries = [q for q in queries if q["id"] in done]
        backfill_tree_rows(evalset, queries, done, log)
    else:
        reference = load_log(Path(a.reference_log)) if a.reference_log else None
        run_queries(evalset, queries, done, log, a.sample == "spread", a.kept_only, reference)
        queries = [q for q in queries if q["id"] in done]
    result = summarize(evalset, queries, done, log.parent / "preds")
    result["meta"] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_head(),
        "queries": len(queries),
        "options": {"repos": a.repos, "languages": a.languages, "per_repo": a.per_repo, "sample": a.sample},
        "seconds": round(time.perf_counter() - t0, 1),
        "loadavg": load_avg(),
        "views": VIEWS,
    }
    out = Path(a.out)
    write_json(out, result, indent=1)
    md = render_markdown(result)
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
