"""The core's graph walk against networkx on random graphs.

Edges are followed both ways and only at or above a confidence, so the reference is
``single_source_shortest_path_length`` on the undirected graph of the strong-enough edges.
"""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from oya.core.graph import CodeGraph, uniform_prior
from oya.core.records import EDGE_KINDS, Edge, Node

CONFIDENCES = [0.0, 0.2, 0.5, 0.6, 0.9, 1.0]


@st.composite
def random_graphs(draw: st.DrawFn) -> tuple[CodeGraph, nx.Graph, float]:
    n = draw(st.integers(1, 25))
    ids = [f"pkg/m{i % 4}.py::f{i:02d}" for i in range(n)]
    cents = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    nodes = [
        Node(i, "function", i[-3:], i[-3:], i.split("::")[0], 1, 1, centrality=c)
        for i, c in zip(ids, cents, strict=True)
    ]
    raw = draw(
        st.lists(
            st.tuples(
                st.integers(0, n - 1),
                st.integers(0, n - 1),
                st.sampled_from(EDGE_KINDS),
                st.sampled_from(CONFIDENCES),
            ),
            max_size=3 * n,
        )
    )
    edges = [Edge(ids[a], ids[b], kind, conf) for a, b, kind, conf in raw]
    min_conf = draw(st.sampled_from(CONFIDENCES))
    ref = nx.Graph()
    ref.add_nodes_from(ids)
    ref.add_edges_from((e.source, e.target) for e in edges if e.confidence >= min_conf)
    return CodeGraph(nodes, edges), ref, min_conf


@settings(max_examples=200, deadline=None)
@given(random_graphs(), st.data(), st.integers(0, 6))
def test_uncapped_expansion_equals_networkx_ball(
    case: tuple[CodeGraph, nx.Graph, float], data: st.DataObject, hops: int
) -> None:
    graph, ref, min_conf = case
    seeds = data.draw(st.lists(st.sampled_from(sorted(graph.nodes)), min_size=1, max_size=3, unique=True))
    sub = graph.expand(seeds, hops=hops, min_confidence=min_conf, max_nodes=len(graph), prior=uniform_prior)
    expected: dict[str, int] = {}
    for s in seeds:
        for node, d in nx.single_source_shortest_path_length(ref, s, cutoff=hops).items():
            expected[node] = min(d, expected.get(node, d))
    assert dict(sub.distance) == expected
    assert sub.truncated == 0
    # the subgraph's edges are exactly the strong-enough edges among its nodes
    keep = set(expected)
    want = {
        (e.source, e.target, e.kind)
        for e in graph.edges
        if e.confidence >= min_conf and e.source in keep and e.target in keep
    }
    assert {(e.source, e.target, e.kind) for e in sub.edges} == want
