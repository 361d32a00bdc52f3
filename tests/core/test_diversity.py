"""MMR diversity, file aggregation, the long-query switch and the semantic lead (standard library only)."""

from __future__ import annotations

import pytest
from core_corpus import Inventory, build_inventory, embed, make_chunk
from hypothesis import given, settings
from hypothesis import strategies as st

from oya.core.diversity import graph_proximity, mmr_order
from oya.core.engine import RetrievalOptions, VectorChannel, promote_clear_winner, rank_files, retrieve
from oya.core.fusion import Fused
from oya.core.graph import CodeGraph
from oya.core.query import plan_query
from oya.core.records import Edge, Node
from oya.core.results import Hit
from oya.core.vectors import VectorIndex, normalize

ids_st = st.lists(st.text("abcdefgh", min_size=1, max_size=3), min_size=0, max_size=12, unique=True)


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[str], dict[str, float], dict[str, list[float]]]:
    ids = draw(ids_st)
    scores = {i: draw(st.floats(0.001, 1.0)) for i in ids}
    order = sorted(ids, key=lambda i: -scores[i])
    vecs = {i: normalize([draw(st.floats(-1, 1)) for _ in range(3)]) for i in ids}
    return order, scores, vecs


@settings(max_examples=80, deadline=None)
@given(pools(), st.floats(0.0, 1.0), st.integers(1, 15))
def test_mmr_is_a_permutation(
    pool: tuple[list[str], dict[str, float], dict[str, list[float]]], lam: float, k: int
) -> None:
    order, scores, vecs = pool
    out = mmr_order(order, scores, k=k, diversity=lam, vectors=vecs)
    assert sorted(out) == sorted(order)
    assert out == mmr_order(order, scores, k=k, diversity=lam, vectors=vecs)  # deterministic


@settings(max_examples=50, deadline=None)
@given(pools(), st.integers(1, 15))
def test_mmr_off_keeps_the_order_and_the_best_stays_first(
    pool: tuple[list[str], dict[str, float], dict[str, list[float]]], k: int
) -> None:
    order, scores, vecs = pool
    assert mmr_order(order, scores, k=k, diversity=0.0, vectors=vecs) == order
    if order:
        # nothing is picked before the first, so redundancy cannot demote the best hit
        assert mmr_order(order, scores, k=k, diversity=0.7, vectors=vecs)[0] == order[0]


def test_mmr_demotes_a_near_duplicate() -> None:
    scores = {"a": 1.0, "a2": 0.95, "b": 0.9}
    vecs = {"a": [1.0, 0.0], "a2": [1.0, 0.0], "b": [0.0, 1.0]}
    assert mmr_order(["a", "a2", "b"], scores, k=3, diversity=0.0, vectors=vecs) == ["a", "a2", "b"]
    assert mmr_order(["a", "a2", "b"], scores, k=3, diversity=0.5, vectors=vecs) == ["a", "b", "a2"]


def test_mmr_uses_the_graph_when_vectors_are_absent() -> None:
    scores = {"a": 1.0, "caller": 0.95, "far": 0.9}
    nodes = {"a": "n1", "caller": "n2", "far": "n3"}
    adj = {"n1": ["n2"], "n2": ["n1"], "n3": []}
    out = mmr_order(
        ["a", "caller", "far"],
        scores,
        k=3,
        diversity=0.5,
        vectors=None,
        nodes=nodes,
        neighbors=lambda n: adj[n],
    )
    assert out == ["a", "far", "caller"]
    assert graph_proximity("n1", "n1", frozenset()) == 1.0
    assert graph_proximity("n1", "n2", frozenset({"n2"})) == 0.5
    assert graph_proximity(None, "n2", frozenset({"n2"})) == 0.0


def test_mmr_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="diversity"):
        mmr_order(["a"], {"a": 1.0}, k=1, diversity=1.5)
    with pytest.raises(ValueError, match="graph_weight"):
        mmr_order(["a"], {"a": 1.0}, k=1, diversity=0.5, graph_weight=-0.1)
    with pytest.raises(ValueError, match="diversity"):
        RetrievalOptions(diversity=2.0)
    with pytest.raises(ValueError, match="file_aggregation must be one of max, decay, graph"):
        RetrievalOptions(file_aggregation="sum")


def test_vector_index_and_channel_give_stored_vectors() -> None:
    index = VectorIndex.from_rows([("x", [1.0, 0.0]), ("y", [0.0, 1.0])])
    got = VectorChannel(index).vectors_for(["y", "missing"])
    assert list(got) == ["y"] and list(got["y"]) == [0.0, 1.0]
    assert VectorChannel(None).vectors_for(["x"]) == {}


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


@pytest.mark.parametrize("diversity", [0.0, 0.3, 1.0])
def test_retrieve_with_diversity_keeps_its_invariants(inventory: Inventory, diversity: float) -> None:
    q = "how does reserving stock work"
    base = retrieve(
        q, channels=inventory.channels, graph=inventory.graph, corpus=inventory.corpus, vector=embed(q)
    )
    r = retrieve(
        q,
        channels=inventory.channels,
        graph=inventory.graph,
        corpus=inventory.corpus,
        vector=embed(q),
        options=RetrievalOptions(diversity=diversity),
    )
    assert len(r.hits) == len(base.hits)
    assert r.hits[0].chunk.id == base.hits[0].chunk.id
    assert {h.chunk.id for h in r.hits} <= {h.chunk.id for h in base.hits} | {
        c for f in base.files for c in f.chunks
    } | set(inventory.corpus.chunks)
    assert len({h.chunk.content_hash for h in r.hits}) == len(r.hits)


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
        m: {f.path: f.score for f in rank_files(hits, mode=m, graph=graph)} for m in ("max", "decay", "graph")
    }
    assert by["max"] == pytest.approx({"a.py": 1.0, "b.py": 0.7, "c.py": 0.8})
    assert by["decay"] == pytest.approx({"a.py": 1.25, "b.py": 0.7, "c.py": 0.8})
    # b.py defines g, which a.py's f calls (0.9 >= 0.5): half of f's score flows to b.py; c.py's
    # call is too weak; nothing flows against an edge (g calls nothing, so a.py gains nothing)
    assert by["graph"] == pytest.approx({"a.py": 1.25, "b.py": 0.7 + 0.5, "c.py": 0.8})
    assert [f.path for f in rank_files(hits, mode="graph", graph=graph)] == ["a.py", "b.py", "c.py"]
    assert [f.path for f in rank_files(hits, mode="max")] == ["a.py", "c.py", "b.py"]
    assert rank_files(hits, mode="graph", graph=None)[0].score == pytest.approx(1.25)  # no graph: decay
    with pytest.raises(ValueError, match="mode must be one of"):
        rank_files(hits, mode="sum")


LONG = (
    "After upgrading, calling parse_quantity with an empty string crashes the whole checkout and "
    + "the page shows nothing useful at all so we cannot tell customers what went wrong " * 5
)


def test_long_query_identifiers_switch() -> None:
    on = plan_query(LONG, long_query_identifiers=True)
    off = plan_query(LONG)  # off by default: no measured gain (bench/eval_quality.py)
    assert on.long and off.long
    assert set(on.lexical_tokens) <= {"parse_quantity", "parse", "quantity"}
    assert off.lexical_tokens == off.tokens


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
