"""Weighted Reciprocal Rank Fusion.

Theory of operation (Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms
Condorcet and individual Rank Learning Methods", SIGIR 2009), with a weight per channel:

    rrf(d) = sum over channels c that ranked d of  w_c / (k + rank_c(d)),   rank from 1

The paper's k is 60; the shipped k is ``RetrievalOptions.rrf_k`` (10, measured).

Only ranks matter, so channels with incomparable scores (BM25, cosine, name matches) fuse
fairly, and a document found by several channels rises above one found by a single channel.
Ties are broken by id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Fused:
    id: str
    score: float
    channels: tuple[str, ...]  # channels that ranked it, in the order given
    ranks: tuple[int, ...]  # its rank in each of those channels


def fuse(
    rankings: Mapping[str, Sequence[str]],
    weights: Mapping[str, float] | None,
    *,
    k: int,
) -> list[Fused]:
    """Fuse ranked id lists (best first) into one list, best first."""
    if k <= 0:
        raise ValueError("k must be positive")
    scores: dict[str, float] = {}
    found: dict[str, list[tuple[str, int]]] = {}
    for channel, ids in rankings.items():
        w = 1.0 if weights is None else float(weights.get(channel, 1.0))
        if w <= 0:
            continue
        seen: set[str] = set()
        rank = 0
        for doc in ids:
            if doc in seen:
                continue
            seen.add(doc)
            rank += 1
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
            found.setdefault(doc, []).append((channel, rank))
    out = [
        Fused(doc, s, tuple(c for c, _ in found[doc]), tuple(r for _, r in found[doc]))
        for doc, s in scores.items()
    ]
    out.sort(key=lambda f: (-f.score, f.id))
    return out
