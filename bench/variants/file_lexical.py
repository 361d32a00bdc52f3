"""A losing variant, kept runnable: BM25 over whole files (path + text), fused into the file
ranking (issue 16 item 3; docs/DECISIONS.md). Measured with the ``decay`` aggregation shipped:
on the fix commits at most +1.3 R@1 and +1.2 R@5 in two subsets (and -1.0 R@1 in one), on the
own eval code file R@1 -4.4 (weight 1) — and the stage cost about half the lexical channel's time
again (one more aggregate over the postings per question). ``with_file_lexical`` inserts it.

Theory of operation (issue 16 item 3): a fix description or bug report names words spread over
a file (a type, the function that uses it, the error it raises), and chunk-level BM25 sees each
chunk alone, so a file whose chunks each hold a few of the words ranked below a file with one
chunk holding many. Scoring the file as one document fixes that; BM25's length normalisation
(``b``) keeps long files from winning by size alone.

The file document is the file's path tokens, counted ``PATH_WEIGHT`` times (the path names
what the file is about: ``zsh_completions.go``), plus the tokens of all its chunks. Nothing new
is stored: the lexical backend hands over, for the question's terms only, each file's summed
term frequencies over its chunks (``FileTermSource``: ``MemoryFileTerms`` over the core's
``BM25Index``, ``DuckFileTerms`` over an index's DuckDB tables), and ``FileDocs`` scores them with the formula of ``oya.core.bm25`` at file
level (``N`` = files, ``df`` = files holding the term, ``avgdl`` = mean file length).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Protocol, runtime_checkable

from oya.core.bm25 import K1, MAX_QUERY_TERMS, B, BM25Index, rarest
from oya.core.channels import BM25Channel, Channel
from oya.core.pipeline import Pipeline
from oya.core.results import FileHit
from oya.core.stages import Candidates, Query
from oya.core.tokenize import tokenize
from oya.store import DuckBM25Channel, Index

# the path's tokens count this many times in the file document (measured in bench/: path x 2 +
# text was the file document of the "decay+filedoc" row, bench/results/commits_eval.md)
PATH_WEIGHT = 2


@runtime_checkable
class FileTermSource(Protocol):
    """A lexical backend that can sum its chunk term frequencies per file."""

    def file_docs(self, paths: Mapping[str, str]) -> FileDocs:
        """The file documents' statistics (built once per index); ``paths``: chunk id -> path."""
        ...

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        """Per term the chunk BM25 would search for ``terms`` (``BM25Index.query_terms``): file
        path -> the term's count summed over its chunks."""
        ...


class FileDocs:
    """Lengths and path tokens of every file document; scores a question's term counts."""

    __slots__ = ("lengths", "path_counts", "avgdl", "k1", "b")

    def __init__(self, text_lengths: Mapping[str, int], *, k1: float = K1, b: float = B) -> None:
        self.path_counts: dict[str, dict[str, int]] = {}  # term -> path -> count in the path
        lengths: dict[str, int] = {}
        for path, n in text_lengths.items():
            toks = tokenize(path)
            lengths[path] = n + PATH_WEIGHT * len(toks)
            for t in toks:
                by_path = self.path_counts.setdefault(t, {})
                by_path[path] = by_path.get(path, 0) + 1
        self.lengths = lengths
        self.avgdl = sum(lengths.values()) / len(lengths) if lengths else 0.0
        self.k1 = k1
        self.b = b

    def score(self, terms: Iterable[str], text_counts: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
        """BM25 of every file holding a distinct term of ``terms`` (text or path)."""
        out: dict[str, float] = {}
        n = len(self.lengths)
        if n == 0 or self.avgdl == 0:
            return out
        k1, b, avgdl, lens = self.k1, self.b, self.avgdl, self.lengths
        for term in dict.fromkeys(terms):
            tfs = dict(text_counts.get(term, {}))
            for path, c in self.path_counts.get(term, {}).items():
                tfs[path] = tfs.get(path, 0) + PATH_WEIGHT * c
            tfs = {p: tf for p, tf in tfs.items() if p in lens}
            if not tfs:
                continue
            idf = math.log((n - len(tfs) + 0.5) / (len(tfs) + 0.5) + 1.0)
            for path, tf in tfs.items():
                sub = idf * (tf * (k1 + 1)) / (tf + k1 * ((1 - b) + b * (lens[path] / avgdl)))
                out[path] = out.get(path, 0.0) + sub
        return out


def rank_file_docs(
    terms: Sequence[str], source: FileTermSource, paths: Mapping[str, str], k: int
) -> list[tuple[str, float]]:
    """Files by BM25 over their documents, best first (ties by path), at most ``k``."""
    distinct = list(dict.fromkeys(terms))
    if not distinct:
        return []
    docs = source.file_docs(paths)
    counts = source.file_term_counts(distinct, paths)
    # a question over the term cap is scored on the terms the backend kept (its rarest), so both
    # backends agree; under it, a term no chunk holds can still match a path
    capped = len(counts) >= MAX_QUERY_TERMS
    scores = docs.score([t for t in distinct if t in counts] if capped else distinct, counts)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


class MemoryFileTerms:
    """``FileTermSource`` over an in-memory ``BM25Index`` whose documents are chunk ids."""

    def __init__(self, index: BM25Index) -> None:
        self.index = index
        self._docs: FileDocs | None = None
        self._file_of: list[str] | None = None

    def _files(self, paths: Mapping[str, str]) -> list[str]:
        if self._file_of is None:
            self._file_of = [paths.get(cid, "") for cid in self.index.doc_ids]
        return self._file_of

    def file_docs(self, paths: Mapping[str, str]) -> FileDocs:
        if self._docs is None:
            lengths: dict[str, int] = {}
            for path, n in zip(self._files(paths), self.index.doc_lens, strict=True):
                if path:
                    lengths[path] = lengths.get(path, 0) + n
            self._docs = FileDocs(lengths, k1=self.index.k1, b=self.index.b)
        return self._docs

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        file_of = self._files(paths)
        out: dict[str, dict[str, int]] = {}
        for term in self.index.query_terms(terms):
            counts: dict[str, int] = {}
            for doc, tf in self.index.postings.get(term, ()):
                path = file_of[doc]
                if path:
                    counts[path] = counts.get(path, 0) + tf
            if counts:
                out[term] = counts
        return out


class DuckFileTerms:
    """``FileTermSource`` over an index's DuckDB BM25 tables (``oya.store``), as two aggregates."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._docs: FileDocs | None = None

    def file_docs(self, paths: Mapping[str, str]) -> FileDocs:
        """Each file's length in tokens (its chunks' summed), read once."""
        if self._docs is None:
            rows = (
                self.index.con.execute(
                    "SELECT c.path, sum(d.len) FROM fts_main_chunks.docs d JOIN chunks c ON c.id = d.name "
                    "GROUP BY c.path"
                ).fetchall()
                if self.index.has_fts
                else []
            )
            self._docs = FileDocs({str(p): int(n) for p, n in rows})
        return self._docs

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        """Per term the chunk BM25 searches (its rarest): file -> its count summed over the file's chunks."""
        terms = list(dict.fromkeys(terms))
        if not terms or not self.index.has_fts:
            return {}
        marks = ", ".join("?" for _ in terms)
        con = self.index.con
        found = con.execute(
            f"SELECT termid, term, df FROM fts_main_chunks.dict WHERE term IN ({marks})", terms
        ).fetchall()
        df = {str(t): int(n) for _, t, n in found}
        keep = set(rarest(terms, lambda t: df.get(t, 0)))
        term_of = {int(tid): str(t) for tid, t, _ in found if t in keep}
        if not term_of:
            return {}
        ids = ", ".join(str(t) for t in sorted(term_of))  # inlined: the zone maps prune (bm25_sql)
        rows = con.execute(
            "SELECT p.termid, c.path, sum(p.tf)::BIGINT FROM bm25_postings p JOIN fts_main_chunks.docs d "
            f"USING (docid) JOIN chunks c ON c.id = d.name WHERE p.termid IN ({ids}) GROUP BY ALL"
        ).fetchall()
        out: dict[str, dict[str, int]] = {}
        for tid, path, tf in rows:
            out.setdefault(term_of[int(tid)], {})[str(path)] = int(tf)
        return out


_SOURCES: dict[int, tuple[Any, FileTermSource]] = {}


def source_for(channel: Channel) -> FileTermSource | None:
    """The file-term source behind a lexical channel (memoised per channel object)."""
    inner: Any = getattr(channel, "inner", channel)  # bench/eval's MemoChannel wraps one
    hit = _SOURCES.get(id(inner))
    if hit is not None and hit[0] is inner:
        return hit[1]
    source: FileTermSource
    if isinstance(inner, BM25Channel):
        source = MemoryFileTerms(inner.index)
    elif isinstance(inner, DuckBM25Channel):
        source = DuckFileTerms(inner.index)
    else:
        return None
    _SOURCES[id(inner)] = (inner, source)
    return source


def file_lexical(q: Query, c: Candidates, *, depth: int, rrf_k: int, weight: float) -> Candidates:
    """The ranked files fused (RRF, ``rrf_k``) with BM25 over whole files (path + text), whose
    list counts ``weight``; a file only the file-level BM25 found joins with no chunk."""
    lexical = next((ch for ch in q.channels if ch.name == "lexical"), None)
    source = source_for(lexical) if lexical is not None else None
    if source is None or "lexical" not in c.rankings:  # switched off or unavailable: as it was
        return c
    paths = q.corpus.chunk_paths()
    ranked = [p for p, _ in rank_file_docs(q.plan.lexical_tokens, source, paths, depth)]
    if q.allowed is not None:
        ranked = [p for p in ranked if q.allowed(p)]
    return replace(c, files=tuple(fuse_files(c.files, ranked, rrf_k=rrf_k, weight=weight)))


def fuse_files(
    files: Sequence[FileHit], ranked: Sequence[str], *, rrf_k: int, weight: float
) -> list[FileHit]:
    """``files`` (ranked from chunks) and ``ranked`` paths fused by weighted RRF, best first."""
    by_path = {f.path: f for f in files}
    scores: dict[str, float] = {}
    for r, f in enumerate(files, 1):
        scores[f.path] = 1.0 / (rrf_k + r)
    for r, path in enumerate(ranked, 1):
        scores[path] = scores.get(path, 0.0) + weight / (rrf_k + r)
    out = [replace(by_path[p], score=s) if p in by_path else FileHit(p, s, ()) for p, s in scores.items()]
    out.sort(key=lambda f: (-f.score, f.path))
    return out


def with_file_lexical(pipeline: Pipeline, weight: float = 0.5) -> Pipeline:
    """``pipeline`` with whole-file BM25 fused into the file ranking right after ``files``."""
    o = pipeline.options
    stage = partial(file_lexical, depth=o.fetch_k, rrf_k=o.rrf_k, weight=weight)
    return pipeline.inserted("files", "file_lexical", stage)
