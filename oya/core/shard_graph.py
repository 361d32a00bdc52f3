"""The code graph of a sharded bundle: what every question walks in one shard, the rest on demand.

Theory of operation: a question's graph channel scores every node's name, qualified name, path,
kind and centrality, and expansion and the diagram walk the edges; those travel in the ``graph-*``
shard, read when the bundle opens. A node's lines, signature and docstring are read only for the
nodes an answer shows (its subgraph, citations and diagram), so they travel apart: in the chunk
shard of the node's first chunk (``house``; a ``details`` table of ``NODE_DETAIL_COLUMNS``), or for
a node without chunks in ``nodes-*`` runs, fetched through ``CodeGraph.load_details``, which the
stages call before they read those fields (a no-op for a graph held whole). Until then a node carries placeholders (line 1, no signature, no docstring).

A node's id is not shipped when it is the indexer's own form (``derived_node_id``: the path for a
module, ``path::qualname`` otherwise); the few that differ travel as exceptions. Same graph, same
answers as the whole bundle (tests/site/test_shards.py).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from oya.core.bundle_format import BundleError, column, get_table, rows
from oya.core.graph import CodeGraph
from oya.core.records import EDGE_KINDS, Edge, Node
from oya.core.shard_store import ShardStore, check_name, undelta

# the graph shard's node columns (every question reads them) and a nodes shard's (an answer's nodes)
GRAPH_NODE_COLUMNS = ("kind", "name", "scope", "path", "centrality")
NODE_DETAIL_COLUMNS = ("start_line", "end_line", "signature", "docstring")
EDGE_SHARD_COLUMNS = ("source", "target", "kind", "confidence")


def derived_node_id(kind: str, qualname: str, path: str) -> str:
    """The id the indexer gives a node: its path for a module, ``path::qualname`` otherwise."""
    return path if kind == "module" else f"{path}::{qualname}"


def node_scope(name: str, qualname: str) -> str | None:
    """What ``qualname`` adds to ``name`` (``"Class"`` for ``Class.method``; None: the name alone);
    the qualified name is ``scope.name``. Raises ``ValueError`` for a qualified name of another form."""
    if qualname == name:
        return None
    if qualname.endswith("." + name):
        return qualname[: -len(name) - 1]
    raise ValueError(qualname)


def _qualname(name: str, scope: str | None) -> str:
    return name if scope is None else f"{scope}.{name}"


class _EdgeColumns:
    """The graph shard's edges as columns (endpoints by node position), an ``Edge`` made when a
    walk first reaches it and kept, so both ends see the same object (``expand`` takes the edges
    among its nodes by identity): opening sympy's 172k edges as records took 0.4 s in CPython."""

    __slots__ = ("ids", "sources", "targets", "kinds", "confidences", "_made")

    def __init__(
        self, ids: Sequence[str], sources: list[int], targets: list[int], kinds: list[str], confs: list[Any]
    ) -> None:
        if sources != sorted(sources):  # (in C: a sorted list is one pass of the sort)
            raise BundleError("the graph shard's edges are not in source order")  # walks bisect them
        ends = [*sources[:1], *sources[-1:], *targets]
        if ends and not (0 <= min(ends) and max(ends) < len(ids)):
            raise BundleError("an edge of the graph shard names a node position out of range")
        self.ids, self.sources, self.targets, self.kinds, self.confidences = (
            ids,
            sources,
            targets,
            kinds,
            confs,
        )
        self._made: dict[int, Edge] = {}

    def __len__(self) -> int:
        return len(self.sources)

    def edge(self, i: int) -> Edge:
        e = self._made.get(i)
        if e is None:
            ids = self.ids
            e = self._made[i] = Edge(
                ids[self.sources[i]], ids[self.targets[i]], self.kinds[i], float(self.confidences[i])
            )
        return e


class _Adjacency(dict[str, list[tuple[str, Edge]]]):
    """Each node's ``(other end, edge)`` list as ``CodeGraph`` builds it (edges in order, listed
    under both ends), made when first asked for: a question walks a few hundred of 34k nodes."""

    def __init__(self, pos: Mapping[str, int], edges: _EdgeColumns) -> None:
        super().__init__()
        self._pos = pos
        self._edges = edges
        self._incident: list[list[int]] | None = None

    def get(self, node_id: str, default: Any = None) -> Any:
        if node_id in self:
            return self[node_id]
        p = self._pos.get(node_id)
        if p is None:
            return default
        if self._incident is None:  # edges ending at each node; those starting there are a range
            incoming: list[list[int]] = [[] for _ in self._pos]
            for i, t in enumerate(self._edges.targets):
                incoming[t].append(i)
            self._incident = incoming
        sources = self._edges.sources  # sorted (the shard ships them as differences)
        out = range(bisect_left(sources, p), bisect_right(sources, p))
        # in edge order, as CodeGraph lists them; a self-loop twice (out and in), as CodeGraph does
        order = sorted([*out, *self._incident[p]])
        edge = self._edges.edge
        entries = [(e.target if e.source == node_id else e.source, e) for e in map(edge, order)]
        self[node_id] = entries
        return entries


class ShardedCodeGraph(CodeGraph):
    """A ``CodeGraph`` whose nodes' lines, signatures and docstrings arrive by ``nodes`` shard, and
    whose adjacency is built node by node from the edge columns (``edges``, the whole list, is
    made only when read: the browser never reads it)."""

    __slots__ = (
        "_store",
        "_order",
        "_pos",
        "_first",
        "_names_of_shards",
        "_loaded",
        "_pending",
        "_columns",
        "_chunk_nodes",
        "_chunk_first",
        "_chunk_names",
        "_homes",
    )

    def __init__(
        self,
        nodes: Sequence[Node],
        edges: _EdgeColumns,
        store: ShardStore,
        detail_first: Sequence[int],
        detail_names: Sequence[str],
    ) -> None:
        super().__init__(nodes, ())
        self._order = [n.id for n in nodes]
        self._pos = {nid: i for i, nid in enumerate(self._order)}
        self._columns = edges
        self._adj = _Adjacency(self._pos, edges)
        self._store = store
        self._first = list(detail_first)
        self._names_of_shards = list(detail_names)
        self._loaded: set[str] = set()
        self._pending: dict[int, tuple[Any, ...]] = {}  # fetched details not yet put in their node
        # where a node with chunks keeps its details: the chunk shard of its first chunk
        self._chunk_nodes: Sequence[int] = ()
        self._chunk_first: Sequence[int] = ()
        self._chunk_names: Sequence[str] = ()
        self._homes: dict[int, str] | None = None

    def house(
        self, chunk_nodes: Sequence[int], chunk_first: Sequence[int], chunk_names: Sequence[str]
    ) -> None:
        """The chunks' node positions and the chunk shards (first chunk position, name): a node
        with chunks has its details in the shard of its first chunk (``oya.site.shards``)."""
        self._chunk_nodes, self._chunk_first, self._chunk_names = chunk_nodes, chunk_first, chunk_names
        self._homes = None

    def _home(self, p: int) -> str:
        """The name of the shard holding the details of the node at position ``p``."""
        if self._homes is None:  # once, at the first question's details: not on opening
            homes: dict[int, str] = {}
            ends = [*self._chunk_first[1:], len(self._chunk_nodes)]
            for a, b, name in zip(self._chunk_first, ends, self._chunk_names, strict=True):
                for node in self._chunk_nodes[a:b]:
                    if node >= 0 and node not in homes:
                        homes[node] = name
            self._homes = homes
        home = self._homes.get(p)
        if home is not None:
            return home
        run = bisect_right(self._first, p) - 1
        if run < 0:
            raise BundleError(f"no shard holds the details of node {p}")
        return self._names_of_shards[run]

    @property
    def edges(self) -> list[Edge]:
        return [self._columns.edge(i) for i in range(len(self._columns))]

    @edges.setter
    def edges(self, value: list[Edge]) -> None:
        if value:  # CodeGraph.__init__ sets the (empty) list it was given; the columns hold the edges
            raise AttributeError("a sharded graph's edges come from its shard")

    def successors(self, node_id: str, min_confidence: float = 0.0) -> list[tuple[str, Edge]]:
        p = self._pos.get(node_id)
        if p is None:
            return []
        columns, sources = self._columns, self._columns.sources  # sorted: a node's edges are a range
        made = map(columns.edge, range(bisect_left(sources, p), bisect_right(sources, p)))
        return [(e.target, e) for e in made if e.confidence >= min_confidence]

    def load_details(self, node_ids: Sequence[str]) -> None:
        positions = [self._pos[n] for n in node_ids if n in self._pos]
        need = sorted({self._home(p) for p in positions} - self._loaded)
        # all in one round; a shard counts as loaded only once its rows are in
        for name, table in zip(need, self._store.tables(need), strict=True):
            t = get_table(table, "details") if name.startswith("chunks-") else table
            at = undelta(column(t, "at", None))
            got = list(rows(t, NODE_DETAIL_COLUMNS, len(at)))
            if any(not 0 <= p < len(self._order) or self._home(p) != name for p in at):
                raise BundleError(f"shard {name} holds details of nodes the manifest places elsewhere")
            self._pending.update(zip(at, got, strict=True))
            self._loaded.add(name)
        for p in positions:  # only the nodes asked for are remade (a shard holds ~100)
            row = self._pending.pop(p, ())
            if row:
                nid = self._order[p]
                start, stop, sig, doc = row
                self.nodes[nid] = replace(
                    self.nodes[nid], start_line=start, end_line=stop, signature=sig, docstring=doc
                )


def _exceptions(nt: Mapping[str, Any], table: str, key: str) -> dict[int, str]:
    t = get_table(nt, table)
    at: list[int] = column(t, "at", None)
    return dict(zip(at, column(t, key, len(at)), strict=True))


def decode_sharded_graph(
    store: ShardStore, graph_doc: Mapping[str, Any], details: Mapping[str, Any], paths: list[str]
) -> tuple[list[str], ShardedCodeGraph]:
    """The node ids (in bundle order) and the graph of a ``graph`` shard and the manifest's
    ``nodes`` table (``first``: the node position each details shard starts at; ``name``)."""
    nt = get_table(graph_doc, "nodes")
    n = len(column(nt, "kind", None))
    # by node position: the ids that are not derived_node_id's, the qualified names node_scope refused
    ids, quals = _exceptions(nt, "ids", "id"), _exceptions(nt, "qualnames", "qualname")
    nodes: list[Node] = []
    for i, (kind, name, scope, p, cent) in enumerate(rows(nt, GRAPH_NODE_COLUMNS, n)):
        path = paths[p]
        qual = quals.get(i) or _qualname(name, scope)
        nid = ids.get(i) or derived_node_id(kind, qual, path)
        nodes.append(Node(nid, kind, name, qual, path, 1, 1, "", "", float(cent)))
    node_ids = [node.id for node in nodes]
    et = get_table(graph_doc, "edges")
    n_edges = len(column(et, "target", None))
    sources = undelta(column(et, "source", n_edges))  # sorted: shipped as differences
    targets, kinds, confs = (column(et, c, n_edges) for c in EDGE_SHARD_COLUMNS[1:])
    if any(k not in EDGE_KINDS for k in set(kinds)):
        raise BundleError("an edge of the graph shard has an unknown kind")
    edges = _EdgeColumns(node_ids, sources, targets, kinds, confs)
    first = undelta(column(details, "first", None))  # runs of the nodes without chunks
    if first != sorted(first) or any(not 0 <= p < n for p in first):
        raise BundleError("the nodes shards' first positions are out of order")
    names = [check_name(name, "nodes") for name in column(details, "name", len(first))]
    return node_ids, ShardedCodeGraph(nodes, edges, store, first, names)
