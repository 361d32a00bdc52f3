"""The module dependency map of a repository, readable at any size.

Theory of operation:

* Every ``imports``/``calls``/``inherits`` edge of the code graph (at or above
  ``MIN_CONFIDENCE``) is lifted from its symbols to their modules, so a function calling
  another module's function counts as one dependency between the two modules. Edges inside
  one unit and ``contains`` edges are dropped.
* Up to ``COLLAPSE_ABOVE`` modules each module is a node. Beyond that, modules collapse into
  their directory (package), so a 500-module repository shows a few dozen packages.
* At most ``MAX_NODES`` units are drawn: those with the most dependency weight in and out
  (ties by name), among the units with dependencies that are not tests, fixtures or
  benchmarks (a unit is set aside when all its modules are ``oya.core.answer_diagram.ASIDE_KINDS``),
  unless there are none; the page says which ones were left out and its table lists every unit.
* At most ``MAX_OUT`` arrows leave a unit (its heaviest dependencies) and ``MAX_EDGES`` in all;
  the table under the diagram lists every dependency. Arrows carry no labels: a solid arrow
  is a call or inheritance, a dashed one imports only (the map of this repository drew 90
  labelled arrows over 30 boxes, 2,800 px wide, unreadable at any scale; issue 14).
* The map is drawn top-down (dependents above what they use), every box links to its
  module's or package's page (``oya.core.sitepaths``), and ``render_mermaid`` sanitises
  every label.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass

from oya.core.answer_diagram import ASIDE_KINDS
from oya.core.diagram import render_mermaid
from oya.core.graph import CodeGraph
from oya.core.kinds import file_kind
from oya.core.records import Edge, Node
from oya.core.sitepaths import dir_page_path, page_url, site_url

MIN_CONFIDENCE = 0.5
COLLAPSE_ABOVE = 25
MAX_NODES = 16  # boxes a reader can take in at once, and a layered map of them fits the page width
MAX_OUT = 3  # arrows leaving one box: its heaviest dependencies
MAX_EDGES = 30
LABEL_CHARS = 40
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
    ranked = sorted(all_units, key=lambda u: (_aside(u), -u.weight, u.key))
    drawable = _drawable(ranked)
    drawn = sorted(drawable[:max_nodes], key=lambda u: u.key)
    left_out = tuple(sorted((u for u in ranked if u not in drawn), key=lambda u: u.key))
    keep = {u.key for u in drawn}
    deps = sorted(
        (Dependency(a, b, dict(sorted(k.items()))) for (a, b), k in pairs.items() if a in keep and b in keep),
        key=lambda d: (-d.weight, d.source, d.target),
    )
    shown = _strongest(deps)
    mermaid = _diagram(drawn, shown, collapsed)
    return ModuleMap(
        collapsed, tuple(drawn), left_out, tuple(deps), len(modules), mermaid, len(deps) - len(shown)
    )


def _drawable(ranked: list[Unit]) -> list[Unit]:
    """The units worth a box: code with dependencies; else any with dependencies; else all.
    Tests and unconnected units stay in the table under the map, where they cost no room."""
    connected = [u for u in ranked if u.weight > 0]
    return [u for u in connected if not _aside(u)] or connected or ranked


def _aside(unit: Unit) -> bool:
    """Every module of the unit is a test (fixtures and benchmarks count), a change log or a template."""
    return all(file_kind(m) in ASIDE_KINDS for m in unit.modules)


def _strongest(deps: list[Dependency]) -> list[Dependency]:
    """The heaviest dependencies (``deps`` is heaviest first), ``MAX_OUT`` per source, ``MAX_EDGES`` in all."""
    out: list[Dependency] = []
    per_source: Counter[str] = Counter()
    for d in deps:
        if per_source[d.source] < MAX_OUT and len(out) < MAX_EDGES:
            per_source[d.source] += 1
            out.append(d)
    return out


def _short(label: str) -> str:
    """A long path label keeps its end (the folder's own name and the module count), not its start."""
    if len(label) <= LABEL_CHARS:
        return label
    path, sep, count = label.partition(" (")
    tail = sep + count
    parts = path.rstrip("/").split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(".../" + part + "/" + kept + "/" + tail) > LABEL_CHARS:
            break
        kept = part + "/" + kept
    return ".../" + kept + ("/" if path.endswith("/") else "") + tail


def _diagram(units: list[Unit], deps: list[Dependency], collapsed: bool) -> str:
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
    labels = {n.id: _short(u.label) for n, u in zip(nodes, units, strict=True)}
    links = {
        n.id: site_url(dir_page_path(u.key)) if collapsed else page_url(u.key)
        for n, u in zip(nodes, units, strict=True)
    }
    return render_mermaid(
        nodes,
        edges,
        max_nodes=len(nodes),
        max_chars=20_000,
        direction="TD",
        labels=labels,
        links=links,
        edge_labels=(),
        label_chars=LABEL_CHARS,
    )
