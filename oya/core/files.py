"""File ranking: files ordered from the fused scores of their candidate chunks.

``max``: the best chunk. ``decay``: best + 1/2 second + 1/4 third (a file that holds several
relevant chunks outranks a file with one lucky chunk). ``graph`` (the default,
bench/results/eval_quality.md): decay, plus a share of the scores of candidates in other
files whose symbols call, extend or import its symbols.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from oya.core.graph import CodeGraph
from oya.core.records import Chunk, ChunkRef
from oya.core.results import FileHit

FILE_AGGREGATIONS = ("max", "decay", "graph")
# share of a candidate's score that flows to each file one edge away ("graph" aggregation)
FILE_PROPAGATION = 0.5
DECAY_CHUNKS = 3  # chunks of one file that count in "decay" and "graph"


class Scored(Protocol):
    """A scored chunk: a pool ``Candidate`` (its place only) or a ``Hit`` (its text too)."""

    @property
    def chunk(self) -> Chunk | ChunkRef: ...

    @property
    def score(self) -> float: ...


def _graph_bonus(
    hits: Sequence[Scored], graph: CodeGraph, candidates: set[str], min_confidence: float
) -> dict[str, float]:
    """Per candidate file: the shares flowing in from candidates that call, extend or import it."""
    bonus: dict[str, float] = {}
    for h in hits:
        node = h.chunk.node_id
        if node is None or node not in graph.nodes:
            continue
        targets = {
            graph.nodes[m].path
            for m, e in graph.neighbors(node, min_confidence)
            if e.kind != "contains" and e.source == node and graph.nodes[m].path != h.chunk.path
        }
        targets &= candidates
        for path in targets:
            bonus[path] = bonus.get(path, 0.0) + FILE_PROPAGATION * h.score / len(targets)
    return bonus


def rank_files(
    hits: Sequence[Scored], *, mode: str, graph: CodeGraph | None, min_confidence: float, top_n: int
) -> list[FileHit]:
    """Files ranked from their chunks' fused scores (``mode``: one of ``FILE_AGGREGATIONS``).

    ``graph``: decay, plus ``FILE_PROPAGATION`` of each candidate's score split evenly over the
    other candidate files that define what its symbol calls, extends or imports (outgoing edges
    at or above ``min_confidence``): code that uses a thing points at the file defining it, so
    that file rises; only files that are candidates themselves are ranked. ``top_n`` chunks
    of a file count in ``decay`` and ``graph``.
    """
    if mode not in FILE_AGGREGATIONS:
        raise ValueError(f"mode must be one of {', '.join(FILE_AGGREGATIONS)}; got {mode!r}")
    by_path: dict[str, list[Scored]] = {}
    for h in hits:
        by_path.setdefault(h.chunk.path, []).append(h)
    scores: dict[str, float] = {}
    best: dict[str, list[Scored]] = {}
    for path, hs in by_path.items():
        hs = sorted(hs, key=lambda h: -h.score)[: 1 if mode == "max" else top_n]
        best[path] = hs
        scores[path] = sum(h.score / (2**i) for i, h in enumerate(hs))
    if mode == "graph" and graph is not None:
        for path, b in _graph_bonus(hits, graph, set(by_path), min_confidence).items():
            scores[path] += b
    out = [
        FileHit(path, scores[path], tuple(h.chunk.id for h in hs), hs[0].chunk.start_line)
        for path, hs in best.items()
    ]
    out.sort(key=lambda f: (-f.score, f.path))
    return out
