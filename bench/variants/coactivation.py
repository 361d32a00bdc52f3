"""Co-activation (issue 16 item 6, seed 004): spreading activation from the strongest fused hits.

After fusion and the reweighing, each of the first ``seeds`` candidates that is a graph node
passes ``share`` of its fused score to the nodes it is joined to by a ``calls`` or ``inherits``
edge (either direction, at or above the pipeline's edge confidence), split evenly among them and
scaled by the edge's confidence; the neighbour's first chunk gains that activation (or joins the
fused list with it). The idea: the code a fix touches sits next to the code the words hit.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from bench.variants import inserted
from oya.core.fusion import Fused
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query

SPREAD_KINDS = ("calls", "inherits")


def coactivate(q: Query, c: Candidates, *, seeds: int, share: float, min_confidence: float) -> Candidates:
    """``c.fused`` with the seeds' activation spread one edge along calls and inheritance."""
    if not c.fused:
        return c
    top = c.fused[:seeds]
    chunks = q.corpus.get_chunks([f.id for f in top])
    gain: dict[str, float] = {}  # node id -> activation
    for f in top:
        chunk = chunks.get(f.id)
        node = chunk.node_id if chunk is not None else None
        if node is None or node not in q.graph.nodes:
            continue
        nbrs = [
            (m, e) for m, e in q.graph.neighbors(node, min_confidence) if e.kind in SPREAD_KINDS and m != node
        ]
        for m, e in nbrs:
            gain[m] = gain.get(m, 0.0) + share * f.score * e.confidence / len(nbrs)
    if not gain:
        return c
    first = {n: cids[0] for n, cids in q.corpus.chunk_ids_for_nodes(list(gain)).items() if cids}
    by_id = {f.id: f for f in c.fused}
    for node, g in gain.items():
        cid = first.get(node)
        if cid is None or (q.allowed is not None and not q.allowed(q.corpus.chunk_paths().get(cid, ""))):
            continue
        old = by_id.get(cid)
        by_id[cid] = replace(old, score=old.score + g) if old else Fused(cid, g, ("coactivation",), (0,))
    fused = sorted(by_id.values(), key=lambda f: (-f.score, f.id))
    return replace(c, fused=tuple(fused))


def with_coactivation(pipeline: Pipeline, seeds: int = 3, share: float = 0.5) -> Pipeline:
    """``pipeline`` with co-activation right after the reweighing."""
    o = pipeline.options
    stage = partial(coactivate, seeds=seeds, share=share, min_confidence=o.min_edge_confidence)
    return inserted(pipeline, "reweigh", "coactivate", stage)
