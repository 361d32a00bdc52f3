"""A losing variant, kept runnable: MMR diversity over the fused hits (docs/DECISIONS.md).

It left the shipped core (was ``oya/core/diversity.py`` and ``RetrievalOptions.diversity``):
at 0.3 it cost up to 4.1 points of connected-code coverage and won at most +0.2
(bench/results/eval_quality.md). ``with_mmr(pipeline, ...)`` inserts it as a stage after
file ranking, where it ran before; ``bench/eval_quality.py`` measures it.

Diversity: Maximal Marginal Relevance over fused hits, redundancy = cosine blended with graph proximity.

Theory of operation (Carbonell & Goldstein, "The Use of MMR, Diversity-Based Reranking for
Reordering Documents and Producing Summaries", SIGIR 1998):

    next = argmax over unpicked d of  (1 - diversity) * rel(d) - diversity * max over picked p of sim(d, p)

* ``rel`` is the fused score divided by the best fused score, so it lies in (0, 1] whatever the
  fusion's scale.
* ``sim`` blends two views of "the same thing twice": the cosine of the two chunks' unit vectors,
  and their proximity in the code graph (1 for the same symbol, 1/2 for symbols one edge apart,
  0 otherwise) — a caller and its callee say different things even when their vectors are close,
  but two overloads of one helper say the same. ``graph_weight`` is the share of the graph view.
  A candidate without a vector (no semantic channel in this index) is compared by the graph view
  alone, so the stage still works, and does nothing harmful, when vectors are absent.
* ``diversity = 0`` returns the input order unchanged. Ties are broken by input order, so the
  result is deterministic.
* Only the first ``k`` picks are made by MMR; the rest keep their fused order behind them (the
  caller cuts at ``k`` anyway, and pairwise work stays O(k * n)).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from bench.variants import inserted
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query
from oya.core.vectors import decode_f32

NeighborFn = Callable[[str], Sequence[str]]
# chunk ids -> their unit vectors (the ids the source holds; a missing one is compared by the graph)
VectorLookup = Callable[[Sequence[str]], Mapping[str, Sequence[float]]]
# the core's dot-product kernel (oya.core.vectors), so a cosine here equals the channel's
_sumprod: Callable[[Iterable[float], Iterable[float]], float] = getattr(
    math, "sumprod", lambda a, b: sum(map(operator.mul, a, b))
)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise ValueError(f"vectors differ in dimension: {len(a)} != {len(b)}")
    return float(_sumprod(a, b))


def stored_vectors(index: Any) -> VectorLookup:
    """An ``oya.store.index.Index``'s stored unit vectors by chunk id (the float32 values the
    semantic channel ranks with), read once on first use."""
    table: dict[str, Sequence[float]] = {}

    def lookup(ids: Sequence[str]) -> Mapping[str, Sequence[float]]:
        if not table:
            table.update((cid, decode_f32(blob)) for cid, blob in index.embedding_blobs())
        return {i: table[i] for i in ids if i in table}

    return lookup


def graph_proximity(a: str | None, b: str | None, neighbors_of_a: frozenset[str]) -> float:
    """1 for the same node, 1/2 for adjacent nodes, else 0 (None means the chunk has no node)."""
    if a is None or b is None:
        return 0.0
    if a == b:
        return 1.0
    return 0.5 if b in neighbors_of_a else 0.0


def mmr_order(
    ids: Sequence[str],
    scores: Mapping[str, float],
    *,
    k: int,
    diversity: float,
    vectors: Mapping[str, Sequence[float]] | None = None,
    nodes: Mapping[str, str | None] | None = None,
    neighbors: NeighborFn | None = None,
    graph_weight: float = 0.5,
) -> list[str]:
    """``ids`` (best first) reordered so the first ``k`` trade relevance against redundancy."""
    if not 0.0 <= diversity <= 1.0:
        raise ValueError(f"diversity must be in [0, 1]; got {diversity}")
    if not 0.0 <= graph_weight <= 1.0:
        raise ValueError(f"graph_weight must be in [0, 1]; got {graph_weight}")
    order = list(dict.fromkeys(ids))
    if diversity == 0.0 or len(order) <= 1 or k <= 1:
        return order
    vecs = vectors or {}
    node_of = nodes or {}
    top = max((scores.get(i, 0.0) for i in order), default=0.0) or 1.0
    rel = {i: scores.get(i, 0.0) / top for i in order}
    neighbor_cache: dict[str, frozenset[str]] = {}

    def near(node: str) -> frozenset[str]:
        if node not in neighbor_cache:
            neighbor_cache[node] = frozenset(neighbors(node)) if neighbors else frozenset()
        return neighbor_cache[node]

    def sim(a: str, b: str) -> float:
        na, nb = node_of.get(a), node_of.get(b)
        g = graph_proximity(na, nb, near(na)) if na is not None else 0.0
        va, vb = vecs.get(a), vecs.get(b)
        if va is None or vb is None:
            return g
        return (1.0 - graph_weight) * max(dot(va, vb), 0.0) + graph_weight * g

    picked: list[str] = []
    redundancy = dict.fromkeys(order, 0.0)  # max similarity to anything picked so far
    rest = list(order)
    while rest and len(picked) < k:
        best_i = 0
        best = float("-inf")
        for i, cand in enumerate(rest):
            value = (1.0 - diversity) * rel[cand] - diversity * redundancy[cand]
            if value > best:
                best, best_i = value, i
        chosen = rest.pop(best_i)
        picked.append(chosen)
        for cand in rest:
            s = sim(cand, chosen)
            if s > redundancy[cand]:
                redundancy[cand] = s
    return picked + rest


def diversify(
    q: Query,
    c: Candidates,
    *,
    k: int,
    diversity: float,
    graph_weight: float,
    min_confidence: float,
    lookup: VectorLookup | None,
) -> Candidates:
    """The candidate pool reordered by MMR; vectors from ``lookup`` when the semantic channel ran."""
    if diversity <= 0 or len(c.pool) <= 1:
        return c
    ids = [h.chunk.id for h in c.pool]
    vectors: Mapping[str, Sequence[float]] = {}
    report = c.reports.get("semantic")
    if lookup is not None and report is not None and report.status != "off":
        try:
            vectors = lookup(ids)
        except Exception:  # no vectors: the graph view alone still diversifies
            vectors = {}
    by_id = {h.chunk.id: h for h in c.pool}
    order = mmr_order(
        ids,
        {h.chunk.id: h.score for h in c.pool},
        k=k,
        diversity=diversity,
        vectors=vectors,
        nodes={h.chunk.id: h.chunk.node_id for h in c.pool},
        neighbors=lambda n: [m for m, _ in q.graph.neighbors(n, min_confidence)],
        graph_weight=graph_weight,
    )
    return replace(c, pool=tuple(by_id[i] for i in order))


def with_mmr(
    pipeline: Pipeline, diversity: float, graph_weight: float, vectors: VectorLookup | None = None
) -> Pipeline:
    """``pipeline`` with MMR (``diversity`` in [0, 1], ``graph_weight``: the graph view's share).

    ``vectors`` gives the candidates' unit vectors (``stored_vectors(index)`` for an index); without
    it, or when the semantic channel did not run, redundancy is the graph view alone."""
    o = pipeline.options
    stage = partial(
        diversify,
        k=o.k,
        diversity=diversity,
        graph_weight=graph_weight,
        min_confidence=o.min_edge_confidence,
        lookup=vectors,
    )
    return inserted(pipeline, "files", "diversify", stage)
