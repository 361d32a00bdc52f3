"""The browser bundle read back into the core: corpus, BM25, vectors, graph — and ``Bundle.ask``.

Theory of operation:

* The site exporter (``oya.site.bundle``) writes ``index.json`` and ``vectors.bin``, each
  gzip-compressed on disk (``index.json.gz``, ``vectors.bin.gz``: a static host stores and serves
  them as opaque bytes, a third of the size; the browser inflates them with
  ``DecompressionStream``). ``decode_bundle`` takes either form and turns them into the core's own objects (``MemoryCorpus``, ``BM25Index``,
  ``CodeGraph``, ``VectorIndex``), so the browser answers with the code the CLI answers with.
  Only ``load_bundle`` touches files; everything else takes bytes and strings (it runs in Pyodide).
* ``index.json`` (``format`` "oya-bundle", ``version`` 2) is column-oriented:
  ``paths`` (sorted file paths) and ``pages`` (their wiki URLs); ``chunks`` as arrays
  ``path`` (position in ``paths``), ``kind``, ``title``, ``start_line``, ``end_line``, ``text``,
  ``n_tokens``, ``node`` (position in ``nodes.id`` or -1): a chunk's id and content hash are
  computed here from path, lines and text by the indexer's own formulas (``oya.core.records``),
  cheaper to hash at load (~0.1 s in Pyodide) than to ship (networkx: 0.2 MB of gzipped hex); ``bm25`` as ``doc_lens`` (one per chunk, chunk order), ``terms`` and ``postings`` (per term a
  flat ``[doc, tf, doc, tf, ...]`` list, doc numbers delta-encoded); ``nodes`` and ``edges`` as
  arrays (edges reference nodes by position; a node's ``docstring`` is only its first sentence, all
  an answer quotes); ``vectors`` (or null) with ``dim``, ``count``, ``rows``
  (chunk position of each vector row), ``scales_offset`` and ``data_offset`` into ``vectors.bin``.
* ``vectors.bin``: ``count`` little-endian float32 scales, then ``count * dim`` int8 values. Row i
  is the unit vector ``int8_row * scale``; the core's ranking is ``VectorIndex`` over those rows
  dequantised to float32. The float32 matrix is made lazily, on the first pure-Python semantic
  search: in the browser, JavaScript scores the int8 rows itself (``rankVectors`` in ask.js, the
  same float32 rows and the same (-score, id) order) and hands the ranked list to
  ``RankedListChannel``, because a pure-Python scan of 10k rows costs ~200 ms in Pyodide.
* BM25 postings are decoded per query term on first use (``LazyBM25Index``): building a million
  tuples up front would add about a second to the browser's cold start for no query's benefit.
* ``Bundle.ask`` uses ``RetrievalOptions()`` defaults, as the CLI does, unless options are given.
  With no question vector (the model failed to load) the semantic channel is reported unavailable
  with the reason and the lexical and graph channels still answer.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from oya.core.answer import extractive_answer
from oya.core.bm25 import BM25Index
from oya.core.engine import (
    BM25Channel,
    Channel,
    ChannelUnavailable,
    GraphChannel,
    MemoryCorpus,
    RetrievalOptions,
    VectorChannel,
    retrieve,
)
from oya.core.graph import CodeGraph
from oya.core.query import QueryPlan
from oya.core.records import Chunk, Edge, Node, chunk_id, content_hash
from oya.core.results import RetrievalResult
from oya.core.vectors import VectorIndex

BUNDLE_FORMAT = "oya-bundle"
BUNDLE_VERSION = 2
INDEX_FILE = "index.json.gz"
VECTORS_FILE = "vectors.bin.gz"
_GZIP_MAGIC = b"\x1f\x8b"


class BundleError(ValueError):
    """The bundle is not one this core can read (wrong format, version, or inconsistent arrays)."""


# -- postings ----------------------------------------------------------------------------------
def decode_postings(flat: Sequence[int]) -> list[tuple[int, int]]:
    """``[(doc, tf), ...]`` from a flat ``[doc, tf, ...]`` list whose doc numbers are delta-encoded."""
    out: list[tuple[int, int]] = []
    doc = 0
    for i in range(0, len(flat) - 1, 2):
        doc += flat[i]
        out.append((doc, flat[i + 1]))
    return out


class LazyBM25Index(BM25Index):
    """A ``BM25Index`` whose postings are decoded per term on first use; scores are identical."""

    __slots__ = ("_raw",)

    def __init__(self, doc_ids: Sequence[str], doc_lens: Sequence[int], raw: Mapping[str, list[int]]) -> None:
        super().__init__(doc_ids, doc_lens, {})
        self._raw = dict(raw)

    def _materialize(self, terms: Iterable[str]) -> None:
        for term in terms:
            flat = self._raw.pop(term, None)
            if flat is not None:
                self.postings[term] = decode_postings(flat)

    def idf(self, term: str) -> float:
        self._materialize((term,))
        return super().idf(term)

    def scores(self, query_tokens: Iterable[str]) -> dict[int, float]:
        tokens = list(query_tokens)
        self._materialize(tokens)
        return super().scores(tokens)


# -- vectors -----------------------------------------------------------------------------------
def dequantize(int8_rows: bytes, scales: Sequence[float], dim: int) -> array[float]:
    """The float32 matrix ``row * scale`` of int8 rows (row-major)."""
    q = memoryview(int8_rows).cast("b")
    if len(q) != len(scales) * dim:
        raise BundleError(f"{len(q)} int8 values do not hold {len(scales)} rows of {dim}")
    out = array("f")
    for i, s in enumerate(scales):
        out.extend([v * s for v in q[i * dim : (i + 1) * dim]])
    return out


class RankedListChannel:
    """The semantic channel's result computed elsewhere (the browser's JS kernel), passed in ranked.

    ``ranked`` must be the core's ranking (``Bundle.rank_vectors``) — tests hold them together. With
    no list the channel is unavailable for ``reason``.
    """

    name = "semantic"

    def __init__(
        self,
        ranked: Sequence[tuple[str, float]] | None,
        reason: str = "no embedding for the question",
        vectors: Callable[[Sequence[str]], Mapping[str, Sequence[float]]] | None = None,
    ) -> None:
        self.ranked = None if ranked is None else [(str(i), float(s)) for i, s in ranked]
        self.reason = reason
        self._vectors = vectors

    def vectors_for(self, ids: Sequence[str]) -> Mapping[str, Sequence[float]]:
        """Stored vectors of some chunks (the engine's diversity stage asks for them)."""
        return {} if self._vectors is None else self._vectors(ids)

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if self.ranked is None:
            raise ChannelUnavailable(self.reason)
        return self.ranked[:k]


# -- the bundle --------------------------------------------------------------------------------
class Bundle:
    """An exported index in memory, answering questions with the core's retrieval."""

    def __init__(
        self,
        *,
        meta: Mapping[str, str],
        chunks: Sequence[Chunk],
        bm25: BM25Index,
        graph: CodeGraph,
        pages: Mapping[str, str],
        vector_ids: Sequence[str] = (),
        vector_dim: int = 0,
        vector_scales: Sequence[float] = (),
        vector_data: bytes = b"",
        vector_offsets: tuple[int, int] | None = None,
    ) -> None:
        self.meta = dict(meta)
        self.chunks = list(chunks)
        self.corpus = MemoryCorpus(self.chunks)
        self.bm25 = bm25
        self.graph = graph
        self.pages = dict(pages)
        self.vector_ids = list(vector_ids)
        self.vector_dim = vector_dim
        self._scales = list(vector_scales)
        self._data = vector_data
        self._vector_index: VectorIndex | None = None
        self._row_pos: dict[str, int] | None = None
        # where the scales and the int8 rows start in vectors.bin (for a JavaScript kernel)
        self.vector_offsets = vector_offsets or (0, 4 * len(self.vector_ids))

    def __len__(self) -> int:
        return len(self.chunks)

    @property
    def has_vectors(self) -> bool:
        return bool(self.vector_ids) and self.vector_dim > 0

    @property
    def vector_index(self) -> VectorIndex | None:
        """The core's vector index over the dequantised rows (built on first use)."""
        if not self.has_vectors:
            return None
        if self._vector_index is None:
            matrix = dequantize(self._data, self._scales, self.vector_dim)
            self._vector_index = VectorIndex(self.vector_ids, matrix, self.vector_dim)
        return self._vector_index

    def vectors_for(self, ids: Sequence[str]) -> dict[str, Sequence[float]]:
        """Dequantised rows of ``ids`` (the same float32 values as ``vector_index``'s rows)."""
        if not self.has_vectors:
            return {}
        if self._vector_index is not None:
            return self._vector_index.vectors_for(ids)
        if self._row_pos is None:
            self._row_pos = {row_id: i for i, row_id in enumerate(self.vector_ids)}
        dim = self.vector_dim
        q = memoryview(self._data).cast("b")
        out: dict[str, Sequence[float]] = {}
        for cid in ids:
            i = self._row_pos.get(cid)
            if i is not None:
                s = self._scales[i]
                out[cid] = array("f", [v * s for v in q[i * dim : (i + 1) * dim]])
        return out

    def rank_vectors(self, vector: Sequence[float], k: int | None = None) -> list[tuple[str, float]]:
        """The core's semantic ranking for ``vector``: ``(chunk id, cosine)``, best first, ties by id."""
        index = self.vector_index
        if index is None:
            raise ChannelUnavailable("the bundle has no vectors")
        return index.search(vector, k)

    def channels(
        self,
        *,
        ranked: Sequence[tuple[str, float]] | None = None,
        semantic_reason: str | None = None,
    ) -> list[Channel]:
        semantic: Channel
        if not self.has_vectors:
            semantic = VectorChannel(None, "the bundle has no vectors")
        elif semantic_reason is not None:
            semantic = RankedListChannel(None, semantic_reason)
        elif ranked is not None:
            semantic = RankedListChannel(ranked, vectors=self.vectors_for)
        else:
            semantic = VectorChannel(self.vector_index)
        return [BM25Channel(self.bm25), semantic, GraphChannel(self.graph, self.corpus)]

    def retrieve(
        self,
        question: str,
        vector: Sequence[float] | None = None,
        *,
        ranked: Sequence[tuple[str, float]] | None = None,
        semantic_reason: str | None = None,
        **options: Any,
    ) -> RetrievalResult:
        """Retrieve with ``RetrievalOptions(**options)`` (its defaults when none are given).

        ``ranked`` is a precomputed semantic ranking (the browser's kernel); without it the core
        scans the vectors itself when ``vector`` is given, and without either the semantic channel
        is reported unavailable (``semantic_reason`` says why, e.g. the model failed to load).
        """
        opts = RetrievalOptions(**_normalise_options(options))
        if vector is None and ranked is None and semantic_reason is None:
            semantic_reason = "no embedding for the question"
        channels = self.channels(ranked=ranked, semantic_reason=semantic_reason)
        return retrieve(
            question, channels=channels, graph=self.graph, corpus=self.corpus, vector=vector, options=opts
        )

    def ask(
        self,
        question: str,
        vector: Sequence[float] | None = None,
        *,
        ranked: Sequence[tuple[str, float]] | None = None,
        semantic_reason: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """``RetrievalResult.to_dict()`` plus ``answer`` (the extractive answer and its citations)."""
        result = self.retrieve(question, vector, ranked=ranked, semantic_reason=semantic_reason, **options)
        answer = extractive_answer(result)
        out = result.to_dict()
        out["answer"] = answer.to_dict()
        return out

    def vector_layout(self) -> dict[str, Any]:
        """What a JavaScript kernel needs to score ``vectors.bin`` itself (ids in row order)."""
        return {
            "dim": self.vector_dim,
            "count": len(self.vector_ids),
            "ids": self.vector_ids,
            "scales_offset": self.vector_offsets[0],
            "data_offset": self.vector_offsets[1],
        }


_TUPLE_OPTIONS = ("channels", "include", "exclude")


def _normalise_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as they arrive from JSON: lists become tuples; None means "the default"."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        out[key] = tuple(value) if key in _TUPLE_OPTIONS else value
    return out


# -- decoding ----------------------------------------------------------------------------------
def _column(table: Mapping[str, Any], name: str, n: int | None) -> list[Any]:
    col = table.get(name)
    if not isinstance(col, list):
        raise BundleError(f"bundle column {name!r} is missing")
    if n is not None and len(col) != n:
        raise BundleError(f"bundle column {name!r} has {len(col)} values, expected {n}")
    return col


def _rows(table: Mapping[str, Any], names: Sequence[str], n: int) -> Iterator[tuple[Any, ...]]:
    """The named columns of ``table`` (each ``n`` long), zipped into rows."""
    return zip(*(_column(table, name, n) for name in names), strict=True)


def inflate(data: bytes) -> bytes:
    """``data`` gunzipped when it is gzip (the bundle's files on disk), else as it is."""
    return gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data


def _decode_graph(doc: Mapping[str, Any], paths: list[str]) -> tuple[list[str], CodeGraph]:
    """The node ids (in bundle order) and the code graph of ``nodes`` and ``edges``."""
    nt = doc["nodes"]
    node_ids: list[str] = _column(nt, "id", None)
    names = ("id", "kind", "name", "qualname", "path", "start_line", "end_line", "signature", "docstring")
    nodes = [
        Node(nid, kind, name, qual, paths[p], start, end, sig, docstr, float(cent))
        for nid, kind, name, qual, p, start, end, sig, docstr, cent in _rows(
            nt, (*names, "centrality"), len(node_ids)
        )
    ]
    et = doc["edges"]
    edges = [
        Edge(node_ids[s], node_ids[t], kind, float(conf))
        for s, t, kind, conf in _rows(
            et, ("source", "target", "kind", "confidence"), len(_column(et, "source", None))
        )
    ]
    return node_ids, CodeGraph(nodes, edges)


def _decode_chunks(ct: Mapping[str, Any], paths: list[str], node_ids: list[str]) -> list[Chunk]:
    """Chunks, their ids and content hashes computed by the indexer's own formulas."""
    names = ("path", "kind", "title", "start_line", "end_line", "text", "n_tokens", "node")
    return [
        Chunk(
            chunk_id(paths[p], start, end, text),
            paths[p],
            kind,
            title,
            start,
            end,
            text,
            content_hash(text),
            ntok,
            node_ids[node] if node >= 0 else None,
        )
        for p, kind, title, start, end, text, ntok, node in _rows(ct, names, len(_column(ct, "text", None)))
    ]


def _decode_vectors(
    vt: Mapping[str, Any] | None, vectors: bytes | None, ids: list[str]
) -> tuple[list[str], int, list[float], bytes, tuple[int, int] | None]:
    """``(vector ids, dim, scales, int8 data, (scales offset, data offset))``; empty without vectors."""
    if vt is None or vectors is None:
        return [], 0, [], b"", None
    if vt.get("dtype") != "int8":
        raise BundleError(f"vector dtype {vt.get('dtype')!r} is not supported (int8 is)")
    dim = int(vt["dim"])
    count = int(vt["count"])
    rows: list[int] = _column(vt, "rows", count)
    s_off = int(vt["scales_offset"])
    d_off = int(vt["data_offset"])
    if len(vectors) < d_off + count * dim:
        raise BundleError(f"vectors.bin holds {len(vectors)} bytes, expected {d_off + count * dim}")
    scale_arr = array("f")
    scale_arr.frombytes(vectors[s_off : s_off + 4 * count])
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI
        scale_arr.byteswap()
    data = bytes(vectors[d_off : d_off + count * dim])
    return [ids[r] for r in rows], dim, scale_arr.tolist(), data, (s_off, d_off)


def decode_bundle(index_json: str | bytes, vectors: bytes | None = None) -> Bundle:
    """A :class:`Bundle` from ``index.json`` and ``vectors.bin`` (None: no vectors), gzipped or not."""
    if isinstance(index_json, bytes):
        index_json = inflate(index_json)
    doc = json.loads(index_json)
    if not isinstance(doc, dict) or doc.get("format") != BUNDLE_FORMAT:
        raise BundleError("not an oya bundle (index.json lacks format 'oya-bundle')")
    if doc.get("version") != BUNDLE_VERSION:
        raise BundleError(f"bundle version {doc.get('version')!r}; this core reads version {BUNDLE_VERSION}")
    paths: list[str] = doc["paths"]
    pages = dict(zip(paths, _column(doc, "pages", len(paths)), strict=True))
    node_ids, graph = _decode_graph(doc, paths)
    chunks = _decode_chunks(doc["chunks"], paths, node_ids)
    ids = [c.id for c in chunks]
    bt = doc["bm25"]
    terms: list[str] = _column(bt, "terms", None)
    bm25 = LazyBM25Index(
        ids,
        _column(bt, "doc_lens", len(ids)),
        dict(zip(terms, _column(bt, "postings", len(terms)), strict=True)),
    )
    vector_ids, dim, scales, data, offsets = _decode_vectors(
        doc.get("vectors"), inflate(vectors) if vectors is not None else None, ids
    )
    return Bundle(
        meta=doc.get("meta") or {},
        chunks=chunks,
        bm25=bm25,
        graph=graph,
        pages=pages,
        vector_ids=vector_ids,
        vector_dim=dim,
        vector_scales=scales,
        vector_data=data,
        vector_offsets=offsets,
    )


def load_bundle(source: str | os.PathLike[str] | Mapping[str, bytes]) -> Bundle:
    """A bundle from its folder, or from ``{file name: bytes}`` (the only function here that reads files)."""
    if isinstance(source, Mapping):
        if INDEX_FILE not in source:
            raise BundleError(f"the bundle lacks {INDEX_FILE}")
        return decode_bundle(source[INDEX_FILE], source.get(VECTORS_FILE))
    folder = os.fspath(source)
    with open(os.path.join(folder, INDEX_FILE), "rb") as fh:
        index_bytes = fh.read()
    vec_path = os.path.join(folder, VECTORS_FILE)
    vec_bytes: bytes | None = None
    if os.path.exists(vec_path):
        with open(vec_path, "rb") as fh:
            vec_bytes = fh.read()
    return decode_bundle(index_bytes, vec_bytes)


def ask_json(bundle: Bundle, request: str) -> str:
    """``Bundle.ask`` over JSON (one string each way keeps the JavaScript/Python boundary cheap).

    ``request``: ``{"question", "vector"?, "ranked"?, "semantic_reason"?, "options"?}``.
    """
    req = json.loads(request)
    ranked = req.get("ranked")
    out = bundle.ask(
        str(req["question"]),
        req.get("vector"),
        ranked=[(str(i), float(s)) for i, s in ranked] if ranked is not None else None,
        semantic_reason=req.get("semantic_reason"),
        **(req.get("options") or {}),
    )
    return json.dumps(out, ensure_ascii=False)
