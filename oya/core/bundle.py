"""The browser bundle read back into the core: corpus, BM25, vectors, graph — and ``Bundle.ask``.

Theory of operation:

* The site exporter (``oya.site.bundle``) makes ``index.json``'s document and ``vectors.bin``'s
  bytes; the site ships them cut into shards (``oya.core.shards``: ``open_shards`` is the
  browser's reader, building this ``Bundle`` over the core's own objects). The whole document's
  reader, the reference a sharded answer must equal, lives outside the shipped core
  (``bench/variants/whole_bundle.py``). Nothing here touches files; everything takes bytes and
  strings (it runs in Pyodide).
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
* The same data can be shipped in shards a question fetches on demand (``oya.core.shards``):
  ``open_shards`` returns this ``Bundle`` with a corpus and a BM25 index that fetch as they are read.
* ``Bundle.ask`` uses ``RetrievalOptions()`` defaults, as the CLI does, unless options are given.
  A question over ``MAX_QUESTION_CHARS`` (a pasted bug report) is condensed first, as the CLI
  condenses it (``oya.core.report``), and the output's ``question_note`` says what went. A caller
  that embeds the question embeds the condensed text (the browser asks its worker to condense
  first), so the semantic channel reads what the other two do.
  With no question vector (the model failed to load) the semantic channel is reported unavailable
  with the reason and the lexical and graph channels still answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from oya.core.answer import extractive_answer
from oya.core.bm25 import BM25Index
from oya.core.bundle_format import (
    dequantize,
)
from oya.core.channels import (
    BM25Channel,
    Channel,
    ChannelUnavailable,
    Corpus,
    DataMissing,
    MemoryCorpus,
    RankedListChannel,
    VectorChannel,
    make_channels,
)
from oya.core.graph import CodeGraph
from oya.core.options import RetrievalOptions, fetch_depth
from oya.core.pipeline import Resume, retrieve
from oya.core.query import MAX_QUESTION_CHARS
from oya.core.records import Chunk
from oya.core.report import condense_report
from oya.core.results import RetrievalResult
from oya.core.vectors import VectorIndex


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
        origins: Mapping[str, str] | None = None,
        corpus: Corpus | None = None,
        load_vectors: Callable[[], tuple[Sequence[float], bytes]] | None = None,
    ) -> None:
        self.meta = dict(meta)
        self.chunks = list(chunks)
        # a sharded bundle (oya.core.shards) brings a corpus that fetches its chunks on demand
        self.corpus: Corpus = corpus if corpus is not None else MemoryCorpus(self.chunks, origins)
        self.bm25 = bm25
        # one lexical channel for every question: it keeps the whole-file BM25's per-index tables
        # (file lengths, chunk -> file) instead of building them again for each question
        self._lexical = BM25Channel(bm25)
        self.graph = graph
        self.pages = dict(pages)
        self.vector_ids = list(vector_ids)
        self.vector_dim = vector_dim
        self._scales = list(vector_scales)
        self._data = vector_data
        # a sharded bundle fetches its vectors on the first pure-Python semantic search only
        self._load_vectors = load_vectors
        self._vector_index: VectorIndex | None = None
        # where the scales and the int8 rows start in vectors.bin (for a JavaScript kernel)
        self.vector_offsets = vector_offsets or (0, 4 * len(self.vector_ids))
        # a sharded bundle's question stops when it lacks shards; asked again, it resumes there
        self._resume = Resume()

    def __len__(self) -> int:
        return len(self.bm25)  # one BM25 document per chunk, whether the chunks are here or sharded

    @property
    def has_vectors(self) -> bool:
        return bool(self.vector_ids) and self.vector_dim > 0

    @property
    def vector_index(self) -> VectorIndex | None:
        """The core's vector index over the dequantised rows (built on first use)."""
        if not self.has_vectors:
            return None
        if self._vector_index is None:
            if self._load_vectors is not None:
                scales, self._data = self._load_vectors()
                self._scales = list(scales)
                self._load_vectors = None
            matrix = dequantize(self._data, self._scales, self.vector_dim)
            self._vector_index = VectorIndex(self.vector_ids, matrix, self.vector_dim)
        return self._vector_index

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
        """The core's channel set over this bundle (``make_channels``, as the CLI's searcher)."""
        semantic: Channel | None = None
        if not self.has_vectors:
            semantic_reason = "the bundle has no vectors"
        elif semantic_reason is None and ranked is not None:
            semantic = RankedListChannel(ranked)
        elif semantic_reason is None and self.vector_index is not None:
            semantic = VectorChannel(self.vector_index)
        return make_channels(
            lexical=self._lexical,
            semantic=semantic,
            graph=self.graph,
            corpus=self.corpus,
            semantic_reason=semantic_reason or "",
        )

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
        key = (question, vector, ranked, semantic_reason, opts)  # all the retrieval depends on
        return retrieve(
            question,
            channels=channels,
            graph=self.graph,
            corpus=self.corpus,
            vector=vector,
            options=opts,
            resume=self._resume,
            key=key,
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
        """``RetrievalResult.to_dict()`` plus ``answer`` (the extractive answer and its citations), and
        ``question_note`` when the question was over the limit and condensed (what was kept)."""
        condensed = condense_report(question, MAX_QUESTION_CHARS)
        if condensed is not None:
            question = condensed.text  # retrieve refuses the whole report
        result = self.retrieve(question, vector, ranked=ranked, semantic_reason=semantic_reason, **options)
        answer = extractive_answer(result)
        out = result.to_dict()
        out["answer"] = answer.to_dict()
        if condensed is not None:
            out["question_note"] = condensed.note()
        return out

    def prepare(self) -> None:
        """Build what the first question builds anyway from what is held (the graph channel's name
        index, whole-file BM25's path tokens), so a browser worker can do it while the question's
        shards download."""
        self.graph.name_index()
        self._lexical.file_docs(self.corpus.chunk_paths())

    def fetch_depth(self, **options: Any) -> int:
        """How deep a semantic ranking handed to ``ask`` (``ranked``) must go for these options."""
        return fetch_depth(RetrievalOptions(**_normalise_options(options)))

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


def ask_json(bundle: Bundle, request: str) -> str:
    """``Bundle.ask`` over JSON (one string each way keeps the JavaScript/Python boundary cheap).

    ``request``: ``{"question", "vector"?, "ranked"?, "semantic_reason"?, "options"?}``. A sharded
    bundle whose fetcher lacks shards answers ``{"missing": [names]}`` instead: fetch them and send
    the same request again (``oya.core.shards``).
    """
    req = json.loads(request)
    ranked = req.get("ranked")
    try:
        out = bundle.ask(
            str(req["question"]),
            req.get("vector"),
            ranked=[(str(i), float(s)) for i, s in ranked] if ranked is not None else None,
            semantic_reason=req.get("semantic_reason"),
            **(req.get("options") or {}),
        )
    except DataMissing as exc:
        return json.dumps({"missing": list(exc.names)})
    return json.dumps(out, ensure_ascii=False)
