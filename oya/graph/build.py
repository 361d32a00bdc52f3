"""Build the code graph: resolve each file's references across the repository, then rank nodes.

Theory of operation. Every edge carries a confidence that says how the target was found:

=====================================================  ==========
``contains``: module -> top-level symbol, class -> member  1.0
``imports`` naming a repository module exactly             1.0
``imports`` naming a symbol/attribute of a repo module     0.9  (edge to that module)
call/base through an import binding (``from a import f``)  0.9
same-module name, ``self.m``/``cls.m``/``super().m``       0.8  (bases in the repo are walked)
the only symbol of that name elsewhere in the repository    0.5
a name several symbols share                               0.6 / n, within [0.05, 0.3];
                                                           the 3 nearest candidates by path
unresolved (builtins, external libraries)                  no edge
=====================================================  ==========

Name matching skips builtin names (``len``) and the method names of builtin types
(``x.update()``, ``x.items()``), and it respects how the name is used: a bare call (``foo()``) can only mean a
function or a class, an attribute call on an unknown object (``obj.save()``) only a method,
and a base class only a class. A head bound to an import that leaves the repository
(``np.array``) is never name-matched: the import says where it comes from. Name matching
stays within a language family (``oya.graph.keys.family``).

Every other language links through module keys (``oya.graph.keys``) with the same bands: an
import found whole 1.0, a name inside it 0.9 (several equally good keys: the nearest, 0.5);
``this``/``self``/a Go receiver, an implicit ``this`` member and the file's own package (a Go
package, a Java package's sibling class) 0.8; through an import binding or a namespace the file
opens (C# ``using``) 0.9. A string naming a repository file (``file:`` imports, from another
program's command line) is an ``imports`` edge at 1.0.

Duplicate edges (same source, target, kind) keep their highest confidence; self-loops are
dropped (a recursive call adds nothing to retrieval).

Centrality is networkx PageRank (Brin & Page 1998, damping 0.85) over calls, imports and
inherits weighted by confidence, plus ``contains`` at a tenth of its weight so that
members of busy modules rise a little. It is scaled so the top node has 1.0; the raw
values of a large repository would round to zero at six decimals.

Output is deterministic: nodes sorted by id, edges by (source, target, kind), floats
rounded to 6 decimals.
"""

from __future__ import annotations

import builtins
import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

import networkx as nx

from oya.core.records import EDGE_KINDS, NODE_KINDS, Edge, Node
from oya.graph.keys import IMPORT_MODULE, IMPORT_NAME, KeyIndex, family, is_python, shared_prefix
from oya.models import ParsedFile, Reference

CONTAINS = 1.0
VIA_IMPORT = 0.9
SAME_SCOPE = 0.8
UNIQUE_NAME = 0.5
AMBIGUOUS_TOTAL = 0.6
AMBIGUOUS_MAX = 0.3
AMBIGUOUS_MIN = 0.05
MAX_CANDIDATES = 3
CONTAINS_RANK_WEIGHT = 0.1
_MAX_HOPS = 8  # re-exports and base classes followed at most this deep
# Names never matched by name alone: a bare `len()` is the builtin and an unknown
# `x.update()` is far more often a dict than the one repository class with `update`.
_BUILTIN_NAMES = frozenset(dir(builtins))
_BUILTIN_METHODS = frozenset(
    name for kind in (dict, list, set, str, bytes, tuple, int, float, object) for name in dir(kind)
)


def _strip_call(segment: str) -> str:
    while segment.endswith("()"):
        segment = segment[:-2]
    return segment


class _Resolver:
    """Indexes of the whole repository and the resolution rules over them."""

    def __init__(self, parsed: Sequence[ParsedFile], nodes: dict[str, Node]) -> None:
        self.nodes = nodes
        self.files = {p.path: p for p in parsed}
        self.module_ids: dict[str, str] = {}
        # .py before .pyi, then path order, so the first module of a name wins
        for p in sorted(parsed, key=lambda p: (p.path.endswith(".pyi"), p.path)):
            if p.module and p.module not in self.module_ids and is_python(p.path):
                self.module_ids[p.module] = p.path
        self.qualified: dict[str, str] = {}  # "pkg.mod.Cls.m" -> node id
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.members: dict[str, dict[str, str]] = defaultdict(dict)  # class id -> name -> id
        self.bases: dict[str, list[str]] = {}
        for node in nodes.values():
            if node.kind == "module":
                continue
            module = self.files[node.path].module if node.path in self.files else ""
            if module and self.module_ids.get(module) == node.path and is_python(node.path):
                self.qualified.setdefault(f"{module}.{node.qualname}", node.id)
            self.by_name[node.name].append(node.id)
            parent = node.qualname.rpartition(".")[0]
            if parent:
                self.members[f"{node.path}::{parent}"][node.name] = node.id
        self.keys = KeyIndex(parsed, nodes)
        self.families: dict[str, str] = {}

    # -- absolute names -------------------------------------------------------------------
    def module_of(self, target: str) -> tuple[str, bool] | None:
        """(module id, exact) for the longest repository module that ``target`` starts with."""
        parts = target.split(".")
        for i in range(len(parts), 0, -1):
            module_id = self.module_ids.get(".".join(parts[:i]))
            if module_id is not None:
                return module_id, i == len(parts)
        return None

    def absolute(self, target: str, hops: int = 0) -> str | None:
        """Node id named by an absolute dotted name, following re-exports of packages."""
        if target in self.module_ids:
            return self.module_ids[target]
        if target in self.qualified:
            return self.qualified[target]
        if hops >= _MAX_HOPS:
            return None
        parts = target.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module_id = self.module_ids.get(".".join(parts[:i]))
            if module_id is None:
                continue
            bound = self.files[module_id].imports.get(parts[i])
            if bound is None:
                return None
            return self.absolute(".".join([bound, *parts[i + 1 :]]), hops + 1)
        return None

    # -- references -----------------------------------------------------------------------
    def enclosing_class(self, source: str) -> str | None:
        node = self.nodes.get(source)
        if node is None:
            return None
        if node.kind == "class":
            return node.id
        if node.kind == "method":
            return f"{node.path}::{node.qualname.rpartition('.')[0]}"
        return None

    def member(self, class_id: str, name: str, include_self: bool = True) -> str | None:
        """``name`` looked up on a class and then its repository bases, breadth first."""
        queue = [class_id] if include_self else list(self.bases.get(class_id, ()))
        seen = set(queue)
        for _ in range(_MAX_HOPS):
            following: list[str] = []
            for cls in queue:
                found = self.members.get(cls, {}).get(name)
                if found is not None:
                    return found
                for base in self.bases.get(cls, ()):
                    if base not in seen:
                        seen.add(base)
                        following.append(base)
            if not following:
                return None
            queue = following
        return None

    def resolve(self, ref: Reference, path: str) -> list[tuple[str, float]]:
        """Targets of a call or base-class reference with their confidences."""
        parsed = self.files[path]
        segments = [_strip_call(s) for s in ref.target.split(".")]
        if not all(segments):
            return []
        if not is_python(path):
            return self.resolve_keyed(ref, path, segments)
        head, rest = segments[0], segments[1:]
        if head in ("self", "cls") and len(rest) == 1:
            cls = self.enclosing_class(ref.source)
            found = self.member(cls, rest[0]) if cls else None
            if found is not None:
                return [(found, SAME_SCOPE)]
            return self.by_name_match(rest[0], attribute=True, ref=ref, path=path)
        if head == "super" and len(rest) == 1:
            cls = self.enclosing_class(ref.source)
            found = self.member(cls, rest[0], include_self=False) if cls else None
            return [(found, SAME_SCOPE)] if found is not None else []
        bound = parsed.imports.get(head)
        if bound is not None:
            found = self.absolute(".".join([bound, *rest]))
            return [(found, VIA_IMPORT)] if found is not None else []
        local = self.nodes.get(f"{path}::{'.'.join(segments)}")
        if local is not None:
            return [(local.id, SAME_SCOPE)]
        if head == "super":
            return []
        return self.by_name_match(segments[-1], attribute=bool(rest), ref=ref, path=path)

    def resolve_keyed(self, ref: Reference, path: str, segments: list[str]) -> list[tuple[str, float]]:
        """Targets of a call or base written in a language with module keys (``oya.graph.keys``)."""
        head, rest = segments[0], segments[1:]
        cls = self.enclosing_class(ref.source)
        if head in ("self", "super") and len(rest) == 1:
            found = self.member(cls, rest[0], include_self=head == "self") if cls else None
            if found is not None or head == "super":
                return [(found, SAME_SCOPE)] if found is not None else []
            return self.by_name_match(rest[0], attribute=True, ref=ref, path=path)
        bound = self.files[path].imports.get(head)
        if bound is not None:
            located = self.keys.locate(".".join([bound, *rest]), path)
            found = self.keys.member(located[0], located[1]) if located is not None else None
            return [(found, VIA_IMPORT)] if found is not None else []
        local = self.nodes.get(f"{path}::{'.'.join(segments)}")
        if local is None and not rest and cls is not None:  # an implicit `this`
            local_id = self.member(cls, head)
            local = self.nodes.get(local_id) if local_id is not None else None
        if local is None and head != "?":
            local = self.same_package(self.files[path].module, segments)
        if local is None and head != "?":  # a namespace the file opens (C# `using`, Go's `import .`)
            found = self.opened(path, segments)
            if found is not None:
                return [(found, VIA_IMPORT)]
        if local is not None:
            return [(local.id, SAME_SCOPE)]
        return self.by_name_match(segments[-1], attribute=bool(rest), ref=ref, path=path)

    def opened(self, path: str, segments: list[str]) -> str | None:
        for ref in self.files[path].references:
            if ref.kind == "imports" and (located := self.keys.locate(ref.target, path)) is not None:
                if not located[1] and (found := self.keys.member(located[0], segments)) is not None:
                    return found
        return None

    def named_file(self, written: str, importer: str) -> str | None:
        """A parsed file named by a path, from the repository root or from the importer's folder."""
        for candidate in (written, posixpath.join(posixpath.dirname(importer), written)):
            path = posixpath.normpath(candidate)
            if path in self.files and path != importer:
                return path
        return None

    def same_package(self, key: str, segments: list[str]) -> Node | None:
        """A name from the file's own key (a Go package, a C# namespace) or a sibling key (the
        class ``Shape`` of the Java package ``com/acme``, in ``com/acme/Shape``)."""
        found = self.keys.member(key, segments)
        if found is None and "/" in key:
            found = self.keys.member(f"{key.rpartition('/')[0]}/{segments[0]}", segments)
        return self.nodes.get(found) if found is not None else None

    def family(self, path: str) -> str:
        if path not in self.families:
            self.families[path] = family(path)
        return self.families[path]

    def by_name_match(self, name: str, attribute: bool, ref: Reference, path: str) -> list[tuple[str, float]]:
        if name in (_BUILTIN_METHODS if attribute else _BUILTIN_NAMES):
            return []
        if ref.kind == "inherits":
            kinds: tuple[str, ...] = ("class",)
        elif attribute:
            kinds = ("method",)
        else:
            kinds = ("function", "class")
        own = self.family(path)
        candidates = [
            c
            for c in self.by_name.get(name, ())
            if self.nodes[c].kind in kinds and c != ref.source and self.family(self.nodes[c].path) == own
        ]
        if not candidates:
            return []
        if len(candidates) == 1:
            return [(candidates[0], UNIQUE_NAME)]
        confidence = min(AMBIGUOUS_MAX, max(AMBIGUOUS_MIN, AMBIGUOUS_TOTAL / len(candidates)))
        nearest = sorted(candidates, key=lambda c: (-shared_prefix(path, self.nodes[c].path), c))
        return [(c, confidence) for c in nearest[:MAX_CANDIDATES]]


def _collect_nodes(parsed: Sequence[ParsedFile]) -> dict[str, Node]:
    nodes: dict[str, Node] = {}
    for p in parsed:
        for node in p.symbols:
            nodes.setdefault(node.id, node)
    return nodes


def _contains(nodes: dict[str, Node]) -> Iterable[Edge]:
    for node in nodes.values():
        if node.kind == "module":
            continue
        parent = node.qualname.rpartition(".")[0]
        parent_id = f"{node.path}::{parent}" if parent else node.path
        if parent_id in nodes:
            yield Edge(parent_id, node.id, "contains", CONTAINS)


def _resolve_edges(parsed: Sequence[ParsedFile], nodes: dict[str, Node]) -> list[Edge]:
    resolver = _Resolver(parsed, nodes)
    edges: list[Edge] = list(_contains(nodes))
    # bases first: self.method lookups walk them
    for p in parsed:
        for ref in p.references:
            if ref.kind == "inherits" and ref.source in nodes:
                for target, confidence in resolver.resolve(ref, p.path):
                    edges.append(Edge(ref.source, target, "inherits", confidence))
    bases: dict[str, list[str]] = defaultdict(list)
    for edge in sorted(edges, key=lambda e: (e.source, -e.confidence, e.target)):
        if edge.kind == "inherits" and nodes[edge.target].kind == "class" and edge.confidence >= UNIQUE_NAME:
            bases[edge.source].append(edge.target)
    resolver.bases = dict(bases)
    for p in parsed:
        for ref in p.references:
            if ref.source not in nodes:
                continue
            if ref.kind == "imports" and ref.target.startswith("file:"):
                named = resolver.named_file(ref.target.removeprefix("file:"), p.path)
                if named is not None:
                    edges.append(Edge(ref.source, named, "imports", IMPORT_MODULE))
            elif ref.kind == "imports" and not is_python(p.path):
                keyed = resolver.keys.locate(ref.target, p.path)
                if keyed is not None:
                    key, left, confidence = keyed
                    # a name imported from a key several files share (a Kotlin or Go package): its file
                    named = resolver.keys.member(key, left)
                    target = nodes[named].path if named is not None else resolver.keys.ids[key]
                    confidence = min(confidence, IMPORT_NAME) if left else confidence
                    edges.append(Edge(ref.source, target, "imports", confidence))
            elif ref.kind == "imports":
                located = resolver.module_of(ref.target)
                if located is not None:
                    module_id, exact = located
                    edges.append(
                        Edge(ref.source, module_id, "imports", IMPORT_MODULE if exact else IMPORT_NAME)
                    )
            elif ref.kind == "calls":
                for target, confidence in resolver.resolve(ref, p.path):
                    edges.append(Edge(ref.source, target, "calls", confidence))
    return edges


def _aggregate(edges: Iterable[Edge]) -> list[Edge]:
    best: dict[tuple[str, str, str], float] = {}
    for edge in edges:
        if edge.source == edge.target:
            continue
        key = (edge.source, edge.target, edge.kind)
        best[key] = max(best.get(key, 0.0), round(edge.confidence, 6))
    return [Edge(s, t, k, c) for (s, t, k), c in sorted(best.items())]


def _pagerank(nodes: Sequence[Node], edges: Sequence[Edge]) -> dict[str, float]:
    graph = nx.DiGraph()
    graph.add_nodes_from(n.id for n in nodes)
    for edge in edges:
        weight = edge.confidence * (CONTAINS_RANK_WEIGHT if edge.kind == "contains" else 1.0)
        if graph.has_edge(edge.source, edge.target):
            graph[edge.source][edge.target]["weight"] += weight
        else:
            graph.add_edge(edge.source, edge.target, weight=weight)
    if graph.number_of_nodes() == 0:
        return {}
    options = {"alpha": 0.85, "weight": "weight", "tol": 1e-10, "max_iter": 500}
    try:
        rank: dict[str, float] = nx.pagerank(graph, **options)
    except ImportError:  # networkx's fast path needs scipy; the pure-Python one gives the same ranks
        from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

        rank = _pagerank_python(graph, **options)
    top = max(rank.values())
    return {k: v / top for k, v in rank.items()} if top > 0 else rank


def build_graph(parsed: Sequence[ParsedFile]) -> tuple[list[Node], list[Edge]]:
    """Nodes (sorted by id, centrality filled) and resolved edges (sorted) of a repository."""
    ordered = sorted(parsed, key=lambda p: p.path)
    nodes = _collect_nodes(ordered)
    edges = _aggregate(_resolve_edges(ordered, nodes))
    node_list = [nodes[k] for k in sorted(nodes)]
    rank = _pagerank(node_list, edges)
    ranked = [replace(n, centrality=round(rank.get(n.id, 0.0), 6)) for n in node_list]
    return ranked, edges


def graph_stats(nodes: Sequence[Node], edges: Sequence[Edge]) -> dict[str, int | float]:
    """Flat counts for Dagster metadata: totals, per node kind, per edge kind, low-confidence edges."""
    stats: dict[str, int | float] = {"nodes": len(nodes), "edges": len(edges)}
    for kind in NODE_KINDS:
        stats[f"nodes_{kind}"] = sum(1 for n in nodes if n.kind == kind)
    for kind in EDGE_KINDS:
        stats[f"edges_{kind}"] = sum(1 for e in edges if e.kind == kind)
    stats["edges_low_confidence"] = sum(1 for e in edges if e.confidence < UNIQUE_NAME)
    stats["mean_confidence"] = round(sum(e.confidence for e in edges) / len(edges), 6) if edges else 0.0
    return stats
