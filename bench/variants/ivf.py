"""The vectors as a coarse index (IVF), the variant issue 26 measured and did not ship: its lists and
what a question would fetch, over a big-site bench site.

Theory of operation: the site ships the int8 vectors as one shard that the first semantic question
fetches whole (docs/DECISIONS.md "The vectors stay one shard"). The variant cut them into lists by
spherical k-means (Dhillon & Modha, "Concept decompositions for large sparse text data using
clustering", 2001: each unit row to the centroid of highest cosine, a centroid its members'
normalised mean), ``LISTS_PER_SQRT * sqrt(N)`` lists from rows drawn with a fixed seed, and a
question fetched the centroids plus the ``PROBE_FRACTION`` of lists nearest it. ``plan_ivf`` is the
site build's list maker as it was at tag ``variant-ivf26`` (where the reader's side, in the core and
the worker, still is); ``measure`` replays the big-site bench's questions over a built site in
CPython: the semantic top ``DEPTH``'s recall against the exact search, and the bytes each question
would fetch (lists not fetched by an earlier question; a list's row is int8 ``dim`` + a float32
scale + an int32 row number), against the whole shard's.

Measured in the browser at the tag (2026-11-28, ``bench/results/archive/issue26_ivf_*.json``):
sympy's first semantic question 18.0 -> 9.32 MB of vectors (still ~linear), warm p95 787 -> 1,905 ms
(networkx 378 -> 491): each new question fetches new lists.

Run: ``OYA_CACHE_DIR=... python -m bench.variants.ivf --corpus networkx`` (after
``bench.big_site_bench --phase build`` made the site); prints JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

LISTS_PER_SQRT = 2.0
PROBE_FRACTION = 0.5
KMEANS_ITERATIONS = 20
SEED = 0
DEPTH = 100  # the semantic channel's fetch depth


@dataclass(frozen=True)
class IvfPlan:
    """``members[n]``: the rows of list ``n``; ``centroids``: unit rows, in chain order."""

    nprobe: int
    centroids: np.ndarray
    members: list[np.ndarray]


def _kmeans(x: np.ndarray, lists: int) -> np.ndarray:
    """Spherical k-means centroids (unit rows) of the unit rows ``x``."""
    rng = np.random.default_rng(SEED)
    cent = x[np.sort(rng.choice(len(x), lists, replace=False))].copy()
    for _ in range(KMEANS_ITERATIONS):
        assign = np.argmax(x @ cent.T, axis=1)
        sums = np.zeros_like(cent)
        np.add.at(sums, assign, x)
        norms = np.linalg.norm(sums, axis=1)
        kept = norms > 0  # an empty cluster keeps its centroid
        cent[kept] = sums[kept] / norms[kept, None]
    return cent


def _chain(cent: np.ndarray) -> list[int]:
    """The lists in chain order (lists cut into one shard tend to be probed together): from list 0,
    each next the unvisited one nearest the last."""
    sims = cent @ cent.T
    order, left = [0], np.ones(len(cent), dtype=bool)
    left[0] = False
    while left.any():
        nxt = int(np.argmax(np.where(left, sims[order[-1]], -np.inf)))
        order.append(nxt)
        left[nxt] = False
    return order


def plan_ivf(x: np.ndarray, probe_fraction: float = PROBE_FRACTION) -> IvfPlan:
    """The IVF lists of the rows ``x`` (``N x dim``, the readers' float rows)."""
    x = x.astype(np.float64)
    lists = max(1, min(len(x), round(LISTS_PER_SQRT * math.sqrt(len(x)))))
    cent = _kmeans(x, lists)
    cent = cent[_chain(cent)]
    assign = np.argmax(x @ cent.T, axis=1)
    return IvfPlan(
        nprobe=max(1, min(lists, math.ceil(probe_fraction * lists))),
        centroids=cent,
        members=[np.flatnonzero(assign == i) for i in range(lists)],
    )


def site_vectors(manifest: dict[str, Any], read: Any) -> np.ndarray:
    """The site's vectors shard as float rows (int8 times each row's float32 scale)."""
    vt = manifest["vectors"]
    raw = read(vt["file"])
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    count, dim = int(vt["count"]), int(vt["dim"])
    scales = np.frombuffer(data, "<f4", count, int(vt["scales_offset"]))
    q8 = np.frombuffer(data, np.int8, count * dim, int(vt["data_offset"])).reshape(count, dim)
    return q8.astype(np.float32) * scales[:, None]


def measure(x: np.ndarray, questions: np.ndarray, plan: IvfPlan) -> dict[str, Any]:
    """Recall of the top ``DEPTH`` and bytes per question, the questions asked in order."""
    n, dim = x.shape
    row_bytes = dim + 4 + 4
    fetched: set[int] = set()
    recalls, first_bytes, later = [], 0, []
    for i, q in enumerate(questions):
        exact = set(np.argsort(-(x @ q), kind="stable")[:DEPTH].tolist())
        probed = np.argsort(-(plan.centroids @ q), kind="stable")[: plan.nprobe].tolist()
        rows = np.concatenate([plan.members[p] for p in probed])
        near = rows[np.argsort(-(x[rows] @ q), kind="stable")[:DEPTH]]
        recalls.append(len(exact & set(near.tolist())) / min(DEPTH, n))
        new = sum(len(plan.members[p]) for p in probed if p not in fetched) * row_bytes
        fetched.update(probed)
        if i == 0:
            first_bytes = new + len(plan.centroids) * (dim + 4)
        else:
            later.append(new)
    return {
        "vectors": n,
        "lists": len(plan.members),
        "nprobe": plan.nprobe,
        "recall_mean": round(float(np.mean(recalls)), 4),
        "recall_min": round(float(np.min(recalls)), 4),
        "whole_shard_bytes": n * (dim + 4),
        "first_question_bytes": first_bytes,
        "later_question_bytes_p50": int(np.percentile(later, 50)) if later else 0,
        "later_question_bytes_p95": int(np.percentile(later, 95)) if later else 0,
    }


def main() -> int:
    from bench.big_site_bench import CORPORA, Shards, docstring_questions
    from oya.core.shard_store import folder_fetch
    from oya.query.searcher import Searcher

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="networkx")
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    c = CORPORA[args.corpus]
    shards = Shards.of(c.work / "site")
    manifest, graph = shards.tables()
    x = site_vectors(manifest, folder_fetch(shards.folder))
    questions = [*c.questions, *docstring_questions(graph, args.queries, 0)]
    with Searcher.open(c.work / "out") as searcher:
        vectors = [searcher.embed_query(q)[0] for q in questions]
    qs = np.array([v for v in vectors if v], dtype=np.float32)
    print(json.dumps({"corpus": args.corpus, **measure(x, qs, plan_ivf(x))}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
