"""The module dependency map of a repository, readable at any size.

Theory of operation:

* Every ``imports``/``calls``/``inherits`` edge of the code graph (at or above
  ``MIN_CONFIDENCE``) is lifted from its symbols to their modules, so a function calling
  another module's function counts as one dependency between the two modules. Edges inside
  one unit and ``contains`` edges are dropped.
* Up to ``COLLAPSE_ABOVE`` modules each module is a node. Beyond that, modules collapse into
  their directory (package), so a 500-module repository shows a few dozen packages.
* At most ``MAX_NODES`` units are drawn: those with the most dependency weight in and out
  (ties by name), and the page says which ones were left out. Edge labels come from
  ``render_mermaid``, which also sanitises every label.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass

from oya.core.diagram import render_mermaid
from oya.core.graph import CodeGraph
from oya.core.records import Edge, Node

MIN_CONFIDENCE = 0.5
COLLAPSE_ABOVE = 25
MAX_NODES = 30
MAX_EDGES = 90
ROOT_LABEL = "(root)"


@dataclass(frozen=True)
class Unit:
    key: str  # module path, or directory path ("" is the root)
    label: str
    modules: tuple[str, ...]  # module paths inside
    weight: int  # dependency edges in + out


@dataclass(frozen=True)
class Dependency:
    source: str
    target: str
    kinds: dict[str, int]

    @property
    def weight(self) -> int:
        return sum(self.kinds.values())


@dataclass(frozen=True)
class ModuleMap:
    collapsed: bool  # units are packages (directories), not modules
    units: tuple[Unit, ...]  # drawn units
    left_out: tuple[Unit, ...]  # units not drawn (the cap)
    dependencies: tuple[Dependency, ...]  # among drawn units, heaviest first
    n_modules: int
    mermaid: str
    hidden_edges: int  # dependencies among drawn units not drawn (edge cap)


def package_of(path: str) -> str:
    return posixpath.dirname(path)


def module_map(
    graph: CodeGraph, *, collapse_above: int = COLLAPSE_ABOVE, max_nodes: int = MAX_NODES
) -> ModuleMap:
    modules = sorted(n.path for n in graph.nodes.values() if n.kind == "module")
    collapsed = len(modules) > collapse_above
    unit_of = {m: (package_of(m) if collapsed else m) for m in modules}
    members: dict[str, list[str]] = defaultdict(list)
    for m in modules:
        members[unit_of[m]].append(m)

    pairs: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for e in graph.edges:
        if e.kind == "contains" or e.confidence < MIN_CONFIDENCE:
            continue
        a = unit_of.get(graph.nodes[e.source].path)
        b = unit_of.get(graph.nodes[e.target].path)
        if a is None or b is None or a == b:
            continue
        pairs[(a, b)][e.kind] += 1
    weight: Counter[str] = Counter()
    for (a, b), kinds in pairs.items():
        w = sum(kinds.values())
        weight[a] += w
        weight[b] += w

    def label(key: str) -> str:
        if not collapsed:
            return key
        name = key or ROOT_LABEL
        count = len(members[key])
        return f"{name}/ ({count} module{'s' if count != 1 else ''})" if key else f"{name} ({count})"

    all_units = [Unit(k, label(k), tuple(members[k]), weight[k]) for k in members]
    ranked = sorted(all_units, key=lambda u: (-u.weight, u.key))
    drawn = sorted(ranked[:max_nodes], key=lambda u: u.key)
    left_out = tuple(sorted(ranked[max_nodes:], key=lambda u: u.key))
    keep = {u.key for u in drawn}
    deps = sorted(
        (Dependency(a, b, dict(sorted(k.items()))) for (a, b), k in pairs.items() if a in keep and b in keep),
        key=lambda d: (-d.weight, d.source, d.target),
    )
    shown = deps[:MAX_EDGES]
    mermaid = _diagram(drawn, shown)
    return ModuleMap(
        collapsed, tuple(drawn), left_out, tuple(deps), len(modules), mermaid, len(deps) - len(shown)
    )


def _diagram(units: list[Unit], deps: list[Dependency]) -> str:
    if not units:
        return ""
    nodes = [Node(u.key or ROOT_LABEL, "module", u.label, u.label, u.key or ROOT_LABEL, 1, 1) for u in units]
    edges = [
        Edge(
            d.source or ROOT_LABEL,
            d.target or ROOT_LABEL,
            "calls" if d.kinds.get("calls") else ("inherits" if d.kinds.get("inherits") else "imports"),
            1.0,
        )
        for d in deps
    ]
    labels = {n.id: u.label for n, u in zip(nodes, units, strict=True)}
    return render_mermaid(nodes, edges, max_nodes=len(nodes), max_chars=20_000, direction="LR", labels=labels)
