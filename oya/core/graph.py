"""The code graph in plain Python: adjacency, bounded expansion, and the graph channel.

Theory of operation:

* ``CodeGraph`` holds nodes by id and edges both ways (a caller and a callee are both
  "connected code"), each edge with its kind and resolution confidence.
* ``expand`` walks out from seed nodes level by level for at most ``hops`` levels, following
  only edges with confidence >= ``min_confidence``. Within a level the candidates are taken
  by priority = prior(node) * edge-kind weight * confidence (ties by id) until ``max_nodes``
  nodes are held. The shipped prior is ``uniform_prior``: a PageRank prior preferred hubs to
  the seed's own callees and callers and lost (docs/DECISIONS.md; the variant is in
  ``bench/variants/centrality.py``). So the result never exceeds the hop or node caps, and
  the same input always gives the same subgraph.
* The graph channel ranks nodes whose name, qualified name or path share tokens with the
  question: an exact name match counts most, then the share of the node's name tokens
  covered, then a small centrality prior; each node's chunks inherit its rank.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from oya.core.bm25 import best_first
from oya.core.name_index import PREFIX, NameIndex
from oya.core.records import Edge, Node
from oya.core.tokenize import split_identifier

# How much each kind of edge is worth following when the context has room for few nodes.
EDGE_WEIGHTS: dict[str, float] = {"calls": 1.0, "inherits": 0.9, "imports": 0.6, "contains": 0.7}


def uniform_prior(node: Node) -> float:
    """Every node alike: within a hop, only the edge's kind and confidence order the candidates."""
    return 1.0


@dataclass(frozen=True, slots=True)
class Subgraph:
    nodes: tuple[Node, ...]  # seeds first, then by hop distance and priority
    edges: tuple[Edge, ...]  # edges among the nodes, sorted
    distance: Mapping[str, int]  # hop distance from the nearest seed
    seeds: tuple[str, ...]
    truncated: int = 0  # candidates left out by the node cap


PREFIX_CREDIT = 0.75  # a prefix meeting counts this much of an exact one


def prefix_match_words(a: str, b: str) -> bool:
    """``expand`` ~ ``expansion``, ``embed`` ~ ``embedding``: a shared prefix of at least
    ``PREFIX`` letters that covers all but at most two letters of the shorter word."""
    if a == b or len(a) < PREFIX or len(b) < PREFIX:
        return False
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= PREFIX and n >= min(len(a), len(b)) - 2


class CodeGraph:
    __slots__ = ("nodes", "edges", "_adj", "_out", "_names")

    def __init__(self, nodes: Iterable[Node], edges: Iterable[Edge]) -> None:
        self.nodes: dict[str, Node] = {n.id: n for n in nodes}
        kept = [e for e in edges if e.source in self.nodes and e.target in self.nodes]
        self.edges: list[Edge] = kept
        self._adj: dict[str, list[tuple[str, Edge]]] = {}
        for e in kept:
            self._adj.setdefault(e.source, []).append((e.target, e))
            self._adj.setdefault(e.target, []).append((e.source, e))
        self._out: dict[str, list[tuple[str, Edge]]] | None = None  # built by the first successors()
        self._names: NameIndex | None = None  # built by the first question (match_names)

    def __len__(self) -> int:
        return len(self.nodes)

    def load_details(self, node_ids: Sequence[str]) -> None:
        """Make sure ``node_ids``' lines, signatures and docstrings are held before they are read
        (a graph held whole has them; ``oya.core.shard_graph`` fetches them)."""

    def neighbors(self, node_id: str, min_confidence: float = 0.0) -> list[tuple[str, Edge]]:
        return [(n, e) for n, e in self._adj.get(node_id, ()) if e.confidence >= min_confidence]

    def successors(self, node_id: str, min_confidence: float = 0.0) -> list[tuple[str, Edge]]:
        """The edges leaving ``node_id``, with their targets, in edge order (a self-loop once): a
        forward walk's step, which need not read a hub's thousands of incoming edges."""
        if self._out is None:
            out: dict[str, list[tuple[str, Edge]]] = {}
            for e in self.edges:
                out.setdefault(e.source, []).append((e.target, e))
            self._out = out
        return [(n, e) for n, e in self._out.get(node_id, ()) if e.confidence >= min_confidence]

    def callers(self, node_id: str) -> list[Edge]:
        return [e for _, e in self._adj.get(node_id, ()) if e.target == node_id and e.kind == "calls"]

    def callees(self, node_id: str) -> list[Edge]:
        return [e for _, e in self._adj.get(node_id, ()) if e.source == node_id and e.kind == "calls"]

    def expand(
        self,
        seeds: Sequence[str],
        *,
        hops: int,
        min_confidence: float,
        max_nodes: int,
        prior: Callable[[Node], float],
        edge_weights: Mapping[str, float] = EDGE_WEIGHTS,
    ) -> Subgraph:
        if hops < 0 or max_nodes < 0:
            raise ValueError("hops and max_nodes cannot be negative")
        weights = edge_weights
        distance: dict[str, int] = {}
        order: list[str] = []
        for s in seeds:
            if s in self.nodes and s not in distance and len(order) < max_nodes:
                distance[s] = 0
                order.append(s)
        frontier = list(order)
        truncated = 0
        for hop in range(1, hops + 1):
            best: dict[str, float] = {}
            for node_id in frontier:
                for other, edge in self.neighbors(node_id, min_confidence):
                    if other in distance:
                        continue
                    pr = (prior(self.nodes[other]) + 1e-9) * weights.get(edge.kind, 0.5) * edge.confidence
                    if pr > best.get(other, -1.0):
                        best[other] = pr
            room = max(max_nodes - len(order), 0)
            taken = [n for n, _ in best_first(best, room, str)]  # best first, ties by id
            truncated += len(best) - len(taken)
            for n in taken:
                distance[n] = hop
                order.append(n)
            frontier = taken
            if not frontier:
                break
        keep = set(order)
        # edges among the kept nodes, from their adjacency (not a scan of every edge); an edge
        # is listed under both ends, so it is taken once, from its source
        among: dict[int, Edge] = {}
        for n in order:
            for other, e in self._adj.get(n, ()):
                if e.source == n and other == e.target and other in keep and e.confidence >= min_confidence:
                    among[id(e)] = e
        edges = sorted(among.values(), key=lambda e: (e.source, e.target, e.kind))
        return Subgraph(
            nodes=tuple(self.nodes[n] for n in order),
            edges=tuple(edges),
            distance=distance,
            seeds=tuple(o for o in order if distance[o] == 0),
            truncated=truncated,
        )

    # -- graph channel ------------------------------------------------------------------
    def name_index(self) -> NameIndex:
        """The graph channel's index of names, built on first use (the first question)."""
        if self._names is None:
            self._names = NameIndex(self.nodes.values())
        return self._names

    def _name_candidates(
        self,
        q: set[str],
        exact: set[str],
        words: Mapping[str, list[str]],
        wanted: Sequence[str],
        path_wanted: dict[str, bool],
    ) -> set[str]:
        """Nodes that can score: a name token in the question (or its prefix), or named exactly.

        A node with no name token in the question scores at most 0.5 (below the floor) unless
        it lies in a file the question names (+1.5), so only then do the nodes of that file,
        whatever their names, become candidates. Same result as scoring every node, far fewer
        nodes (a 10 kB traceback names dozens of paths and hundreds of words).
        """
        index = self.name_index()
        nodes = self.nodes
        candidates: set[str] = set()
        for t in q:
            candidates.update(index.by_token(t))
        for t in exact - q:  # named exactly (+3), yet sharing only context tokens with the question
            candidates.update(n for n in index.by_token(t) if index.context_tokens(nodes[n]) & q)
        for p in words:
            candidates.update(index.by_prefix(p))
        if wanted:
            for path, ids in index.paths().items():
                if _path_wanted(path, wanted, path_wanted):
                    candidates.update(n for n in ids if index.context_tokens(nodes[n]) & q)
        return candidates

    def _bounds(
        self,
        candidates: set[str],
        q: set[str],
        words: Mapping[str, list[str]],
        exact: set[str],
        wanted: Sequence[str],
        path_wanted: dict[str, bool],
    ) -> list[tuple[float, str, float, float, float]]:
        """Each candidate that can pass the floor as (bound, id, name cover, named bonus, path bonus).

        What a node's name gives is worked out once per distinct name (sympy: 14k ``test_*``
        candidates for "test"); the bound is the score's own sum with the context cover at its
        maximum 1, so it is never below the score, and ``match_names`` computes exact scores only
        while a bound can still reach the k best."""
        index = self.name_index()
        names: dict[str, tuple[float, float] | None] = {}
        near: dict[str, bool] = {}  # name token -> meets a question word by prefix
        bounds: list[tuple[float, str, float, float, float]] = []
        for node_id in candidates:
            node = self.nodes[node_id]
            if node.name not in names:
                names[node.name] = _name_part(index.name_tokens(node), node.name, q, words, exact, near)
            part = names[node.name]
            if part is None:
                continue
            cover, named = part
            in_path = 1.5 if wanted and _path_wanted(node.path, wanted, path_wanted) else 0.0
            bound = _base(cover, 1.0, named, in_path)
            if bound >= 1.0:  # below: a single shared generic token is noise
                bounds.append((bound + 0.5 * node.centrality, node_id, cover, named, in_path))
        return bounds

    def match_names(
        self,
        query_tokens: Sequence[str],
        *,
        identifiers: Sequence[str] = (),
        paths: Sequence[str] = (),
        k: int,
        prefix_match: bool,
    ) -> list[tuple[str, float]]:
        """Nodes whose names or paths match the query, best first, as ``(node_id, score)``.

        With ``prefix_match`` a name token also counts (for ``PREFIX_CREDIT``) when it shares a
        long prefix with a question word: questions name the noun ("expansion", "embedding",
        "connection"), code the verb (``expand``, ``embed``, ``connect``).
        """
        if k <= 0:
            return []
        index = self.name_index()
        q = set(query_tokens)
        exact = {i.rsplit(".", 1)[-1].lower() for i in identifiers}
        exact |= {t for t in q if "_" in t}
        wanted_paths = [p.replace("\\", "/").lstrip("./") for p in paths]
        words: dict[str, list[str]] = {}
        if prefix_match:
            for t in q:
                if len(t) >= PREFIX and t.isalpha():
                    words.setdefault(t[:PREFIX], []).append(t)
        path_wanted: dict[str, bool] = {}  # per file, not per node: a traceback names many paths
        candidates = self._name_candidates(q, exact, words, wanted_paths, path_wanted)
        bounds = self._bounds(candidates, q, words, exact, wanted_paths, path_wanted)
        bounds.sort(key=lambda b: -b[0])
        scores: list[tuple[str, float]] = []
        kth: list[float] = []  # the k best scores so far (a min-heap)
        for bound, node_id, cover, named, in_path in bounds:
            if len(kth) >= k and bound < kth[0]:
                break
            node = self.nodes[node_id]
            ctx_toks = index.context_tokens(node)
            score = _base(cover, len(ctx_toks & q) / max(len(ctx_toks), 1), named, in_path)
            if score < 1.0:
                continue
            score += 0.5 * node.centrality
            scores.append((node_id, score))
            heapq.heappush(kth, score)
            if len(kth) > k:
                heapq.heappop(kth)
        scores.sort(key=lambda item: (-item[1], item[0]))
        return scores[:k]


def _name_part(
    name_toks: frozenset[str],
    name: str,
    q: set[str],
    words: Mapping[str, list[str]],
    exact: set[str],
    near: dict[str, bool],
) -> tuple[float, float] | None:
    """A name's cover of the question (prefix meetings at ``PREFIX_CREDIT``) and its bonus for
    being named exactly; None for a name without tokens."""
    if not name_toks:
        return None
    hits: float = len(name_toks & q)
    if words:
        meets = 0
        for n in name_toks - q:
            hit = near.get(n)
            if hit is None:
                hit = near[n] = any(prefix_match_words(n, w) for w in words.get(n[:PREFIX], ()))
            meets += hit
        hits += PREFIX_CREDIT * meets
    low = name.lower()
    named = 3.0 if low in exact or low in q and len(split_identifier(name)) > 1 else 0.0
    return hits / len(name_toks), named


def _base(name_cover: float, ctx_cover: float, named: float, in_path: float) -> float:
    """A node's score before centrality, summed in one order (its bound is the same sum)."""
    score = 2.0 * name_cover + 0.5 * ctx_cover
    score += named
    score += in_path
    return score


def _path_wanted(path: str, wanted: Sequence[str], seen: dict[str, bool]) -> bool:
    """Whether ``path`` is a path the question names (``same_file``), memoised per path."""
    hit = seen.get(path)
    if hit is None:
        hit = seen[path] = any(same_file(path, p) for p in wanted)
    return hit


def same_file(path: str, named: str) -> bool:
    """Whether a repository ``path`` is the file a question ``named``, compared by whole path parts
    from the end: one ends the other (``core.py``, ``/home/u/proj/src/click/core.py``), or they
    share the file and its folder. A traceback names the installed copy
    (``.../site-packages/click/core.py``) of a file kept under ``src/`` (``src/click/core.py``);
    ``score.py`` is not ``core.py``."""
    a, b = path.split("/"), named.split("/")
    n = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        n += 1
    return n > 0 and (n == len(a) or n == len(b) or n >= 2)
