"""The bundle in shards: a question fetches the parts of the index it reads, not the whole index.

Theory of operation:

* **What a question reads.** The retrieval stages (``oya.core.stages``) reach the bundle through
  four objects, and each needs a different share of it:

  - the lexical channel and whole-file BM25 (``LazyBM25Index``, ``MemoryFileTerms``) read the
    postings of the question's own terms (at most ``MAX_QUERY_TERMS``), plus every chunk's length,
    id and path (``N``, ``avgdl``, the per-file lengths, ties broken by chunk id);
  - the corpus (``Corpus``) hands out whole chunks — text, lines, kind, node — only for the hits
    (``cap``: ``k``), the expansion's connected code, and the fused candidate pool (``k * 6``, at
    least 60) when the question names code (the evidence looks for the names in its text); the
    pool is ranked from ``ChunkRef``s (path, start line, node, a key equal for equal texts) that
    the manifest holds; every stage also reads the chunk -> path map and each node's chunks;
  - the graph channel matches question words against every node's name, qualified name and path,
    and expansion and the diagram walk the edges around the hits: the graph as a whole;
  - the semantic channel scans every vector (or takes a ranking computed in JavaScript).

* **How it is split.** One *manifest* holds what every question needs, column-oriented like
  ``index.json`` (``oya.core.bundle``): ``meta``, ``paths`` (pages are ``page_url(path)``, the
  writer's formula), ``origins``; per chunk its ``id``, ``path``, ``node`` and BM25 ``doc_lens``
  (chunks come in ``(path, start_line, id)`` order), its start line (from the file's previous
  chunk's) and the table of chunks whose text repeats an earlier one's (``same_text``); and the
  names of every shard. Sorted or clustered integer columns (chunk nodes, shard
  starts, vector rows, edge sources) travel as differences (``deltas``). Then four kinds of shard,
  each a gzipped JSON table:

  - ``terms-*``: the postings (as in ``index.json``: per term a flat, delta-encoded
    ``[doc, tf, ...]``) of the terms whose bucket is ``zlib.crc32(term.encode("utf-8")) % B``
    (``term_bucket``; CRC-32 is stable across runtimes and in CPython's and Pyodide's stdlib).
    ``B`` is chosen by the writer so a bucket is about ``TERM_SHARD_BYTES`` gzipped; a question
    of ``t`` distinct terms fetches at most ``t`` buckets.
  - ``chunks-*``: the ``CHUNK_COLUMNS`` table of a run of consecutive chunks in bundle order
    ``(path, start_line, id)``, so one file's chunks sit together; a file starts a new shard unless
    it fits in the current one (about ``CHUNK_SHARD_BYTES`` of JSON). The manifest's
    ``chunks.shards.first`` says which chunk position each shard starts at.
  - ``graph-*``: what every question's graph channel, expansion and diagram walk read: each node's
    kind, name, scope, path and centrality, and the edges (``oya.core.shard_graph``); one shard.
  - node details: the lines, signature and docstring of the nodes an answer shows travel in the
    chunk shard of each node's first chunk (its ``details`` table), which the question reads for
    that node's text anyway (the hits', the connected code's): on sympy a warm question's requests
    p95 34 -> 24, the first answer 44 -> 29 requests and 65 kB less (format 4;
    ``bench/warm_shard_bench.py``). The nodes without a chunk: ``nodes-*`` runs of them (about
    ``NODE_SHARD_BYTES`` of JSON).

  Vectors stay whole (``vectors-*.bin.gz``, the ``vectors.bin`` layout), fetched on the first
  pure-Python semantic search only.
* **Names are content hashes.** A shard is named ``<kind>-<16 hex of sha256 of its bytes before
  gzip>.json.gz`` (vectors ``.bin.gz``), the manifest too, so a browser may cache every file
  forever; a new build writes new names. The reader asks only for names the manifest lists,
  refuses any other form, and checks that the bytes it got, inflated, hash to the name
  (``ShardStore``): a host that serves ``.gz`` files with ``Content-Encoding: gzip`` hands the
  browser inflated bytes, and they check alike.
* **The fetcher.** The core is handed ``fetch(name) -> bytes``, synchronous: in CPython a file
  read (``folder_fetch``), in the browser worker a read of the shards it has fetched so far
  (``site_template/static/ask/shards.js``), which raises ``ShardsMissing`` for the others. Each
  shard is fetched at most once per opened bundle, and a stage asks for all the shards it needs
  in one round (``ShardStore.tables``): the question's term buckets together, the hits' chunk
  shards together. A fetcher may instead raise ``ShardsMissing`` for what
  it does not hold yet; the round then raises one ``ShardsMissing`` naming every shard the stage
  lacks, nothing is marked loaded, and the caller fetches them all in parallel and asks again
  (retrieval is deterministic, so the retry answers as an uninterrupted run). A question then
  costs two round trips (terms; then the answer's text: the hits' chunks, the connected code's and
  the shown nodes' details, ``fetched_together``), rarely a third (the diagram's other nodes), not
  one per shard.
* **Measured**: ``bench/shard_bench.py`` (``bench/results/shard_bench.md``): what opening costs
  (manifest + graph) and what a question adds, on real indexes; every answer identical to the
  whole bundle's (tests/site/test_shards.py).
* **Same retrieval.** ``open_shards`` returns an ordinary ``Bundle`` whose BM25 index
  (``ShardedBM25Index``: ``LazyBM25Index`` that fills its raw postings a bucket at a time) and
  corpus (``ShardedCorpus``) fetch on demand; the pipeline and its stages are the whole bundle's.
  Chunk ids are not recomputed for the manifest's sake: they are shipped (their 8 bytes a chunk,
  one base64 string: ``pack_ids``) because BM25 breaks ties by id over every scored chunk; the
  chunks a shard decodes are checked against them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from oya.core.bundle import Bundle
from oya.core.bundle_format import (
    BundleError,
    LazyBM25Index,
    column,
    decode_chunks,
    decode_origins,
    get_table,
)
from oya.core.channels import ChunkMaps
from oya.core.records import Chunk, ChunkRef
from oya.core.results import page_url
from oya.core.shard_graph import decode_sharded_graph
from oya.core.shard_store import (
    Fetch,
    ShardStore,
    check_name,
    file_undelta,
    listed_name,
    manifest_vectors,
    repeated_texts,
    term_bucket,
    undelta,
    unpack_ids,
    wide_positions,
)

SHARDS_FORMAT = "oya-shards"
SHARDS_VERSION = 5  # 4: node details in the chunk shard of the node's first chunk; 5: ids packed
TERM_HASH = "crc32-utf8"  # the manifest names the hash, so a reader with another one refuses it
# gzipped bytes a term bucket aims at: on Oya's own index a question's postings cost 138 kB with
# 40 kB buckets, 45 kB with 10 kB ones, 24 kB with 5 kB ones (but twice the files)
TERM_SHARD_BYTES = 10_000
# JSON bytes of chunk columns a chunk shard aims at (~3.5 kB gzipped): on Oya's own index a
# question's candidate chunks cost 411 kB with 64 kB runs, 167 kB with 16 kB, 111 kB with 8 kB (2x the files)
CHUNK_SHARD_BYTES = 16_000
# JSON bytes of node details (lines, signature, docstring) a nodes shard aims at
NODE_SHARD_BYTES = 16_000


class ShardedBM25Index(LazyBM25Index):
    """``LazyBM25Index`` whose raw postings arrive a term bucket at a time, when a term is asked."""

    __slots__ = ("_store", "_buckets", "_loaded")

    def __init__(
        self, doc_ids: Sequence[str], doc_lens: Sequence[int], store: ShardStore, buckets: Sequence[str]
    ) -> None:
        super().__init__(doc_ids, doc_lens, {})
        self._store = store
        self._buckets = list(buckets)
        self._loaded: set[int] = set()

    def _materialize(self, terms: Iterable[str]) -> None:
        wanted = [t for t in terms if t not in self.postings]
        if self._buckets:
            need = sorted({term_bucket(t, len(self._buckets)) for t in wanted} - self._loaded)
            # all of the question's buckets in one round; marked loaded only once they arrived, so
            # a fetch that fails (or asks for the shards first) leaves the index as it was
            for t in self._store.tables([self._buckets[b] for b in need]):
                names: list[str] = column(t, "terms", None)
                self._raw.update(zip(names, column(t, "postings", len(names)), strict=True))
            self._loaded.update(need)
        super()._materialize(wanted)

    def held_postings(self, term: str) -> list[tuple[int, int]] | None:
        """``term``'s postings if its bucket was fetched (empty when no chunk holds it), else None:
        never a fetch."""
        if term not in self.postings:
            if self._buckets and term_bucket(term, len(self._buckets)) not in self._loaded:
                return None
            LazyBM25Index._materialize(self, (term,))
        return self.postings.get(term, [])

    def query_terms(self, query_tokens: Iterable[str]) -> list[str]:
        # whole-file BM25 asks for query terms directly (``MemoryFileTerms``); the lexical channel
        # has fetched them by then, but a terms question must never see a half-loaded index
        tokens = list(query_tokens)
        self._materialize(tokens)
        return super().query_terms(tokens)


class ShardedCorpus(ChunkMaps):
    """The ``Corpus`` of a sharded bundle: ids, paths and nodes in memory, chunks fetched by shard."""

    def __init__(
        self,
        store: ShardStore,
        *,
        ids: Sequence[str],
        chunk_paths: Sequence[str],
        chunk_nodes: Sequence[str | None],
        shard_first: Sequence[int],
        shard_names: Sequence[str],
        paths: list[str],
        node_ids: list[str],
        origins: Mapping[str, str],
        starts: Sequence[int],
        same: Mapping[int, int],
        bm25: ShardedBM25Index | None = None,
        wide: set[int] | None = None,
    ) -> None:
        # chunks come in (path, start line, id) order: a chunk's position orders it as its start line
        # would, so each node's chunks are listed in position order (chunks_by_node's order, unsorted)
        if chunk_paths != sorted(chunk_paths):
            raise BundleError("the manifest's chunks are not in path order")
        by_node: dict[str, list[str]] = {}
        for cid, node in zip(ids, chunk_nodes, strict=True):
            if node:
                by_node.setdefault(node, []).append(cid)
        super().__init__(dict(zip(ids, chunk_paths, strict=True)), by_node, origins)
        self._store = store
        self._ids = list(ids)
        self._pos = {cid: i for i, cid in enumerate(self._ids)}
        self._first = list(shard_first)
        self._names = list(shard_names)
        self._all_paths = paths
        self._node_ids = node_ids
        self._chunks: dict[int, Chunk] = {}
        self._loaded: set[int] = set()
        self._chunk_paths = chunk_paths
        self._nodes = chunk_nodes
        self._starts = starts
        self._same = same  # position -> the first position with the same text
        # the postings fetched so far tell which chunks hold a term; chunks with text beyond ASCII
        # (``wide``) are left out, their tokens are of a folded text (oya.core.tokenize)
        self._bm25 = bm25
        self._wide = wide

    def _load(self, shards: Sequence[int]) -> None:
        """Fetch ``shards`` in one round; a shard counts as loaded once all its chunks are checked."""
        for shard, table in zip(shards, self._store.tables([self._names[s] for s in shards]), strict=True):
            first = self._first[shard]
            chunks = decode_chunks(table, self._all_paths, self._node_ids)
            for offset, chunk in enumerate(chunks):
                pos = first + offset
                if (
                    pos >= len(self._ids)
                    or self._ids[pos] != chunk.id
                    or self._starts[pos] != chunk.start_line
                ):
                    raise BundleError(f"chunk shard {self._names[shard]} does not hold the manifest's chunks")
            for offset, chunk in enumerate(chunks):
                self._chunks[first + offset] = chunk
            self._loaded.add(shard)

    def chunk_refs(self, ids: Sequence[str]) -> dict[str, ChunkRef]:
        out: dict[str, ChunkRef] = {}
        for cid in ids:
            p = self._pos.get(cid)
            if p is not None:
                key = self._ids[self._same.get(p, p)]
                out[cid] = ChunkRef(cid, self._chunk_paths[p], self._starts[p], self._nodes[p], key)
        return out

    def names_in_text(self, ids: Sequence[str], names: Sequence[str]) -> set[str]:
        """The names that are a term whose fetched postings list one of ``ids``: a token of an
        ASCII text is a substring of the text lower-cased (``oya.core.tokenize``), and the BM25
        text is the indexed text."""
        if self._bm25 is None or self._wide is None:
            return set()
        wide = self._wide
        positions = {p for i in ids if (p := self._pos.get(i)) is not None and p not in wide}
        out: set[str] = set()
        for name in names:
            postings = self._bm25.held_postings(name)
            if postings and any(doc in positions for doc, _ in postings):
                out.add(name)
        return out

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        positions = [self._pos[i] for i in ids if i in self._pos]
        need = sorted({bisect_right(self._first, p) - 1 for p in positions} - self._loaded)
        if need:
            self._load(need)
        return {self._ids[p]: self._chunks[p] for p in positions}


def _manifest(store: ShardStore, name: str) -> dict[str, Any]:
    """The manifest ``name``, of this core's format and version."""
    if not name.startswith("manifest-"):
        raise BundleError(f"not a shard manifest name: {name[:80]!r}")
    doc = store.table(name)
    if doc.get("format") != SHARDS_FORMAT:
        raise BundleError("not an oya shard manifest (format is not 'oya-shards')")
    if doc.get("version") != SHARDS_VERSION:
        raise BundleError(f"shard manifest version {doc.get('version')!r}; this core reads {SHARDS_VERSION}")
    return doc


def open_shards(fetch: Fetch, manifest: str) -> Bundle:
    """A ``Bundle`` over the shards ``fetch`` returns, from the manifest named ``manifest``.

    Opening fetches the manifest and the graph; postings, chunks and vectors come when asked.
    """
    store = ShardStore(fetch)
    doc = _manifest(store, manifest)
    paths: list[str] = column(doc, "paths", None)
    pages = {p: page_url(p) for p in paths}  # the writer's own formula (oya.site.bundle)
    graph_doc = store.table(listed_name(doc, "graph", "graph"))
    node_ids, graph = decode_sharded_graph(store, graph_doc, get_table(doc, "nodes"), paths)

    ct = get_table(doc, "chunks")
    path_pos: list[int] = column(ct, "path", None)
    n = len(path_pos)
    ids = unpack_ids(ct.get("id"), n)
    node_pos = undelta(column(ct, "node", n))
    st = get_table(ct, "shards")
    first = undelta(column(st, "first", None))
    if first[:1] != [0] and n:
        raise BundleError("the first chunk shard does not start at chunk 0")
    bt = get_table(doc, "bm25")
    if bt.get("hash") != TERM_HASH:
        raise BundleError(f"term hash {bt.get('hash')!r}; this core hashes terms with {TERM_HASH}")
    bm25 = ShardedBM25Index(
        ids, column(bt, "doc_lens", n), store, [check_name(b, "terms") for b in column(bt, "buckets", None)]
    )
    chunk_names = [check_name(name, "chunks") for name in column(st, "name", len(first))]
    graph.house(node_pos, first, chunk_names)
    corpus = ShardedCorpus(
        store,
        ids=ids,
        chunk_paths=[paths[p] for p in path_pos],
        chunk_nodes=[node_ids[p] if p >= 0 else None for p in node_pos],
        shard_first=first,
        shard_names=chunk_names,
        paths=paths,
        node_ids=node_ids,
        origins=decode_origins(doc, paths),
        starts=file_undelta(path_pos, column(ct, "start", n)),
        same=repeated_texts(get_table(ct, "same"), n),
        bm25=bm25,
        wide=wide_positions(ct, n),
    )
    vector_ids, dim, offsets, load = manifest_vectors(store, doc.get("vectors"), ids)
    return Bundle(
        meta=doc.get("meta") or {},
        chunks=(),
        bm25=bm25,
        graph=graph,
        pages=pages,
        vector_ids=vector_ids,
        vector_dim=dim,
        vector_offsets=offsets,
        corpus=corpus,
        load_vectors=load,
    )
