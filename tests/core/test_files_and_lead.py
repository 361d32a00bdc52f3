"""File aggregation, the RRF k option and the semantic lead (standard library only)."""

from __future__ import annotations

import pytest
from core_corpus import Inventory, build_inventory, embed, make_chunk

from oya.core.files import DECAY_CHUNKS, rank_files
from oya.core.filters import promote_clear_winner
from oya.core.fusion import Fused
from oya.core.graph import CodeGraph
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.core.query import plan_query
from oya.core.records import Edge, Node
from oya.core.results import Hit


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


def _file_hits() -> tuple[list[Hit], CodeGraph]:
    a1 = make_chunk("a.py", "f", 1, "def f(): g()", node_id="a.py::f")
    a2 = make_chunk("a.py", "h", 5, "def h(): pass", node_id="a.py::h")
    b1 = make_chunk("b.py", "g", 1, "def g(): pass", node_id="b.py::g")
    c1 = make_chunk("c.py", "k", 1, "def k(): pass", node_id="c.py::k")
    nodes = [
        Node(n, "function", n.split("::")[1], n.split("::")[1], n.split("::")[0], 1, 2)
        for n in ("a.py::f", "a.py::h", "b.py::g", "c.py::k")
    ]
    graph = CodeGraph(
        nodes, [Edge("a.py::f", "b.py::g", "calls", 0.9), Edge("c.py::k", "b.py::g", "calls", 0.2)]
    )
    hits = [Hit(a1, 1.0, ()), Hit(a2, 0.5, ()), Hit(c1, 0.8, ()), Hit(b1, 0.7, ())]
    return hits, graph


def test_file_aggregation_modes() -> None:
    hits, graph = _file_hits()
    by = {
        m: {
            f.path: f.score
            for f in rank_files(hits, mode=m, graph=graph, min_confidence=0.5, top_n=DECAY_CHUNKS)
        }
        for m in ("max", "decay", "graph")
    }
    assert by["max"] == pytest.approx({"a.py": 1.0, "b.py": 0.7, "c.py": 0.8})
    assert by["decay"] == pytest.approx({"a.py": 1.25, "b.py": 0.7, "c.py": 0.8})
    # b.py defines g, which a.py's f calls (0.9 >= 0.5): half of f's score flows to b.py; c.py's
    # call is too weak; nothing flows against an edge (g calls nothing, so a.py gains nothing)
    assert by["graph"] == pytest.approx({"a.py": 1.25, "b.py": 0.7 + 0.5, "c.py": 0.8})
    assert [
        f.path for f in rank_files(hits, mode="graph", graph=graph, min_confidence=0.5, top_n=DECAY_CHUNKS)
    ] == ["a.py", "b.py", "c.py"]
    assert [
        f.path for f in rank_files(hits, mode="max", graph=None, min_confidence=0.5, top_n=DECAY_CHUNKS)
    ] == ["a.py", "c.py", "b.py"]
    assert rank_files(hits, mode="graph", graph=None, min_confidence=0.5, top_n=DECAY_CHUNKS)[
        0
    ].score == pytest.approx(1.25)  # no graph: decay
    with pytest.raises(ValueError, match="mode must be one of"):
        rank_files(hits, mode="sum", graph=None, min_confidence=0.5, top_n=DECAY_CHUNKS)


def test_rrf_k_option() -> None:
    with pytest.raises(ValueError, match="rrf_k"):
        RetrievalOptions(rrf_k=0)
    inv = build_inventory()
    q = "how does reserving stock work"
    a = retrieve(q, channels=inv.channels, graph=inv.graph, corpus=inv.corpus, vector=embed(q))
    b = retrieve(
        q,
        channels=inv.channels,
        graph=inv.graph,
        corpus=inv.corpus,
        vector=embed(q),
        options=RetrievalOptions(rrf_k=60),
    )
    # the default k (10) puts more weight on first ranks: the best score is higher than with 60
    assert a.hits[0].score > b.hits[0].score


# -- the semantic lead ----------------------------------------------------------------------
def _fused(*pairs: tuple[str, float]) -> list[Fused]:
    return [Fused(i, s, ("lexical",), (n,)) for n, (i, s) in enumerate(pairs, 1)]


def test_a_clear_semantic_winner_goes_first() -> None:
    fused = _fused(("a", 0.3), ("b", 0.2), ("c", 0.1))
    out = promote_clear_winner(fused, ["c", "a"], {"c": 0.90, "a": 0.85}, 0.04, None)
    assert [f.id for f in out] == ["c", "a", "b"]
    assert out[0].score >= out[1].score  # file ranking reads the scores: the order holds there too


def test_a_narrow_semantic_lead_changes_nothing() -> None:
    fused = _fused(("a", 0.3), ("b", 0.2), ("c", 0.1))
    assert promote_clear_winner(fused, ["c", "a"], {"c": 0.90, "a": 0.87}, 0.04, None) == fused
    assert promote_clear_winner(fused, ["c"], {"c": 0.90}, 0.04, None) == fused  # no runner-up
    assert promote_clear_winner(fused, ["a", "c"], {"a": 0.9, "c": 0.1}, 0.04, None) == fused


def test_test_code_being_weighed_down_is_not_promoted() -> None:
    fused = _fused(("a", 0.3), ("t", 0.1))
    paths = {"a": "pkg/core.py", "t": "tests/test_core.py"}
    scores = {"t": 0.9, "a": 0.5}
    assert promote_clear_winner(fused, ["t", "a"], scores, 0.04, paths) == fused
    assert [f.id for f in promote_clear_winner(fused, ["t", "a"], scores, 0.04, None)] == ["t", "a"]


def test_semantic_lead_switch_in_retrieve() -> None:
    inv = build_inventory()
    q = "how does reserving stock work"
    # a semantic channel that clearly prefers a chunk the other channels rank low
    ranked = [cid for cid, _ in inv.vectors.search(plan_query(q), embed(q), 50)]
    favourite = ranked[-1]
    lead = LeadChannel([(favourite, 0.95)] + [(cid, 0.5) for cid in ranked if cid != favourite])
    channels = [lead if ch.name == "semantic" else ch for ch in inv.channels]

    def first(**opts: float) -> str:
        r = retrieve(
            q, channels=channels, graph=inv.graph, corpus=inv.corpus, options=RetrievalOptions(**opts)
        )
        return r.hits[0].chunk.id

    assert first() == favourite
    assert first(semantic_lead=0.0) != favourite
    assert first(semantic_lead=0.5) != favourite  # a 0.45 lead is not enough for 0.5


class LeadChannel:
    name = "semantic"

    def __init__(self, ranked: list[tuple[str, float]]) -> None:
        self.ranked = ranked

    def search(self, plan: object, vector: object, k: int) -> list[tuple[str, float]]:
        return self.ranked[:k]
