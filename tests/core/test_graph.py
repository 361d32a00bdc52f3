"""CodeGraph: bounded expansion (property tests on random graphs), hop distance, name matching."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oya.core.graph import PREFIX_CREDIT, CodeGraph, prefix_match_words, same_file, uniform_prior
from oya.core.records import EDGE_KINDS, Edge, Node

EXPAND = {"hops": 2, "min_confidence": 0.5, "max_nodes": 5, "prior": uniform_prior}


def node(node_id: str, centrality: float = 0.0, kind: str = "function", name: str | None = None) -> Node:
    path = node_id.split("::")[0] if "::" in node_id else "pkg/mod.py"
    nm = name or node_id.rsplit("::", 1)[-1]
    return Node(node_id, kind, nm, nm, path, 1, 2, centrality=centrality)


@st.composite
def graphs(draw: st.DrawFn) -> CodeGraph:
    n = draw(st.integers(1, 14))
    cents = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    nodes = [node(f"n{i:02d}", c) for i, c in enumerate(cents)]
    edge = st.tuples(
        st.integers(0, n - 1),
        st.integers(0, n - 1),
        st.sampled_from(EDGE_KINDS),
        st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.9, 1.0]),
    )
    edges = [Edge(f"n{a:02d}", f"n{b:02d}", k, c) for a, b, k, c in draw(st.lists(edge, max_size=30))]
    return CodeGraph(nodes, edges)


def bfs(graph: CodeGraph, start: str, min_confidence: float) -> dict[str, int]:
    """Plain breadth-first hop distances over edges in both directions."""
    adj: dict[str, set[str]] = {n: set() for n in graph.nodes}
    for e in graph.edges:
        if e.confidence >= min_confidence:
            adj[e.source].add(e.target)
            adj[e.target].add(e.source)
    dist = {start: 0}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        for other in adj[cur]:
            if other not in dist:
                dist[other] = dist[cur] + 1
                queue.append(other)
    return dist


confidences = st.sampled_from([0.0, 0.5, 0.6, 0.9])


@settings(max_examples=150, deadline=None)
@given(graphs(), st.data(), st.integers(0, 4), confidences, st.integers(0, 10))
def test_expansion_respects_hops_cap_and_confidence(
    graph: CodeGraph, data: st.DataObject, hops: int, min_conf: float, cap: int
) -> None:
    ids = sorted(graph.nodes)
    seeds = data.draw(st.lists(st.sampled_from(ids), max_size=3))
    sub = graph.expand(seeds, hops=hops, min_confidence=min_conf, max_nodes=cap, prior=uniform_prior)
    got = [n.id for n in sub.nodes]
    assert len(got) <= cap
    assert len(got) == len(set(got))
    assert set(sub.distance) == set(got)
    assert all(0 <= d <= hops for d in sub.distance.values())
    assert set(sub.seeds) <= set(seeds)
    assert sub.seeds == tuple(n for n in got if sub.distance[n] == 0)
    assert all(
        e.confidence >= min_conf and e.source in sub.distance and e.target in sub.distance for e in sub.edges
    )
    # nodes come level by level
    assert [sub.distance[n] for n in got] == sorted(sub.distance[n] for n in got)
    # every expanded node is reached by a strong-enough edge from a node one level closer
    for n, d in sub.distance.items():
        if d == 0:
            continue
        assert any(sub.distance.get(other) == d - 1 for other, _ in graph.neighbors(n, min_conf))
    # a hop distance is never shorter than the true one (the cap can only make it longer)
    seeds_in = [s for s in seeds if s in graph.nodes]
    true = {}
    for s in seeds_in:
        for n, d in bfs(graph, s, min_conf).items():
            true[n] = min(d, true.get(n, d))
    for n, d in sub.distance.items():
        assert d >= true[n]


@settings(deadline=None)
@given(graphs(), st.data(), st.integers(0, 4), confidences)
def test_uncapped_expansion_is_the_bfs_ball(
    graph: CodeGraph, data: st.DataObject, hops: int, min_conf: float
) -> None:
    seed = data.draw(st.sampled_from(sorted(graph.nodes)))
    sub = graph.expand([seed], hops=hops, min_confidence=min_conf, max_nodes=len(graph), prior=uniform_prior)
    want = {n: d for n, d in bfs(graph, seed, min_conf).items() if d <= hops}
    assert dict(sub.distance) == want
    assert sub.truncated == 0


@settings(deadline=None)
@given(graphs(), st.data())
def test_expansion_is_deterministic(graph: CodeGraph, data: st.DataObject) -> None:
    seeds = data.draw(st.lists(st.sampled_from(sorted(graph.nodes)), max_size=3))
    assert graph.expand(seeds, **EXPAND) == graph.expand(list(seeds), **EXPAND)


def star() -> CodeGraph:
    """A hub with five callees of rising centrality, and one weak edge."""
    nodes = [node("hub", 0.5)] + [node(f"leaf{i}", i / 10) for i in range(5)] + [node("weak", 1.0)]
    edges = [Edge("hub", f"leaf{i}", "calls", 1.0) for i in range(5)] + [Edge("hub", "weak", "calls", 0.2)]
    return CodeGraph(nodes, edges)


def test_a_uniform_prior_breaks_ties_by_id() -> None:
    sub = star().expand(["hub"], hops=1, min_confidence=0.5, max_nodes=3, prior=uniform_prior)
    assert [n.id for n in sub.nodes] == ["hub", "leaf0", "leaf1"]


def test_edge_kind_weights_and_confidence_order_candidates() -> None:
    nodes = [node("s"), node("a", 0.5), node("b", 0.5), node("c", 0.5)]
    edges = [Edge("s", "a", "imports", 1.0), Edge("s", "b", "calls", 1.0), Edge("s", "c", "calls", 0.5)]
    sub = CodeGraph(nodes, edges).expand(["s"], hops=1, min_confidence=0.0, max_nodes=24, prior=uniform_prior)
    # priority = centrality * kind weight * confidence: b 0.5 > a 0.5*0.6 = 0.3 > c 0.5*0.5 = 0.25
    assert [n.id for n in sub.nodes] == ["s", "b", "a", "c"]


def test_min_confidence_filters_edges() -> None:
    g = star()
    assert "weak" not in {
        n.id for n in g.expand(["hub"], hops=1, min_confidence=0.5, max_nodes=24, prior=uniform_prior).nodes
    }
    assert "weak" in {
        n.id for n in g.expand(["hub"], hops=1, min_confidence=0.1, max_nodes=24, prior=uniform_prior).nodes
    }


def test_unknown_seeds_edges_and_bad_arguments() -> None:
    g = CodeGraph([node("a")], [Edge("a", "ghost", "calls", 1.0)])
    assert g.edges == []  # edges to unknown nodes are dropped
    assert g.expand(["ghost"], hops=2, min_confidence=0.5, max_nodes=24, prior=uniform_prior).nodes == ()
    with pytest.raises(ValueError, match="negative"):
        g.expand(["a"], hops=-1, min_confidence=0.5, max_nodes=24, prior=uniform_prior)
    with pytest.raises(ValueError, match="negative"):
        g.expand(["a"], hops=2, min_confidence=0.5, max_nodes=-1, prior=uniform_prior)


def test_callers_and_callees() -> None:
    g = CodeGraph(
        [node("a"), node("b"), node("c")],
        [Edge("a", "b", "calls", 1.0), Edge("c", "b", "calls", 0.5), Edge("b", "c", "imports", 1.0)],
    )
    assert [e.source for e in g.callers("b")] == ["a", "c"]
    assert g.callees("b") == []
    assert [e.target for e in g.callees("a")] == ["b"]


def test_successors_are_the_edges_leaving_a_node_in_edge_order() -> None:
    loop = Edge("b", "b", "calls", 1.0)
    edges = [Edge("a", "b", "calls", 1.0), Edge("b", "c", "imports", 0.4), loop, Edge("b", "a", "calls", 1.0)]
    g = CodeGraph([node("a"), node("b"), node("c")], edges)
    assert g.successors("b") == [("c", edges[1]), ("b", loop), ("a", edges[3])]  # a self-loop once
    assert g.successors("b", 0.5) == [("b", loop), ("a", edges[3])]
    assert g.successors("c") == [] and g.successors("ghost") == []


@given(graphs())
def test_successors_are_the_edges_from_the_node(graph: CodeGraph) -> None:
    for nid in graph.nodes:
        leaving = [(e.target, e) for e in graph.edges if e.source == nid and e.confidence >= 0.5]
        assert graph.successors(nid, 0.5) == leaving
        assert {(o, e) for o, e in graph.neighbors(nid, 0.5) if e.source == nid} == set(leaving)


def named_graph() -> CodeGraph:
    nodes = [
        Node(
            "inventory/utils.py",
            "module",
            "utils",
            "inventory.utils",
            "inventory/utils.py",
            1,
            40,
            centrality=0.1,
        ),
        Node(
            "inventory/utils.py::parse_quantity",
            "function",
            "parse_quantity",
            "parse_quantity",
            "inventory/utils.py",
            10,
            20,
            centrality=0.2,
        ),
        Node(
            "inventory/utils.py::format_money",
            "function",
            "format_money",
            "format_money",
            "inventory/utils.py",
            22,
            30,
            centrality=0.3,
        ),
        Node(
            "inventory/service.py::InventoryService.reserve",
            "method",
            "reserve",
            "InventoryService.reserve",
            "inventory/service.py",
            5,
            25,
            centrality=0.9,
        ),
        Node(
            "inventory/service.py::quantity",
            "function",
            "quantity",
            "quantity",
            "inventory/service.py",
            30,
            31,
        ),
    ]
    return CodeGraph(nodes, [])


def test_match_names_prefers_exact_identifier() -> None:
    g = named_graph()
    ranked = g.match_names(
        ["parse_quantity", "parse", "quantity"], identifiers=["parse_quantity"], k=50, prefix_match=True
    )
    assert ranked[0][0] == "inventory/utils.py::parse_quantity"
    ranked = g.match_names(["reserve"], identifiers=["InventoryService.reserve"], k=50, prefix_match=True)
    assert ranked[0][0] == "inventory/service.py::InventoryService.reserve"


def test_match_names_path_bonus_and_noise_floor() -> None:
    g = named_graph()
    ranked = dict(g.match_names(["utils", "money"], paths=["./inventory/utils.py"], k=50, prefix_match=True))
    assert ranked["inventory/utils.py"] > 1.5
    assert "inventory/utils.py::format_money" in ranked
    assert g.match_names(["nothing"], k=50, prefix_match=True) == []
    assert g.match_names(["inventory"], k=50, prefix_match=True) == []  # one generic context token is noise
    assert len(g.match_names(["quantity", "parse", "utils"], k=1, prefix_match=True)) == 1


def test_a_named_path_is_matched_by_whole_parts_from_the_end() -> None:
    # a traceback's installed copy against a src/ layout; a bare file name; a whole repository path
    assert same_file("src/click/core.py", "usr/lib/python3.11/site-packages/click/core.py")
    assert same_file("src/click/core.py", "core.py")
    assert same_file("click/core.py", "home/me/proj/click/core.py")
    assert same_file("core.py", "lib/click/core.py")
    # a longer name that ends with the same letters, or the same file name in another folder
    assert not same_file("src/click/score.py", "core.py")
    assert not same_file("src/click/core.py", "lib/python3.11/asyncio/core.py")
    assert not same_file("src/click/core.py", "click/types.py")


def test_a_traceback_from_an_installed_copy_finds_the_src_layout_file() -> None:
    g = CodeGraph(
        [
            Node(
                "src/click/core.py::invoke", "function", "invoke", "Command.invoke", "src/click/core.py", 1, 9
            ),
            Node("src/click/score.py::tally", "function", "tally", "tally", "src/click/score.py", 1, 9),
        ],
        [],
    )
    frame = "usr/lib/python3.11/site-packages/click/core.py"
    ranked = dict(g.match_names(["command"], paths=[frame], k=10, prefix_match=True))
    assert "src/click/core.py::invoke" in ranked and "src/click/score.py::tally" not in ranked


def _match_names_by_scanning(
    g: CodeGraph, q_tokens: list[str], identifiers: list[str], paths: list[str]
) -> list:
    """The graph channel's first implementation: every node sharing any token is a candidate."""
    from oya.core.tokenize import split_identifier, tokenize

    q = set(q_tokens)
    exact = {i.rsplit(".", 1)[-1].lower() for i in identifiers} | {t for t in q if "_" in t}
    wanted = [p.replace("\\", "/").lstrip("./") for p in paths]
    out = []
    for node_id, node in g.nodes.items():
        name_toks, ctx_toks = (
            frozenset(tokenize(node.name)),
            frozenset(tokenize(f"{node.qualname} {node.path}")),
        )
        near = [n for n in name_toks - q if any(w.isalpha() and prefix_match_words(n, w) for w in q)]
        if not name_toks or not ((name_toks | ctx_toks) & q or near):
            continue
        hits = len(name_toks & q) + PREFIX_CREDIT * len(near)
        score = 2.0 * hits / len(name_toks) + 0.5 * len(ctx_toks & q) / max(len(ctx_toks), 1)
        if node.name.lower() in exact or node.name.lower() in q and len(split_identifier(node.name)) > 1:
            score += 3.0
        if any(same_file(node.path, p) for p in wanted):
            score += 1.5
        if score >= 1.0:
            out.append((node_id, score + 0.5 * node.centrality))
    out.sort(key=lambda item: (-item[1], item[0]))
    return out


_WORDS = ["get", "parse", "quantity", "store", "item", "reserve", "stock", "inventory", "utils", "error"]
_WORDS += ["expand", "expansion", "reservation", "storage", "parser", "parse2", "reserve3d"]
_names = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map("_".join)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(_names, _names, st.sampled_from(["a/utils.py", "inventory/store.py", "b.py"])), max_size=25
    ),
    st.lists(st.sampled_from(_WORDS + ["get_item", "parse_quantity"]), max_size=6),
    st.lists(st.sampled_from(["Store.get", "parse_quantity", "x.reserve", "Item"]), max_size=2),
    st.lists(st.sampled_from(["inventory/store.py", "./a/utils.py", "c.py"]), max_size=2),
)
def test_match_names_equals_scanning_every_node(
    specs: list[tuple[str, str, str]], q: list[str], identifiers: list[str], paths: list[str]
) -> None:
    nodes = [
        Node(f"n{i}", "function", name, f"{owner}.{name}", path, 1, 2, centrality=i / 100)
        for i, (name, owner, path) in enumerate(specs)
    ]
    g = CodeGraph(nodes, [])
    got = g.match_names(q, identifiers=identifiers, paths=paths, k=1000, prefix_match=True)
    assert got == _match_names_by_scanning(g, q, identifiers, paths)


def test_an_exact_name_sharing_only_context_tokens_is_still_matched() -> None:
    g = CodeGraph(
        [Node("r", "method", "reserve", "InventoryService.reserve", "inventory/service.py", 1, 9)], []
    )
    # "reserve" is not among the question's tokens, but the identifier names it and "inventory" is shared
    got = g.match_names(["inventory"], identifiers=["InventoryService.reserve"], k=50, prefix_match=True)
    assert got == _match_names_by_scanning(g, ["inventory"], ["InventoryService.reserve"], [])
    assert [n for n, _ in got] == ["r"]


def test_prefix_match_words() -> None:
    for a, b in (
        ("expand", "expansion"),
        ("embed", "embedding"),
        ("connect", "connection"),
        ("reserve", "reservation"),
    ):
        assert prefix_match_words(a, b) and prefix_match_words(b, a), (a, b)
    for a, b in (
        ("index", "indent"),
        ("graph", "graph"),
        ("parse", "pars"),
        ("decide", "decision"),
        ("storage", "store"),
    ):
        assert not prefix_match_words(a, b), (a, b)


def test_a_question_noun_meets_the_verb_a_function_is_named_with() -> None:
    expand = Node("g::expand", "method", "expand", "CodeGraph.expand", "graph.py", 1, 9)
    other = Node("g::neighbors", "method", "neighbors", "CodeGraph.neighbors", "graph.py", 10, 12)
    g = CodeGraph([expand, other], [])
    assert [n for n, _ in g.match_names(["graph", "expansion", "decide"], k=50, prefix_match=True)] == [
        "g::expand"
    ]
    assert g.match_names(["graph", "expansion", "decide"], prefix_match=False, k=50) == []
