"""BM25 over whole files (path + text), fused into the file ranking (issue 16 item 3).

Theory of operation: a fix description or bug report names words spread over a file (a type,
the function that uses it, the error it raises), and chunk-level BM25 sees each chunk alone, so
a file whose chunks each hold a few of the words ranked below a file with one chunk holding
many. Scoring the file as one document sees them together; BM25's length normalisation (``b``)
keeps long files from winning by size alone. Whole-file BM25 is the classic baseline of bug
localisation; here it is one more vote on the files, fused by weighted RRF
(``RetrievalOptions.file_lexical_weight``) with the files ranked from the chunks.

The file document is the file's path tokens, counted ``PATH_WEIGHT`` times (the path names what
the file is about: ``zsh_completions.go``), plus the tokens of all its chunks. Nothing new is
stored: the lexical channel sums, for the question's terms only, its chunk term frequencies per
file (``FileTerms``: ``MemoryFileTerms`` over the core's ``BM25Index`` here, the DuckDB tables
in ``oya.store``), and ``FileDocs`` scores them with the formula of ``oya.core.bm25`` at file
level (``N`` = files, ``df`` = files holding the term, ``avgdl`` = mean file length). A question
over ``MAX_QUERY_TERMS`` is scored on the terms the chunk BM25 keeps (its rarest).

Measured (docs/DECISIONS.md, "Whole-file BM25 joins the file ranking"): fix commits file R@1
and R@5 up, the own eval's prose file R@1 up, its code tasks unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from oya.core.bm25 import K1, MAX_QUERY_TERMS, B, BM25Index, best_first, bm25_idf
from oya.core.results import FileHit
from oya.core.tokenize import tokenize

# the path's tokens count this many times in the file document (bench/results/commits_eval.md,
# the "fused-decay+filedoc" row: path x 2 + text)
PATH_WEIGHT = 2


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
            idf = bm25_idf(n, len(tfs))
            for path, tf in tfs.items():
                sub = idf * (tf * (k1 + 1)) / (tf + k1 * ((1 - b) + b * (lens[path] / avgdl)))
                out[path] = out.get(path, 0.0) + sub
        return out


@runtime_checkable
class FileTerms(Protocol):
    """A lexical channel that can sum its chunk term frequencies per file."""

    def file_docs(self, paths: Mapping[str, str]) -> FileDocs:
        """The file documents' statistics (built once per index); ``paths``: chunk id -> path."""
        ...

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        """Per term the chunk BM25 would search for ``terms`` (its rarest): file path -> the
        term's count summed over the file's chunks."""
        ...


def rank_file_docs(
    terms: Sequence[str], source: FileTerms, paths: Mapping[str, str], k: int
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
    return best_first(scores, k, str)


class MemoryFileTerms:
    """``FileTerms`` over an in-memory ``BM25Index`` whose documents are chunk ids."""

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


def fuse_files(
    files: Sequence[FileHit], ranked: Sequence[str], *, rrf_k: int, weight: float
) -> list[FileHit]:
    """``files`` (ranked from chunks) and ``ranked`` paths fused by weighted RRF, best first; a
    path only ``ranked`` holds joins with no chunk."""
    by_path = {f.path: f for f in files}
    scores: dict[str, float] = {}
    for r, f in enumerate(files, 1):
        scores[f.path] = 1.0 / (rrf_k + r)
    for r, path in enumerate(ranked, 1):
        scores[path] = scores.get(path, 0.0) + weight / (rrf_k + r)
    out = [replace(by_path[p], score=s) if p in by_path else FileHit(p, s, ()) for p, s in scores.items()]
    out.sort(key=lambda f: (-f.score, f.path))
    return out
