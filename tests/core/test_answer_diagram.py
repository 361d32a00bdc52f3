"""The answer's diagram: the call path between the answer's symbols first, imports only when they
are the answer, the node cap, and safe Mermaid with every node linked to its page."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_diagram import HOSTILE, assert_safe

from oya.core.answer_diagram import (
    EMPTY_PLAN,
    MAX_DEGREE,
    PATH_HOPS,
    DiagramPlan,
    plan_diagram,
    render_plan,
    short_label,
    shortest_paths,
)
from oya.core.context import fit_diagram
from oya.core.graph import CodeGraph, Subgraph, uniform_prior
from oya.core.records import Edge, Node
from oya.core.sitepaths import page_url
from oya.core.tokenize import count_tokens


def fn(path: str, name: str, line: int = 1, kind: str = "function") -> Node:
    qual = name
    return Node(f"{path}::{qual}", kind, name.rsplit(".", 1)[-1], qual, path, line, line + 3)


def mod(path: str) -> Node:
    return Node(path, "module", path.rsplit("/", 1)[-1].removesuffix(".py"), path, path, 1, 40)


A, B, C = fn("shop/ingest.py", "ingest", 5), fn("shop/parse.py", "parse", 7), fn("shop/clean.py", "clean", 9)
HELPER = fn("shop/clean.py", "trim", 20)
OTHER = fn("shop/report.py", "totals", 3)
OTHER2 = fn("shop/report.py", "print_report", 12)
TEST = fn("tests/test_ingest.py", "test_ingest", 4)
MODS = [mod(p) for p in ("shop/ingest.py", "shop/parse.py", "shop/clean.py", "shop/report.py")]


def chain_graph() -> CodeGraph:
    """ingest -> parse -> clean (-> trim), a test calling ingest, and modules all importing each other."""
    nodes = [A, B, C, HELPER, OTHER, OTHER2, TEST, *MODS]
    edges = [
        Edge(A.id, B.id, "calls", 1.0),
        Edge(B.id, C.id, "calls", 0.9),
        Edge(C.id, HELPER.id, "calls", 1.0),
        Edge(OTHER2.id, OTHER.id, "calls", 1.0),
        Edge(TEST.id, A.id, "calls", 1.0),
        *(Edge(m.id, n.id, "imports", 1.0) for m in MODS for n in MODS if m is not n),
        *(
            Edge(m.id, f.id, "contains", 1.0)
            for m in MODS
            for f in nodes
            if f.kind != "module" and f.path == m.path
        ),
    ]
    return CodeGraph(nodes, edges)


def expansion(graph: CodeGraph, seeds: list[str]) -> Subgraph:
    return graph.expand(seeds, hops=2, min_confidence=0.5, max_nodes=24, prior=uniform_prior)


def plan(graph: CodeGraph, matches: list[str], max_nodes: int = 10, **kw: object) -> DiagramPlan:
    return plan_diagram(
        graph, matches, expansion(graph, matches[:3]), max_nodes=max_nodes, min_confidence=0.5, **kw
    )  # type: ignore[arg-type]


def test_the_chain_between_the_matches_comes_first_and_imports_stay_out() -> None:
    g = chain_graph()
    p = plan(g, [A.id, C.id, OTHER.id], max_nodes=3)
    assert [n.id for n in p.nodes] == [A.id, B.id, C.id]  # parse is on the path, so it is drawn
    assert [(e.source, e.target, e.kind) for e in p.edges] == [(A.id, B.id, "calls"), (B.id, C.id, "calls")]
    assert set(p.matches) == {A.id, C.id}
    mermaid = render_plan(p)
    assert mermaid.split("\n")[:6] == [
        "flowchart TD",
        '  n0["ingest"]:::seed',
        '  n1["parse"]:::fn',
        '  n2["clean"]:::seed',
        "  n0 --> n1",
        "  n1 --> n2",
    ]
    assert "imports" not in mermaid and "contains" not in mermaid and "subgraph" not in mermaid


def test_with_room_the_neighbours_follow_code_before_tests_callees_before_callers() -> None:
    g = chain_graph()
    p = plan(g, [A.id, C.id])
    ids = [n.id for n in p.nodes]
    assert ids[:3] == [A.id, B.id, C.id]
    assert ids.index(HELPER.id) < ids.index(TEST.id)  # what clean calls, then who calls ingest
    assert OTHER.id not in ids and OTHER2.id not in ids  # not connected to the answer
    assert not any(e.kind == "imports" for e in p.edges)


def test_the_node_cap_holds_and_trimming_keeps_the_first() -> None:
    g = chain_graph()
    for cap in range(1, 8):
        p = plan(g, [A.id, C.id], max_nodes=cap)
        assert 1 <= len(p.nodes) <= cap
        assert p.nodes[0].id == A.id
        assert render_plan(p).count('"]:::') == len(p.nodes)
    full = plan(g, [A.id, C.id])
    two = full.trimmed(2)
    assert [n.id for n in two.nodes] == [A.id, B.id] and [(e.source, e.target) for e in two.edges] == [
        (A.id, B.id)
    ]
    with pytest.raises(ValueError, match="max_nodes"):
        plan(g, [A.id], max_nodes=0)


def test_a_path_that_does_not_fit_whole_is_left_out() -> None:
    g = chain_graph()
    p = plan(g, [A.id, C.id], max_nodes=2)  # ingest..clean needs three nodes
    assert [n.id for n in p.nodes][0] == A.id and C.id not in [n.id for n in p.nodes]


def test_fan_out_is_bounded_per_node() -> None:
    hub = fn("h.py", "hub")
    leaves = [fn("h.py", f"leaf{i}", 10 + i) for i in range(8)]
    g = CodeGraph([hub, *leaves], [Edge(hub.id, leaf.id, "calls", 1.0) for leaf in leaves])
    assert len(plan(g, [hub.id]).nodes) == 1 + MAX_DEGREE


def test_paths_count_only_from_or_to_a_top_match() -> None:
    """Two minor matches joined through a hub do not widen the diagram; a top match's path does."""
    top, hub = fn("a.py", "top"), fn("cli.py", "main")
    minor = [fn("b.py", f"minor{i}", 10 + i) for i in range(4)]
    edges = [Edge(hub.id, n.id, "calls", 1.0) for n in (top, *minor)]
    g = CodeGraph([top, hub, *minor], edges)
    p = plan_diagram(
        g,
        [top.id, minor[0].id, minor[1].id, minor[2].id, minor[3].id],
        expansion(g, [top.id]),
        max_nodes=10,
        min_confidence=0.5,
    )
    ids = [n.id for n in p.nodes]
    assert ids[0] == top.id and hub.id in ids  # the hub calls the best match: its caller
    assert len(ids) <= 1 + MAX_DEGREE  # not every minor match the hub also calls


def test_paths_are_shortest_and_bounded_in_hops() -> None:
    chain = [fn("c.py", f"f{i}", i + 1) for i in range(PATH_HOPS + 2)]  # PATH_HOPS + 1 calls end to end
    edges = [Edge(a.id, b.id, "calls", 1.0) for a, b in zip(chain, chain[1:], strict=False)]
    ends = [chain[0].id, chain[-1].id]
    assert shortest_paths(CodeGraph(chain, edges), ends, ("calls",), 0.5) == []  # too long to explain
    shortcut = Edge(chain[0].id, chain[2].id, "calls", 1.0)
    paths = shortest_paths(CodeGraph(chain, [*edges, shortcut]), ends, ("calls",), 0.5)
    assert [[(e.source, e.target) for e in p] for p in paths] == [
        [(chain[0].id, chain[2].id), *((a.id, b.id) for a, b in zip(chain[2:], chain[3:], strict=False))]
    ]
    assert shortest_paths(CodeGraph(chain, edges), ends, ("calls",), 1.1) == []  # below the confidence


def test_imports_are_drawn_when_they_are_the_answer() -> None:
    g = chain_graph()
    p = plan(g, [MODS[0].id, MODS[1].id])  # modules: no call or inheritance joins them
    assert {e.kind for e in p.edges} == {"imports"}
    assert (MODS[0].id, MODS[1].id) in {(e.source, e.target) for e in p.edges}
    assert "|imports|" in render_plan(p)


def test_inheritance_is_a_path_and_labelled() -> None:
    base, sub, user = fn("a.py", "Base", 1, "class"), fn("b.py", "Sub", 1, "class"), fn("c.py", "use")
    g = CodeGraph(
        [base, sub, user], [Edge(sub.id, base.id, "inherits", 1.0), Edge(user.id, sub.id, "calls", 1.0)]
    )
    mermaid = render_plan(plan(g, [user.id, base.id]))
    assert "  n0 --> n1" in mermaid and "  n1 -.->|inherits| n2" in mermaid


def test_every_node_links_to_its_page() -> None:
    g = chain_graph()
    p = plan(g, [A.id, C.id, MODS[3].id])
    mermaid = render_plan(p)
    for i, node in enumerate(render_order(mermaid, p)):
        line = page_url(node.path, None if node.kind == "module" else node.start_line)
        assert f'  click n{i} href "{line}"' in mermaid


def render_order(mermaid: str, p: DiagramPlan) -> list[Node]:
    labels = [line.split('"')[1] for line in mermaid.split("\n") if '"]:::' in line]
    by_label = {short_label(n): n for n in p.nodes}
    return [by_label[label] for label in labels]


def test_labels_are_short_and_tell_namesakes_apart() -> None:
    m1 = Node("a.py::C.run", "method", "run", "C.run", "pkg/a.py", 3, 5)
    m2 = Node("b.py::run", "function", "run", "run", "pkg/b.py", 3, 5)
    m3 = Node("c.py::run", "function", "run", "run", "pkg/c.py", 3, 5)
    g = CodeGraph([m1, m2, m3], [Edge(m1.id, m2.id, "calls", 1.0), Edge(m2.id, m3.id, "calls", 1.0)])
    mermaid = render_plan(plan(g, [m1.id, m3.id]))
    assert '"C.run"' in mermaid and '"run (b.py)"' in mermaid and '"run (c.py)"' in mermaid
    assert short_label(mod("pkg/deep/mod.py")) == "mod.py"


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_and_paths_give_safe_diagrams(name: str) -> None:
    a = Node(f"{name}#a", "function", name, name, f"{name}/x.py", 1, 2)
    b = Node(f"{name}#b", "method", name, f"{name}.{name}", f'{name}"/y.py', 1, 2)
    c = Node(f"{name}#c", "module", name, name, f"{name}.py", 1, 2)
    g = CodeGraph([a, b, c], [Edge(a.id, b.id, "calls", 1.0), Edge(b.id, c.id, "inherits", 1.0)])
    mermaid = render_plan(plan(g, [a.id, c.id]))
    assert_safe(mermaid)
    assert mermaid.count("  click ") == 3  # the percent-quoted page URLs pass the link check


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.integers(0, 9), st.sampled_from(["calls", "inherits", "imports"])),
        max_size=30,
    ),
    st.lists(st.integers(0, 9), min_size=1, max_size=6),
    st.integers(1, 12),
)
def test_plan_property(pairs: list[tuple[int, int, str]], matches: list[int], cap: int) -> None:
    nodes = [fn(f"p{i % 3}.py", f"f{i}", i + 1) for i in range(10)]
    g = CodeGraph(nodes, [Edge(nodes[a].id, nodes[b].id, k, 1.0) for a, b, k in pairs if a != b])
    p = plan(g, [nodes[m].id for m in matches], max_nodes=cap)
    ids = [n.id for n in p.nodes]
    assert ids[0] == nodes[matches[0]].id and len(ids) <= cap and len(set(ids)) == len(ids)
    assert all(e.source in ids and e.target in ids for e in p.edges)
    assert len({e.kind == "imports" for e in p.edges}) <= 1  # imports never beside calls
    assert p == plan(g, [nodes[m].id for m in matches], max_nodes=cap)  # deterministic
    assert_safe(render_plan(p))


def test_fit_diagram_drops_the_least_important_nodes_first() -> None:
    g = chain_graph()
    p = plan(g, [A.id, C.id])
    whole = fit_diagram(p, 10_000, 100_000)
    assert whole == render_plan(p)
    tight = fit_diagram(p, count_tokens(render_plan(p.trimmed(3))), 100_000)
    assert tight == render_plan(p.trimmed(3))
    assert fit_diagram(p, 1, 100_000) == "" and fit_diagram(EMPTY_PLAN, 100, 100) == ""
    assert (
        plan_diagram(g, ["nowhere"], Subgraph((), (), {}, ()), max_nodes=5, min_confidence=0.5) == EMPTY_PLAN
    )
