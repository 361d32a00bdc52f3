"""File rankings for one built index: Oya's own, the reference rows and the aggregation variants.

Everything here reads a finished Oya index (chunks, their tokens, their vectors) and the tree
it was built from; nothing is written. One ``IndexRankers`` per (repository, commit):

* ``oya``: ``Searcher.search(...).files``, what ``oya search --files`` prints (k = 10), and
  ``oya-k30`` (the same with k = 30, a deeper list for the filtered and prior views);
  ``oya-main`` (main's file aggregation, ``graph``), ``oya-nokinds`` (that, before the file-kind
  prior: ``variants.no_kinds``) and the variants of ``variants.ranking`` and
  ``variants.coactivation`` (``oya-nofilelex``, ``oya-buildlast``, ``oya-coact``; ``oya-noscope``,
  ``oya-scope1``, ``oya-scope2``: ``variants.scope``; ``oya-noorigins``: ``variants.origins``, the
  ranking blind to files' origins; ``oya-nocodefirst``, ``oya-nonamed``: ``variants.code_first``,
  each list read as its channel gave it; ``oya-nocompanions``: ``variants.companions``, no
  companion moved up beside a high file; ``oya-nosemantic``: no semantic channel; ``oya-prose`` and
  ``oya-subject`` embed the prose part or its first paragraph: ``variants.query_parts``;
  ``oya-notemplates`` and its ``-lex`` / ``-sem`` halves ask without the lines of the tree's issue
  templates: ``variants.issue_templates``; ``oya-notypenames``, ``oya-typenames-join``: ``variants.type_names``,
  before files named after a type the report spells moved up, and with unranked ones joining), all k = 10.
* ``bm25-tree``: the same BM25 over every text file of the tree, indexed by Oya or not (Oya
  skips extensions it does not know, e.g. ``.kt``, ``.php``, ``.y``).
* ``bm25-files``: BM25 (bm25s, Lucene variant, k1 1.5, b 0.75) over each indexed file's whole
  text, tokenized by the core's code-aware tokenizer (camel/snake parts + whole identifiers).
* ``bm25-chunks``: the same BM25 over Oya's chunks (title + text, the lexical channel's
  tokens); a file scores its best chunk.
* ``embedding``: cosine of the question's MiniLM vector with every chunk vector of the index;
  a file scores its best chunk.
* ``fused-*``: the two chunk channels fused by RRF (k = 10, the core's default, each channel
  cut at its first 100 chunks like the core's ``fetch_k``), then aggregated per file:
  ``max`` (best chunk), ``sum`` (every pooled chunk), ``sumnorm`` (sum / sqrt of the file's
  chunk count, so long files are not favoured), ``decay`` (1, 1/2, 1/4 of the best three) and
  ``decay+filedoc`` (decay fused at file level with BM25 over a file document of
  path tokens + text).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from bench.common import CACHE_DIR
from bench.variants.coactivation import with_coactivation
from bench.variants.code_first import without_code_first, without_named
from bench.variants.companions import without_companions
from bench.variants.file_lexical import without_file_lexical
from bench.variants.issue_templates import read_issue_templates, strip_template_lines
from bench.variants.kind_words import with_reports_asking_for_code, with_tests_asked_by_first_line
from bench.variants.no_kinds import without_kinds
from bench.variants.origins import without_origins
from bench.variants.query_parts import embedding_text
from bench.variants.ranking import (
    main_pipeline,
    subject_text,
    with_build_files_last,
    without_build_files_last,
)
from bench.variants.scope import with_scope_weight, without_scope
from bench.variants.static.embedder import StaticEmbedder
from bench.variants.type_names import with_type_names_joined, without_type_names
from oya.core.channels import make_channels
from oya.core.options import RetrievalOptions
from oya.core.pipeline import Pipeline, default_pipeline, retrieve
from oya.core.results import RetrievalResult
from oya.core.tokenize import tokenize
from oya.core.vectors import decode_f32
from oya.embedding.cache import EmbeddingCache
from oya.embedding.embedder import Embedder, embed_chunks
from oya.query.searcher import Searcher, embedder_for, index_channels
from oya.scanning.reader import scan_repository
from oya.settings import CachePaths
from oya.store.backends import MatrixVectorChannel
from oya.store.index import Index

RRF_K = 10
FETCH = 100
DEPTH = 100  # files kept per row and query (enough for every view)
AGGREGATIONS = ("max", "sum", "sumnorm", "decay")


def _bm25(docs: Sequence[list[str]]) -> bm25s.BM25:
    model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    # an empty document still needs a row; bm25s maps it to its empty token
    model.index([d for d in docs], show_progress=False)
    return model


def _scores(model: bm25s.BM25, tokens: list[str]) -> np.ndarray:
    known = [t for t in tokens if t in model.vocab_dict]
    if not known:
        return np.zeros(model.scores["num_docs"], dtype=np.float32)
    return np.asarray(model.get_scores(known), dtype=np.float64)


def best_per_file(paths: Sequence[str], scores: np.ndarray) -> list[str]:
    """Files ordered by their best chunk's score (ties by path); zero-score chunks never rank."""
    best: dict[str, float] = {}
    for i in np.argsort(-scores, kind="stable")[: max(DEPTH * 20, 2000)]:
        s = float(scores[i])
        if s <= 0:
            break
        p = paths[i]
        if p not in best:
            best[p] = s
    return sorted(best, key=lambda p: (-best[p], p))[:DEPTH]


def ordered(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda p: (-scores[p], p))[:DEPTH]


def aggregate(pool: Sequence[tuple[str, float]], how: str, n_chunks: dict[str, int]) -> dict[str, float]:
    """File scores from (path, chunk score) pairs, best first."""
    by_path: dict[str, list[float]] = {}
    for path, s in pool:
        by_path.setdefault(path, []).append(s)
    out: dict[str, float] = {}
    for path, ss in by_path.items():
        ss.sort(reverse=True)
        if how == "max":
            out[path] = ss[0]
        elif how == "sum":
            out[path] = sum(ss)
        elif how == "sumnorm":
            out[path] = sum(ss) / math.sqrt(max(n_chunks.get(path, 1), 1))
        elif how == "decay":
            out[path] = sum(s / 2**i for i, s in enumerate(ss[:3]))
        else:
            raise ValueError(how)
    return out


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    out: dict[str, float] = {}
    for ranking in rankings:
        for r, item in enumerate(ranking):
            out[item] = out.get(item, 0.0) + 1.0 / (k + r + 1)
    return out


@dataclass(frozen=True)
class Corpus:
    chunk_ids: list[str]
    chunk_paths: list[str]
    files: list[str]
    chunk_bm25: bm25s.BM25
    file_bm25: bm25s.BM25
    filedoc_bm25: bm25s.BM25
    matrix: np.ndarray  # chunk vectors, rows in chunk_ids order (unit length)
    n_chunks: dict[str, int]


def load_corpus(index: Index, tree: Path) -> Corpus:
    token_rows = index.chunk_token_lists()
    ids = [i for i, _ in token_rows]
    paths_by_id = index.chunk_paths()
    paths = [paths_by_id[i] for i in ids]
    files = [p for p, _lang, _size, _n in index.files()]
    texts = [_read(tree / p) for p in files]
    blobs = dict(index.embedding_blobs())
    dim = index.dim
    matrix = np.zeros((len(ids), dim), dtype=np.float64)
    for row, cid in enumerate(ids):
        if cid in blobs:
            matrix[row] = np.frombuffer(blobs[cid], dtype="<f4")
    n_chunks: dict[str, int] = {}
    for p in paths:
        n_chunks[p] = n_chunks.get(p, 0) + 1
    return Corpus(
        chunk_ids=ids,
        chunk_paths=paths,
        files=files,
        chunk_bm25=_bm25([t for _, t in token_rows]),
        file_bm25=_bm25([tokenize(t) for t in texts]),
        filedoc_bm25=_bm25(
            [
                tokenize(p.replace("/", " ").replace(".", " ")) * 2 + tokenize(t)
                for p, t in zip(files, texts, strict=True)
            ]
        ),
        matrix=matrix,
        n_chunks=n_chunks,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


TREE_MAX_BYTES = 1_000_000


def tree_files(tree: Path) -> list[tuple[str, str]]:
    """Every text file of a tree, whatever Oya indexes: (path, text) for files under 1 MB that
    decode as UTF-8 and hold no NUL byte (the ``bm25-tree`` row's candidates)."""
    out: list[tuple[str, str]] = []
    for path in sorted(tree.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.name == ".materialize_missing":
            continue
        if path.stat().st_size > TREE_MAX_BYTES:
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append((path.relative_to(tree).as_posix(), text))
    return out


def bm25_tree(tree: Path, question: str) -> list[str]:
    """BM25 over every text file of the tree (not only what Oya indexed), whole files."""
    files = tree_files(tree)
    model = _bm25([tokenize(t) for _, t in files])
    scores = _scores(model, tokenize(question))
    return [files[i][0] for i in np.argsort(-scores, kind="stable")[:DEPTH] if scores[i] > 0]


def confidence_record(result: RetrievalResult) -> dict[str, Any]:
    """The banner of Oya's answer for the run log: level, gaps, the evidence behind them."""
    c = result.confidence
    return {"level": c.level, "gaps": list(c.gaps), "evidence": result.quality.evidence.to_dict()}


_EMBEDDERS: dict[str, Embedder | None] = {}

# issue 25: the semantic channel with a static model's vectors (``oya-static<dims>``: the shipped
# pipeline; ``embedding-static<dims>``: the channel alone, files by their best chunk). The chunks
# are embedded in memory (vectors cached by text in bench/.cache/static), no index is rebuilt.
# the candidates; 384 (a rotation of all of PCA, as many bytes as MiniLM's) is the own eval's only
STATIC_DIMS = (128, 256)
_STATIC: dict[int, StaticEmbedder] = {}


def static_embedder(dims: int) -> StaticEmbedder:
    if dims not in _STATIC:
        _STATIC[dims] = StaticEmbedder(dims, cache_dir=CACHE_DIR / "static")
    return _STATIC[dims]


class _IndexAtWidth:
    """An index seen with another vector width: the base channel checks a question's width
    against ``index.dim`` (MiniLM's 384), the preset vectors are the static model's."""

    def __init__(self, index: Index, dim: int) -> None:
        self._index = index
        self.dim = dim

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)


class PresetVectorChannel(MatrixVectorChannel):
    """The CLI's numpy cosine channel over vectors given in memory instead of the index's."""

    def __init__(self, index: Index, ids: list[str], matrix: np.ndarray) -> None:
        super().__init__(_IndexAtWidth(index, matrix.shape[1]))  # type: ignore[arg-type]
        self._ids = ids
        self._matrix = matrix


class IndexRankers:
    """Every row's file ranking for questions against one built index."""

    def __init__(self, index_dir: Path, tree: Path) -> None:
        index = Index(index_dir)
        # the files' origins as this checkout's reader tells them from the same tree (what a fresh
        # build would store), so kept indexes, older ones included, rank as this code would
        index._origins = scan_repository(tree).origins
        model = index.meta.get("model_id", "")
        if model not in _EMBEDDERS:  # one query model per run, not one load per query
            _EMBEDDERS[model] = embedder_for(model)
        self.searcher = Searcher(index, _EMBEDDERS[model])
        self.tree = tree
        self.template_lines = read_issue_templates(tree)  # variants.issue_templates
        self.confidence: dict[str, Any] = {}  # the last ``rank``'s banner (``confidence_record``)
        self._corpus: Corpus | None = None
        self._vectors: dict[str, tuple[list[float] | None, str]] = {}
        self._static: dict[int, PresetVectorChannel] = {}

    def close(self) -> None:
        self.searcher.index.close()

    @property
    def corpus(self) -> Corpus:
        """The reference rows' corpus (read on first use: the Oya rows alone do not need it)."""
        if self._corpus is None:
            self._corpus = load_corpus(self.searcher.index, self.tree)
        return self._corpus

    def _search(self, question: str, pipeline: Pipeline, embed: str | None = None) -> RetrievalResult:
        """Oya's ranking by ``pipeline`` (k = 10); the semantic channel embeds ``embed`` if given."""
        text = embed or question
        if text not in self._vectors:  # one embedding per text for all the rows
            self._vectors[text] = self.searcher.embed_query(text)
        vector, reason = self._vectors[text]
        return retrieve(
            question,
            channels=index_channels(
                self.searcher.index, reason if vector is None else "", self.searcher.backends
            ),
            graph=self.searcher.index.graph,
            corpus=self.searcher.index,
            vector=vector,
            pipeline=pipeline,
        )

    def variants(self, question: str, *, main: bool = True) -> dict[str, list[str]]:
        """The variant rows (``variants.ranking``, ``variants.coactivation``, ``variants.no_kinds``;
        ``main``: also main's pipeline, ``oya-main`` and ``oya-nokinds``)."""
        shipped = default_pipeline(replace(RetrievalOptions(), k=10))
        rows = {
            "oya-nofilelex": without_file_lexical(shipped),
            "oya-buildlast": with_build_files_last(shipped),  # shipped since; before: oya-nobuildlast
            "oya-nobuildlast": without_build_files_last(shipped),
            "oya-coact": with_coactivation(shipped),
            "oya-testsubject": with_tests_asked_by_first_line(shipped),
            "oya-debugcode": with_reports_asking_for_code(shipped),
            "oya-noscope": without_scope(shipped),  # shipped since: oya-scope05 in the sweep
            "oya-noorigins": without_origins(shipped),  # issue 24: before files' origins were known
            # issue 24: each list read as the channel gave it, no named files (main before)
            "oya-nocodefirst": without_code_first(shipped),
            "oya-nonamed": without_named(shipped),
            # issue 24: before a high file's companion moved up beside it
            "oya-nocompanions": without_companions(shipped),
            # issue 25: what the semantic channel is worth (the question is still embedded once)
            "oya-nosemantic": default_pipeline(
                replace(RetrievalOptions(), k=10, channels=("lexical", "graph"))
            ),
            "oya-scope1": with_scope_weight(shipped, 1.0),
            "oya-scope2": with_scope_weight(shipped, 2.0),
            # issue 24: before a file named after a type the report spells moved up; and the type's
            # files no channel ranked joining too (``variants.type_names``)
            "oya-notypenames": without_type_names(shipped),
            "oya-typenames-join": with_type_names_joined(shipped),
        }
        if main:
            rows |= {"oya-nokinds": without_kinds(main_pipeline(shipped)), "oya-main": main_pipeline(shipped)}
        out = {name: [f.path for f in self._search(question, p).files] for name, p in rows.items()}
        for name, text in (("oya-prose", embedding_text(question)), ("oya-subject", subject_text(question))):
            out[name] = [f.path for f in self._search(question, shipped, text).files]
        # issue 24: the issue templates' boilerplate dropped from the question, for both channels
        # or for one (the other reads the report as pasted): ``variants.issue_templates``
        bare = strip_template_lines(question, self.template_lines).text
        for name, lexical, embedded in (
            ("oya-notemplates", bare, bare),
            ("oya-notemplates-lex", bare, question),
            ("oya-notemplates-sem", question, bare),
        ):
            out[name] = [f.path for f in self._search(lexical, shipped, embedded).files]
        return out

    def static_channel(self, dims: int) -> PresetVectorChannel:
        """The index's chunks embedded by the static model of width ``dims`` (cached by text)."""
        if dims not in self._static:
            embedder = static_embedder(dims)
            index = self.searcher.index
            cache = EmbeddingCache(CachePaths(CACHE_DIR / "static").embeddings(embedder.model_id))
            try:
                vectors, _new, _old = embed_chunks(index.all_chunks(), embedder, cache)
            finally:
                cache.close()
            ids = sorted(vectors)
            matrix = np.frombuffer(b"".join(vectors[i] for i in ids), dtype="<f4").reshape(len(ids), dims)
            self._static[dims] = PresetVectorChannel(index, ids, matrix)
        return self._static[dims]

    def rank_embedders(self, question: str) -> dict[str, list[str]]:
        """Issue 25's rows: ``oya`` (the index's own model), ``oya-nosemantic``, and per static
        width the shipped pipeline over its vectors and its channel alone."""
        shipped = self.searcher.search(question, k=10)
        out = {"oya": [f.path for f in shipped.files]}
        self.confidence = confidence_record(shipped)
        nosemantic = default_pipeline(replace(RetrievalOptions(), k=10, channels=("lexical", "graph")))
        out["oya-nosemantic"] = [f.path for f in self._search(question, nosemantic).files]
        index = self.searcher.index
        pipeline = default_pipeline(replace(RetrievalOptions(), k=10))
        for dims in STATIC_DIMS:
            channel = self.static_channel(dims)
            vector = list(decode_f32(static_embedder(dims).embed([question])[0]))
            channels = make_channels(
                lexical=self.searcher.backends[0], semantic=channel, graph=index.graph, corpus=index
            )
            result = retrieve(
                question, channels=channels, graph=index.graph, corpus=index, vector=vector, pipeline=pipeline
            )
            out[f"oya-static{dims}"] = [f.path for f in result.files]
            assert channel._matrix is not None
            sims = channel._matrix.astype(np.float64) @ np.asarray(vector, dtype=np.float64)
            paths = index.chunk_paths()
            out[f"embedding-static{dims}"] = best_per_file([paths[i] for i in channel._ids or []], sims)
        return out

    def rank_oya(self, question: str) -> dict[str, list[str]]:
        """Only this checkout's Oya rows (``oya`` and the variants, not main's): the reference rows
        and main's come from another run's log (``commits_eval.py --reference-log``)."""
        shipped = self.searcher.search(question, k=10)
        out = {"oya": [f.path for f in shipped.files]}
        self.confidence = confidence_record(shipped)
        out.update(self.variants(question, main=False))
        return out

    def rank(self, question: str) -> dict[str, list[str]]:
        c = self.corpus
        out: dict[str, list[str]] = {}
        shipped = self.searcher.search(question, k=10)
        out["oya"] = [f.path for f in shipped.files]
        self.confidence = confidence_record(shipped)
        out.update(self.variants(question))
        out["bm25-tree"] = bm25_tree(self.tree, question)
        out["oya-k30"] = [f.path for f in self.searcher.search(question, k=30).files]
        tokens = tokenize(question)
        file_scores = _scores(c.file_bm25, tokens)
        out["bm25-files"] = [
            c.files[i] for i in np.argsort(-file_scores, kind="stable")[:DEPTH] if file_scores[i] > 0
        ]
        lex = _scores(c.chunk_bm25, tokens)
        out["bm25-chunks"] = best_per_file(c.chunk_paths, lex)
        if question not in self._vectors:
            self._vectors[question] = self.searcher.embed_query(question)
        vector, _reason = self._vectors[question]
        sem = (
            c.matrix @ np.asarray(vector, dtype=np.float64)
            if vector is not None
            else np.zeros(len(c.chunk_ids))
        )
        out["embedding"] = best_per_file(c.chunk_paths, sem)
        # chunk-level RRF of the two channels, each cut at FETCH like the core's fetch_k
        lex_rank = [i for i in np.argsort(-lex, kind="stable")[:FETCH] if lex[i] > 0]
        sem_rank = list(np.argsort(-sem, kind="stable")[:FETCH])
        fused = rrf([lex_rank, sem_rank])
        pool = [(c.chunk_paths[i], s) for i, s in fused.items()]
        for how in AGGREGATIONS:
            out[f"fused-{how}"] = ordered(aggregate(pool, how, c.n_chunks))
        doc_scores = _scores(c.filedoc_bm25, tokens)
        filedoc = [c.files[i] for i in np.argsort(-doc_scores, kind="stable")[:FETCH] if doc_scores[i] > 0]
        decay = out["fused-decay"]
        out["fused-decay+filedoc"] = ordered(rrf([decay, filedoc]))
        return out
