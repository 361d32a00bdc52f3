"""A losing variant, kept runnable: graph expansion ordered by PageRank (docs/DECISIONS.md).

Shipped expansion orders a hop's candidates by edge kind and confidence alone
(``oya.core.graph.uniform_prior``). Weighing them by the node's PageRank (``Node.centrality``,
computed at index time) preferred hubs to the seed's own callees and callers: connected-code
coverage -9.1 points (bench/results/eval_quality.md, row "centrality on").
"""

from __future__ import annotations

from bench.variants import replaced
from oya.core.pipeline import Pipeline, expand_stage
from oya.core.records import Node


def centrality_prior(node: Node) -> float:
    return node.centrality


def with_centrality(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose expansion ranks a hop's candidates by PageRank."""
    return replaced(pipeline, "expand", expand_stage(pipeline.options, centrality_prior))
