"""The answer's diagram: the call and inheritance paths between the answer's symbols, first.

Theory of operation (issue 14: the old diagram drew the whole two-hop expansion, 24 boxes and 25
labelled arrows for "How are chunks embedded and cached?" on this repository, and buried the path
the answer is about; docs/DECISIONS.md, "The answer's diagram"):

* The *ends* are the answer's matched symbols, best first; the *top* ones are the best match
  and the expansion's seeds. From each end a breadth-first walk follows ``calls`` and
  ``inherits`` edges forward (confidence at or above ``min_confidence``), at most ``PATH_HOPS``
  edges and ``WALK_LIMIT`` nodes, and keeps the shortest path to every other end it meets. Only
  paths from or to a top end count: two minor matches joined through a hub (``main`` calling
  half the code) drew a fan the panel could not hold.
* Nodes go in by priority until ``max_nodes`` (``RetrievalOptions.diagram_nodes``) are held:
  the best match; then the paths that join it, shortest first (ties: the better-ranked pair),
  each whole or not at all (when none joins it, the first path and those joining that); then
  the direct callees, bases and callers of the nodes already in, from the graph expansion
  (code before tests, callees before callers; callers only of matches), each only while the
  box it hangs from has fewer than ``MAX_DEGREE`` lines. A path that joins none of that stays out, as do matches with no link:
  the citations list them, and a second cluster beside the first doubled the width.
* Edges are every ``calls``/``inherits`` edge among the chosen nodes. ``imports`` are drawn only
  when they are the answer: when no call or inheritance edge joins the answer's symbols, the
  same selection runs over ``imports``. ``contains`` is never drawn (a method's label names its
  class), so the diagram has no nested boxes to tangle a chain.
* ``render_plan`` draws it top-down (a chain reads down the narrow panel), with short labels,
  an edge label only where the arrow is not a call, and a link from every node to its wiki
  page (``oya.core.sitepaths``); ``oya.core.diagram`` sanitises every label.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from oya.core.diagram import render_mermaid
from oya.core.graph import CodeGraph, Subgraph
from oya.core.kinds import file_kind
from oya.core.records import Edge, Node
from oya.core.sitepaths import page_url

PATH_HOPS = 3  # edges on a path between two matches: a path longer than this explains little
WALK_LIMIT = 4000  # nodes one walk may visit, so a hub cannot make a question slow
PATH_KINDS = ("calls", "inherits")
IMPORT_KINDS = ("imports",)
# lines a box may already have for a neighbour to join it: a wider fan does not fit the panel
MAX_DEGREE = 3
LABEL_CHARS = 36  # a node label's length: short enough for three boxes across the panel
# file kinds (oya.core.kinds) a diagram leaves out first: not "doc", which a folder named "site"
# or "examples" also gets while it may hold the code itself
ASIDE_KINDS = ("test", "changelog", "template")
_ERROR_NAME = re.compile(r"(Error|Exception|Warning)$")
DIRECTION = "TD"


@dataclass(frozen=True, slots=True)
class DiagramPlan:
    """What the answer's diagram shows: nodes by priority (the first are kept longest)."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]  # among ``nodes``, one per (source, target)
    matches: tuple[str, ...]  # ids of the answer's own symbols among ``nodes``

    def trimmed(self, n_nodes: int) -> DiagramPlan:
        """The plan's first ``n_nodes`` nodes and the edges among them."""
        kept = self.nodes[:n_nodes]
        ids = {n.id for n in kept}
        edges = tuple(e for e in self.edges if e.source in ids and e.target in ids)
        return DiagramPlan(kept, edges, tuple(m for m in self.matches if m in ids))


EMPTY_PLAN = DiagramPlan((), (), ())


def _walk(
    graph: CodeGraph, start: str, kinds: Sequence[str], min_confidence: float
) -> dict[str, Edge | None]:
    """Forward breadth-first walk from ``start``: each reached node's incoming edge on a shortest path."""
    came: dict[str, Edge | None] = {start: None}
    frontier = [start]
    for _ in range(PATH_HOPS):
        nxt: list[str] = []
        for node_id in frontier:
            for other, e in graph.successors(node_id, min_confidence):
                if e.kind not in kinds or other in came:
                    continue
                came[other] = e
                nxt.append(other)
                if len(came) >= WALK_LIMIT:
                    return came
        frontier = nxt
    return came


def shortest_paths(
    graph: CodeGraph, ends: Sequence[str], kinds: Sequence[str], min_confidence: float
) -> list[tuple[Edge, ...]]:
    """The shortest forward path between each ordered pair of ``ends`` that has one, as edges;
    shortest first, then by the better-ranked pair (an end's rank is its place in ``ends``)."""
    found: list[tuple[int, int, int, tuple[Edge, ...]]] = []
    for i, start in enumerate(ends):
        came = _walk(graph, start, kinds, min_confidence)
        for j, end in enumerate(ends):
            if end == start or end not in came:
                continue
            path: list[Edge] = []
            at = end
            while (e := came[at]) is not None:
                path.append(e)
                at = e.source
            found.append((len(path), min(i, j), max(i, j), tuple(reversed(path))))
    found.sort(key=lambda f: f[:3])
    return [f[3] for f in found]


def _neighbours(
    subgraph: Subgraph,
    shown: Sequence[str],
    kinds: Sequence[str],
    min_confidence: float,
    relevance: Mapping[str, int],
) -> list[tuple[str, str, bool]]:
    """Nodes of the expansion one ``kinds`` edge from a shown node, each with that shown node and
    whether it is *downstream* (code the shown node calls or extends), in the order a reader
    wants them: code before tests (unless the best match is one), downstream before
    callers, exceptions after other code, then by the retrieval's rank (``relevance``: node id
    -> rank), the shown node's priority and the expansion's order."""
    nodes = {n.id: n for n in subgraph.nodes}
    rank = {n.id: i for i, n in enumerate(subgraph.nodes)}
    at = {n: i for i, n in enumerate(shown)}
    side = shown[0] in nodes and file_kind(nodes[shown[0]].path) in ASIDE_KINDS
    unranked = len(relevance)
    best: dict[str, tuple[bool, int, bool, int, int, int]] = {}
    via: dict[str, str] = {}
    for e in subgraph.edges:
        if e.kind not in kinds or e.confidence < min_confidence:
            continue
        for here, other, upstream in ((e.source, e.target, 0), (e.target, e.source, 1)):
            if here in at and other in nodes and other not in at:
                aside = file_kind(nodes[other].path) in ASIDE_KINDS and not side
                error = bool(_ERROR_NAME.search(nodes[other].name))  # raising it: the error path
                key = (aside, upstream, error, relevance.get(other, unranked), at[here], rank[other])
                if other not in best or key < best[other]:
                    best[other] = key
                    via[other] = here
    return [(n, via[n], not best[n][0] and not best[n][1]) for n in sorted(best, key=lambda n: best[n])]


def _take_paths(chosen: list[str], paths: list[list[str]], max_nodes: int) -> None:
    """Add each path that shares a node with ``chosen`` to it, whole, while it fits (paths in
    order, again from the first after each one added: a path may join through the last)."""
    while True:
        joined = next((p for p in paths if set(p) & set(chosen)), None)
        if joined is None:
            return
        paths.remove(joined)
        new = [n for n in joined if n not in chosen]
        if len(chosen) + len(new) <= max_nodes:
            chosen.extend(new)


def _degree(
    graph: CodeGraph, node_id: str, among: set[str], kinds: Sequence[str], min_confidence: float
) -> int:
    """How many of ``among`` one ``kinds`` edge joins to ``node_id``."""
    return len(
        {o for o, e in graph.neighbors(node_id, min_confidence) if e.kind in kinds and o in among} - {node_id}
    )


def _select(
    graph: CodeGraph,
    ends: Sequence[str],
    subgraph: Subgraph,
    kinds: Sequence[str],
    *,
    max_nodes: int,
    min_confidence: float,
    relevance: Mapping[str, int],
) -> list[str]:
    """Node ids by priority: the best match; the paths from or to a top match that join it (or,
    when none does, the first such path and those joining that); what they call or extend; the
    matches' other neighbours."""
    chosen: list[str] = list(ends[:1])
    top = {ends[0], *subgraph.seeds}
    paths = [
        list(dict.fromkeys([p[0].source, *(e.target for e in p)]))
        for p in shortest_paths(graph, ends, kinds, min_confidence)
        if p[0].source in top or p[-1].target in top
    ]
    _take_paths(chosen, paths, max_nodes)
    if len(chosen) == 1 and paths and len(paths[0]) < max_nodes:
        chosen.extend(paths.pop(0))
        _take_paths(chosen, paths, max_nodes)
    matched = set(ends)
    for near_only in (True, False):  # what they call or extend, then what else touches a match
        for node_id, via, downstream in _neighbours(subgraph, chosen, kinds, min_confidence, relevance):
            wanted = downstream if near_only else via in matched
            if (
                len(chosen) < max_nodes
                and wanted
                and _degree(graph, via, set(chosen), kinds, min_confidence) < MAX_DEGREE
            ):
                chosen.append(node_id)
    return chosen[:max_nodes]


def _edges_among(
    graph: CodeGraph, ids: Sequence[str], kinds: Sequence[str], min_confidence: float
) -> tuple[Edge, ...]:
    keep = set(ids)
    seen: set[tuple[str, str]] = set()
    out: list[Edge] = []
    for node_id in ids:
        for other, e in graph.neighbors(node_id, min_confidence):
            pair = (e.source, e.target)
            if e.source == node_id and other in keep and e.kind in kinds and pair not in seen:
                seen.add(pair)
                out.append(e)
    return tuple(out)


def plan_diagram(
    graph: CodeGraph,
    matches: Sequence[str],
    subgraph: Subgraph,
    *,
    max_nodes: int,
    min_confidence: float,
    relevance: Mapping[str, int] | None = None,
    details_for: Sequence[str] = (),
) -> DiagramPlan:
    """The answer's diagram: ``matches`` are its symbols' node ids, best first; ``relevance``
    ranks other nodes (node id -> rank, the retrieval's candidates) for the places left.
    ``details_for``: other nodes whose details the caller reads, loaded with the diagram's (one
    round for a sharded graph)."""
    if max_nodes < 1:
        raise ValueError("max_nodes must be at least 1")
    ends = [m for m in dict.fromkeys(matches) if m in graph.nodes]
    if not ends:
        graph.load_details(details_for)
        return EMPTY_PLAN
    for kinds in (PATH_KINDS, IMPORT_KINDS):
        ids = _select(
            graph,
            ends,
            subgraph,
            kinds,
            max_nodes=max_nodes,
            min_confidence=min_confidence,
            relevance=relevance or {},
        )
        edges = _edges_among(graph, ids, kinds, min_confidence)
        if edges:
            break
    wanted = set(ends)
    graph.load_details([*ids, *details_for])
    return DiagramPlan(tuple(graph.nodes[n] for n in ids), edges, tuple(n for n in ids if n in wanted))


def short_label(node: Node) -> str:
    """``Class.method``, ``function``, ``Class`` or the module's file name."""
    if node.kind == "module":
        return posixpath.basename(node.path) or node.path
    if node.kind == "method" and "." in node.qualname:
        return ".".join(node.qualname.split(".")[-2:])
    return node.name


def _labels(nodes: Sequence[Node]) -> dict[str, str]:
    """Short labels; two alike get their file names, so the reader can tell them apart."""
    short = {n.id: short_label(n) for n in nodes}
    counts: dict[str, int] = {}
    for text in short.values():
        counts[text] = counts.get(text, 0) + 1
    return {
        n.id: short[n.id]
        if counts[short[n.id]] == 1 or n.kind == "module"
        else f"{short[n.id]} ({posixpath.basename(n.path)})"
        for n in nodes
    }


def render_plan(plan: DiagramPlan) -> str:
    """The plan as Mermaid ("" when empty): nodes in path order, each linked to its page."""
    if not plan.nodes:
        return ""
    order: dict[str, None] = {}
    for e in plan.edges:  # declared in the order the paths run, so a chain is laid out in order
        order.setdefault(e.source)
        order.setdefault(e.target)
    by_id = {n.id: n for n in plan.nodes}
    nodes = [by_id[n] for n in order] + [n for n in plan.nodes if n.id not in order]
    links = {n.id: page_url(n.path, None if n.kind == "module" else n.start_line) for n in nodes}
    return render_mermaid(
        nodes,
        plan.edges,
        highlight=plan.matches,
        max_nodes=len(nodes),
        max_chars=1 << 30,  # the caller trims by priority (DiagramPlan.trimmed), not render_mermaid
        direction=DIRECTION,
        labels=_labels(nodes),
        links=links,
        edge_labels=("inherits", "imports"),
        label_chars=LABEL_CHARS,
    )
