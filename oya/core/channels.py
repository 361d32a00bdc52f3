"""The retrieval channels, the corpus they rank, and the one factory that wires them.

Theory of operation: a channel turns a ``QueryPlan`` (and the question's vector, when there is
one) into a ranked list of ``(chunk id, score)``. Three exist — ``lexical`` (BM25), ``semantic``
(cosine over chunk vectors) and ``graph`` (question terms against code names) — with two
backends each: in memory here (the browser bundle, tests) and DuckDB/numpy in ``oya.store``
(the CLI). ``make_channels`` is the one place that puts a set together, in ``CHANNEL_NAMES``
order: the CLI's searcher, the browser bundle and every eval script call it, so what the eval
measures is what ships. A channel that cannot run says so in one way: it raises
``ChannelUnavailable`` (``UnavailableChannel`` stands in for a missing backend), and the
pipeline reports it instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from oya.core.bm25 import BM25Index
from oya.core.file_lexical import FileDocs, MemoryFileTerms
from oya.core.graph import CodeGraph
from oya.core.query import QueryPlan
from oya.core.records import Chunk, ChunkRef
from oya.core.vectors import VectorIndex

CHANNEL_NAMES = ("lexical", "semantic", "graph")


class ChannelUnavailable(Exception):
    """A channel cannot run for this query (no vector, no index); reported, not fatal."""


class DataMissing(Exception):
    """A backend must fetch the named data before it can answer (a sharded bundle's
    ``ShardsMissing``). Not a broken channel: the pipeline lets it through to the caller, who
    fetches ``names`` and asks again."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(f"{len(names)} to fetch first: {', '.join(names[:3])}")
        self.names = tuple(names)


def fetched_together(*loads: Callable[[], object]) -> None:
    """Run every load; when some need data fetched first, one ``DataMissing`` names all of it, so
    the caller fetches everything in one round instead of one round per load."""
    missing: list[str] = []
    kind: type[DataMissing] = DataMissing
    for load in loads:
        try:
            load()
        except DataMissing as exc:
            missing.extend(exc.names)
            kind = type(exc)  # the backend's own kind (``ShardsMissing``), as its caller expects
    if missing:
        raise kind(missing)


class Channel(Protocol):
    name: str

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]: ...


class Corpus(Protocol):
    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]: ...

    def chunk_refs(self, ids: Sequence[str]) -> dict[str, ChunkRef]:
        """What ranking reads of ``ids`` before their text (a sharded bundle holds it unfetched)."""
        ...

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]: ...

    def chunk_paths(self) -> Mapping[str, str]: ...

    def names_in_text(self, ids: Sequence[str], names: Sequence[str]) -> set[str]:
        """Those of ``names`` (lower case) that occur in the lower-cased indexed text of some chunk
        of ``ids``, as far as the corpus knows without reading the text: it may leave out any (the
        caller reads the text for the rest), never add one that does not occur."""
        ...

    def file_origins(self) -> Mapping[str, str]:
        """Path -> origin of the files that are not source a maintainer edits (generated,
        vendored, amalgamated, a copy, declarations: ``oya.scanning.provenance``)."""
        ...


def chunks_by_node(rows: Iterable[tuple[str, int, str, str | None]]) -> dict[str, list[str]]:
    """Each node's chunk ids, in (path, start line, id) order, from ``(path, start_line, id, node)``."""
    by_node: dict[str, list[str]] = {}
    for _path, _start, cid, node in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        if node:
            by_node.setdefault(node, []).append(cid)
    return by_node


class ChunkMaps:
    """What every corpus answers without its chunks' text: their paths, each node's chunks, the
    files' origins (``MemoryCorpus``; ``oya.core.shards.ShardedCorpus`` fetches the text)."""

    def __init__(
        self, paths: Mapping[str, str], by_node: dict[str, list[str]], origins: Mapping[str, str] | None
    ) -> None:
        self._paths = dict(paths)
        self._by_node = by_node
        self._origins = dict(origins or {})

    def chunk_ids_for_nodes(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        return {n: self._by_node[n] for n in node_ids if n in self._by_node}

    def chunk_paths(self) -> Mapping[str, str]:
        return self._paths

    def names_in_text(self, ids: Sequence[str], names: Sequence[str]) -> set[str]:
        return set()  # the text is at hand (or a fetch away): the caller reads it

    def file_origins(self) -> Mapping[str, str]:
        return self._origins


class MemoryCorpus(ChunkMaps):
    """All chunks in memory (the browser bundle, tests, small indexes)."""

    def __init__(self, chunks: Sequence[Chunk], origins: Mapping[str, str] | None = None) -> None:
        self.chunks = {c.id: c for c in chunks}
        by_node = chunks_by_node((c.path, c.start_line, c.id, c.node_id) for c in chunks)
        super().__init__({c.id: c.path for c in chunks}, by_node, origins)

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return {i: self.chunks[i] for i in ids if i in self.chunks}

    def chunk_refs(self, ids: Sequence[str]) -> dict[str, ChunkRef]:
        return {i: self.chunks[i].ref() for i in ids if i in self.chunks}


class UnavailableChannel:
    """A channel that cannot run, and why (the pipeline reports the reason)."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        raise ChannelUnavailable(self.reason)


class BM25Channel:
    """BM25 over the chunks in memory; also sums its term counts per file (``FileTerms``)."""

    name = "lexical"

    def __init__(self, index: BM25Index) -> None:
        self.index = index
        self._files = MemoryFileTerms(index)

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if not plan.lexical_tokens:
            return []
        return self.index.search(plan.lexical_tokens, k)

    def file_docs(self, paths: Mapping[str, str]) -> FileDocs:
        return self._files.file_docs(paths)

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        return self._files.file_term_counts(terms, paths)


class VectorChannel:
    """Cosine over an in-memory ``VectorIndex``; unavailable without a question vector."""

    name = "semantic"

    def __init__(self, index: VectorIndex) -> None:
        self.index = index

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if len(self.index) == 0:
            raise ChannelUnavailable("no vectors in the index")
        if vector is None:
            raise ChannelUnavailable("no embedding for the question")
        return self.index.search(vector, k)


class RankedListChannel:
    """The semantic channel's result computed elsewhere (the browser's JS kernel), passed in ranked.

    ``ranked`` must be the core's ranking (``Bundle.rank_vectors``); tests hold them together.
    """

    name = "semantic"

    def __init__(self, ranked: Sequence[tuple[str, float]]) -> None:
        self.ranked = [(str(i), float(s)) for i, s in ranked]

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        return self.ranked[:k]


class GraphChannel:
    """Question terms matched against graph node names, qualified names and paths."""

    name = "graph"

    def __init__(self, graph: CodeGraph, corpus: Corpus, *, prefix_match: bool) -> None:
        self.graph = graph
        self.corpus = corpus
        self.prefix_match = prefix_match

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if len(self.graph) == 0:
            raise ChannelUnavailable("the index has no code graph")
        matches = self.graph.match_names(
            plan.lexical_tokens,
            identifiers=plan.identifiers,
            paths=plan.paths,
            k=k,
            prefix_match=self.prefix_match,
        )
        by_node = self.corpus.chunk_ids_for_nodes([n for n, _ in matches])
        out: list[tuple[str, float]] = []
        for node_id, score in matches:
            for cid in by_node.get(node_id, [])[:1]:
                out.append((cid, score))
        return out[:k]


# the graph channel meets a question word and a code name by a shared prefix too (measured:
# "graph names: exact only" in bench/results/eval_quality.md loses)
GRAPH_PREFIX_MATCH = True


def make_channels(
    *,
    lexical: Channel,
    semantic: Channel | None,
    graph: CodeGraph,
    corpus: Corpus,
    semantic_reason: str = "",
) -> list[Channel]:
    """The three channels in ``CHANNEL_NAMES`` order, from the backends a runtime provides.

    ``semantic`` is None when the runtime has no semantic ranking for this question; the
    channel is then reported unavailable for ``semantic_reason``. The graph channel runs over
    ``graph`` and ``corpus`` in every runtime (both are in memory everywhere).
    """
    if semantic is None:
        semantic = UnavailableChannel("semantic", semantic_reason or "no embedding for the question")
    return [lexical, semantic, GraphChannel(graph, corpus, prefix_match=GRAPH_PREFIX_MATCH)]
