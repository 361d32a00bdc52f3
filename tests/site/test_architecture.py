"""The architecture page's dependency map: bounded, readable (few unlabelled arrows), linked, safe."""

from __future__ import annotations

import re

from oya.core.graph import CodeGraph
from oya.core.records import Edge, Node
from oya.core.sitepaths import dir_page_path, page_url, site_url
from oya.site.architecture import MAX_EDGES, MAX_NODES, MAX_OUT, module_map

NODE = re.compile(r'  (n\d+)\["([A-Za-z0-9 _./:(),-]+)"\]:::(mod|seed|cls|fn)')
EDGE = re.compile(r"  (n\d+) (-->|-\.->) (n\d+)")
CLICK = re.compile(r'  click (n\d+) href "([A-Za-z0-9_.~/%-]+)"')


def module(path: str) -> Node:
    return Node(path, "module", path, path, path, 1, 10)


def function(path: str, name: str) -> Node:
    return Node(f"{path}::{name}", "function", name, name, path, 2, 5)


def graph_of(packages: list[str], per_package: int = 2) -> CodeGraph:
    """Modules in ``packages``; every function calls the first function of every other package."""
    nodes: list[Node] = []
    for pkg in packages:
        for i in range(per_package):
            nodes += [module(f"{pkg}/m{i}.py"), function(f"{pkg}/m{i}.py", f"f{i}")]
    fns = [n for n in nodes if n.kind == "function"]
    firsts = [n for n in fns if n.name == "f0"]
    edges = [
        Edge(f.id, g.id, "calls", 1.0)
        for f in fns
        for g in firsts
        if f.path.rsplit("/", 1)[0] != g.path.rsplit("/", 1)[0]
    ]
    edges += [
        Edge(module(f.path).id, module(g.path).id, "imports", 1.0)
        for f in fns
        for g in firsts
        if f.path != g.path
    ]
    return CodeGraph(nodes, edges)


def parse(mermaid: str) -> tuple[dict[str, str], list[tuple[str, str]], dict[str, str]]:
    lines = mermaid.split("\n")
    nodes = {m[1]: m[2] for line in lines if (m := NODE.fullmatch(line))}
    edges = [(m[1], m[3]) for line in lines if (m := EDGE.fullmatch(line))]
    links = {m[1]: m[2] for line in lines if (m := CLICK.fullmatch(line))}
    return nodes, edges, links


def test_a_big_repository_gives_a_bounded_linked_map_of_its_code_packages() -> None:
    code = [f"src/pkg{i}" for i in range(24)]
    tests = [f"tests/t{i}" for i in range(6)]
    mm = module_map(graph_of(code + tests))
    assert mm.collapsed and len(mm.units) == MAX_NODES
    assert all(u.key.startswith("src/") for u in mm.units)  # tests are left out while code has room
    assert {u.key for u in mm.left_out} >= set(tests)
    nodes, edges, links = parse(mm.mermaid)
    assert mm.mermaid.startswith("flowchart TD\n") and "|" not in mm.mermaid  # no edge labels
    assert len(nodes) == MAX_NODES and len(edges) <= MAX_EDGES
    by_source: dict[str, int] = {}
    for a, _ in edges:
        by_source[a] = by_source.get(a, 0) + 1
    assert max(by_source.values()) <= MAX_OUT
    assert mm.hidden_edges == len(mm.dependencies) - len(edges) > 0
    label_to_url = {nodes[n]: url for n, url in links.items()}
    assert set(links) == set(nodes)
    assert label_to_url["src/pkg0/ (2 modules)"] == site_url(dir_page_path("src/pkg0"))


def test_a_small_repository_maps_modules_linked_to_their_pages() -> None:
    mm = module_map(graph_of(["a", "b"], per_package=1))
    assert not mm.collapsed
    nodes, edges, links = parse(mm.mermaid)
    assert sorted(nodes.values()) == ["a/m0.py", "b/m0.py"]
    assert {links[n] for n in nodes} == {page_url("a/m0.py"), page_url("b/m0.py")}
    assert len(edges) == 2 and all(arrow for arrow in edges)


def test_only_tests_still_get_a_map_and_long_names_keep_their_end() -> None:
    deep = "tests/fixtures/langs/kotlin/src/com/acme/util"
    mm = module_map(graph_of(["tests/a", deep] + [f"tests/p{i}" for i in range(30)], per_package=1))
    nodes, _, _ = parse(mm.mermaid)
    assert 0 < len(nodes) <= MAX_NODES  # no code at all: the tests are the map
    assert any(
        label.startswith(".../") and label.endswith("/acme/util/ (1 module)") for label in nodes.values()
    )


def test_hostile_directory_names_stay_inside_their_labels() -> None:
    hostile = ['x"]; click n0 "javascript:alert(1)', "%%{init}%%", "<img src=x onerror=alert(1)>", "a b/c|d"]
    mm = module_map(graph_of(hostile + [f"p{i}" for i in range(30)], per_package=1))
    for line in mm.mermaid.split("\n")[1:]:
        assert (
            line.startswith("  classDef")
            or NODE.fullmatch(line)
            or EDGE.fullmatch(line)
            or CLICK.fullmatch(line)
        ), line
