"""Mermaid rendering: hostile names from an untrusted repository yield only safe labels."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oya.core.diagram import node_label, render_mermaid, safe_link, sanitize_label
from oya.core.records import EDGE_KINDS, Edge, Node

LABEL = r"[A-Za-z0-9 _./:(),-]{1,48}"
NODE_LINE = re.compile(rf'  n\d+\["{LABEL}"\]:::(seed|mod|cls|fn)')
EDGE_LINE = re.compile(r"  n\d+ (-->|-\.->|---)(\|(calls|inherits|imports|contains)\|)? n\d+")
# a node's page: a relative site path (oya.core.sitepaths), nothing else
CLICK_LINE = re.compile(r'  click n\d+ href "[A-Za-z0-9_.~%-][A-Za-z0-9_.~/%-]*(#L[0-9]+)?"')
CLASSDEF_LINE = re.compile(r"  classDef (seed|mod|cls|fn) fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6},color:#111")
SUBGRAPH_LINE = re.compile(rf'  subgraph n\d+\["{LABEL}"\]')
END_LINE = re.compile(r"  end")
CLASS_LINE = re.compile(r"  class n\d+ (seed|mod|cls|fn)")
LINES = (NODE_LINE, EDGE_LINE, CLASSDEF_LINE, SUBGRAPH_LINE, END_LINE, CLASS_LINE, CLICK_LINE)

HOSTILE = [
    'a"]; click n0 "javascript:alert(1)"',
    "x --> y",
    "%%{init: {'theme': 'dark', 'securityLevel': 'loose'}}%%",
    "click n0 call evil()",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(document.cookie)",
    "line1\nline2\r\nflowchart TD",
    "`markdown` **bold**",
    "name[with]{brackets}(and)|pipes|",
    "a;b#c&d'e\\f",
    "éèü 日本語 \u202e\u200b",
    "x" * 500,
    "",
]


def assert_safe(diagram: str) -> None:
    lines = diagram.split("\n")
    assert lines[0] in ("flowchart LR", "flowchart TD", "flowchart TB", "flowchart RL", "flowchart BT")
    depth = 0
    declared: list[str] = []
    for line in lines[1:]:
        assert any(p.fullmatch(line) for p in LINES), line
        depth += 1 if SUBGRAPH_LINE.fullmatch(line) else -1 if END_LINE.fullmatch(line) else 0
        assert depth >= 0, "end without subgraph"
        if NODE_LINE.fullmatch(line) or SUBGRAPH_LINE.fullmatch(line):
            declared.append(line.split()[1 if line.startswith("  subgraph") else 0].split("[")[0])
    assert depth == 0, "unclosed subgraph"
    assert len(declared) == len(set(declared)), "a node declared twice"
    for bad in ("<", '>"', "%%", "{", "}", "`", ";", '"]:::fn"', "\r"):
        assert bad not in diagram.replace("-->", "").replace("-.->", "")


def hostile_node(i: int, name: str, kind: str = "function") -> Node:
    return Node(f"{name}#{i}", kind, name, f"{name}.{name}", f"{name}/{name}.py", 1, 2)


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_give_safe_diagrams(name: str) -> None:
    nodes = [hostile_node(0, name), hostile_node(1, name, "module"), hostile_node(2, name, "method")]
    edges = [Edge(nodes[0].id, nodes[1].id, "calls", 1.0), Edge(nodes[2].id, nodes[0].id, "inherits", 1.0)]
    diagram = render_mermaid(nodes, edges, highlight=[nodes[0].id])
    assert_safe(diagram)
    assert "n0 -->|calls| n1" in diagram


@pytest.mark.parametrize("name", HOSTILE)
def test_sanitize_label(name: str) -> None:
    label = sanitize_label(name)
    assert re.fullmatch(LABEL, label)


def test_sanitize_examples() -> None:
    assert sanitize_label("pkg/mod.py") == "pkg/mod.py"
    assert sanitize_label("Storage.save(item)") == "Storage.save(item)"
    assert sanitize_label('a"]; click') == "a click"
    assert sanitize_label("%%{init}%%") == "init"
    assert sanitize_label("   ") == "unnamed"
    long = sanitize_label("word " * 40)
    assert len(long) <= 48 and long.endswith("...")


@given(st.text(), st.integers(8, 80))
def test_sanitize_label_property(text: str, max_len: int) -> None:
    label = sanitize_label(text, max_len)
    assert re.fullmatch(r"[A-Za-z0-9 _./:(),-]+", label)
    assert len(label) <= max_len
    assert label == label.strip() and "  " not in label


names = st.text(min_size=1, max_size=120)


@given(
    st.lists(
        st.tuples(names, st.sampled_from(["module", "class", "function", "method"])), min_size=1, max_size=8
    ),
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.sampled_from(EDGE_KINDS)), max_size=12),
    st.sampled_from(["LR", "TD", "TB", "RL", "BT"]),
)
def test_render_mermaid_property(
    specs: list[tuple[str, str]], pairs: list[tuple[int, int, str]], direction: str
) -> None:
    nodes = [Node(f"id{i}", kind, name, name, name, 1, 1) for i, (name, kind) in enumerate(specs)]
    edges = [Edge(f"id{a}", f"id{b}", kind, 1.0) for a, b, kind in pairs]
    diagram = render_mermaid(nodes, edges, highlight=["id0"], direction=direction)
    assert_safe(diagram)
    assert diagram.startswith(f"flowchart {direction}\n")


def test_caps_and_labels() -> None:
    nodes = [Node(f"m{i}", "function", f"func_{i}", f"func_{i}", "a.py", 1, 1) for i in range(50)]
    diagram = render_mermaid(nodes, [], max_nodes=10)
    assert diagram.count(":::fn") == 10
    small = render_mermaid(nodes, [], max_chars=600)
    assert len(small) <= 600
    assert_safe(small)
    custom = render_mermaid(nodes[:1], [], labels={"m0": "<b>x</b>"})
    assert '["b x /b"]' in custom
    with pytest.raises(ValueError, match="direction"):
        render_mermaid(nodes, [], direction="XX")


def test_duplicate_edges_drawn_once_and_unknown_endpoints_skipped() -> None:
    a, b = (Node(x, "function", x, x, "a.py", 1, 1) for x in "ab")
    diagram = render_mermaid(
        [a, b], [Edge("a", "b", "calls", 1.0), Edge("a", "b", "imports", 0.5), Edge("a", "zzz", "calls", 1.0)]
    )
    assert diagram.count("n0 ") == 1


def test_node_label() -> None:
    assert node_label(Node("p.py", "module", "p", "p", "pkg/p.py", 1, 1)) == "pkg/p.py"
    assert node_label(Node("p.py::A.b", "method", "b", "A.b", "p.py", 1, 1)) == "A.b"
    assert node_label(Node("p.py::O.A.b", "method", "b", "O.A.b", "p.py", 1, 1)) == "A.b"
    assert node_label(Node("p.py::f", "function", "f", "f", "p.py", 1, 1)) == "f"


def test_containment_is_drawn_as_nesting() -> None:
    mod = Node("m", "module", "m", "m", "pkg/m.py", 1, 50)
    cls = Node("m::C", "class", "C", "C", "pkg/m.py", 1, 20)
    meth = Node("m::C.run", "method", "run", "C.run", "pkg/m.py", 2, 9)
    fn = Node("m::helper", "function", "helper", "helper", "pkg/m.py", 30, 40)
    other = Node("o::main", "function", "main", "main", "pkg/o.py", 1, 5)
    edges = [
        Edge("m", "m::C", "contains", 1.0),
        Edge("m::C", "m::C.run", "contains", 1.0),
        Edge("m", "m::helper", "contains", 1.0),
        Edge("m::C.run", "m::helper", "calls", 1.0),
        Edge("m::C.run", "m::C", "calls", 0.9),  # a method building its own class: inside its subgraph
        Edge("o::main", "m::C", "calls", 1.0),  # an edge into a subgraph is fine
    ]
    diagram = render_mermaid([mod, cls, meth, fn, other], edges, highlight=["m::C.run"])
    assert_safe(diagram)
    lines = diagram.split("\n")
    assert lines[1:8] == [
        '  subgraph n0["pkg/m.py"]',
        '  subgraph n1["C"]',
        '  n2["C.run"]:::seed',
        "  end",
        "  class n1 cls",
        '  n3["helper"]:::fn',
        "  end",
    ]
    assert "contains" not in diagram
    assert "  n2 -->|calls| n3" in lines and "  n4 -->|calls| n1" in lines
    assert "  n2 -->|calls| n1" not in lines


def test_containment_cycles_and_second_parents_stay_flat() -> None:
    a, b, c = (Node(x, "class", x, x, "a.py", 1, 1) for x in "abc")
    edges = [
        Edge("a", "b", "contains", 1.0),
        Edge("b", "a", "contains", 1.0),  # would make a cycle: not nested, and inside a's box
        Edge("c", "b", "contains", 1.0),  # b already has a container
        Edge("a", "a", "contains", 1.0),
    ]
    diagram = render_mermaid([a, b, c], edges)
    assert_safe(diagram)
    assert diagram.count("subgraph") == 1 and '  subgraph n0["a"]' in diagram
    assert "  n2 ---|contains| n1" in diagram  # the second container is drawn as an edge


def test_links_only_to_relative_site_paths() -> None:
    a, b, c = (Node(x, "function", x, x, "a.py", 1, 1) for x in "abc")
    links = {"a": "files/a.py.html#L1", "b": 'javascript:alert(1)"', "c": "//evil.example/x"}
    diagram = render_mermaid([a, b, c], [Edge("a", "b", "calls", 1.0)], links=links, edge_labels=())
    assert_safe(diagram)
    assert '  click n0 href "files/a.py.html#L1"' in diagram
    assert "click n1" not in diagram and "click n2" not in diagram
    assert "  n0 --> n1" in diagram  # calls unlabelled when not asked for
    for bad in ("/etc/passwd", "https://x.org/", "a b.html", 'a".html', "files/x.html#top", "data:x", ""):
        assert not safe_link(bad), bad
    assert safe_link("files/a%20b/~x.py.html#L12") and safe_link("dirs/pkg/index.html")
