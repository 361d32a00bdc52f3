"""Okapi BM25 over the core tokenizer's tokens.

Theory of operation — the formula is exactly the one DuckDB's ``fts`` extension evaluates in
``match_bm25`` (so the DuckDB-backed channel ranks like this one; a parity test holds them
together):

    score(D, Q) = sum over DISTINCT terms t of Q present in D of
                  idf(t) * tf(t, D) * (k1 + 1) / (tf(t, D) + k1 * (1 - b + b * |D| / avgdl))
    idf(t)      = ln((N - df(t) + 0.5) / (df(t) + 0.5) + 1)

with k1 = 1.2 and b = 0.75 (Robertson & Zaragoza, "The Probabilistic Relevance Framework:
BM25 and Beyond", 2009; the ``+ 1`` inside the log is Lucene's non-negative idf).
Ties are broken by document id so every runtime returns the same order.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence

K1 = 1.2
B = 0.75
# A query searches at most its this many rarest known terms (issue 16: a pasted 10 kB bug report
# has ~650 distinct terms, and the common ones cost most of the time — every posting of "return"
# — while adding least: idf is lowest for them). Rarity, not position, chooses, so a long report
# keeps every name it shares with few chunks; a question under the cap is searched whole.
MAX_QUERY_TERMS = 128


def rarest(terms: Iterable[str], df: Callable[[str], int], limit: int = MAX_QUERY_TERMS) -> list[str]:
    """The distinct known ``terms`` (``df`` > 0), at most ``limit``: the rarest (lowest ``df``,
    earlier first on ties), in query order."""
    known = [(df(t), i, t) for i, t in enumerate(dict.fromkeys(terms))]
    known = [k for k in known if k[0] > 0]
    if len(known) > limit:
        known = sorted(sorted(known)[:limit], key=lambda k: k[1])
    return [t for _, _, t in known]


def bm25_idf(n: int, df: int) -> float:
    """The idf of a term held by ``df`` of ``n`` documents (Lucene's non-negative form, above)."""
    return math.log((n - df + 0.5) / (df + 0.5) + 1.0)


class BM25Index:
    """An inverted index with document lengths; built once, queried many times."""

    __slots__ = ("doc_ids", "doc_lens", "postings", "avgdl", "k1", "b")

    def __init__(
        self,
        doc_ids: Sequence[str],
        doc_lens: Sequence[int],
        postings: Mapping[str, Sequence[tuple[int, int]]],
        *,
        k1: float = K1,
        b: float = B,
    ) -> None:
        if len(doc_ids) != len(doc_lens):
            raise ValueError("doc_ids and doc_lens differ in length")
        self.doc_ids = list(doc_ids)
        self.doc_lens = list(doc_lens)
        self.postings = {t: list(p) for t, p in postings.items()}
        total = sum(self.doc_lens)
        self.avgdl = total / len(self.doc_lens) if self.doc_lens else 0.0
        self.k1 = k1
        self.b = b

    def __len__(self) -> int:
        return len(self.doc_ids)

    def idf(self, term: str) -> float:
        return bm25_idf(len(self.doc_ids), len(self.postings.get(term, ())))

    def query_terms(self, query_tokens: Iterable[str]) -> list[str]:
        """The terms a query searches: its ``MAX_QUERY_TERMS`` rarest known ones (``rarest``)."""
        return rarest(query_tokens, self.df)

    def df(self, term: str) -> int:
        return len(self.postings.get(term, ()))

    def scores(self, query_tokens: Iterable[str]) -> dict[int, float]:
        """Score of every document that holds at least one distinct query term."""
        out: dict[int, float] = {}
        if not self.doc_ids or self.avgdl == 0:
            return out
        k1, b, avgdl, lens = self.k1, self.b, self.avgdl, self.doc_lens
        for term in self.query_terms(query_tokens):  # distinct, order kept
            plist = self.postings[term]
            idf = self.idf(term)
            for doc, tf in plist:
                sub = idf * (tf * (k1 + 1)) / (tf + k1 * ((1 - b) + b * (lens[doc] / avgdl)))
                out[doc] = out.get(doc, 0.0) + sub
        return out

    def search(self, query_tokens: Iterable[str], k: int | None = None) -> list[tuple[str, float]]:
        """Best documents first as ``(doc_id, score)``; ties by doc id."""
        ids = self.doc_ids
        scored = ((ids[d], s) for d, s in self.scores(query_tokens).items())
        if k is None:
            return sorted(scored, key=_rank_key)
        # the k best of tens of thousands scored (a common term on a big repository): a heap, not
        # a sort of all; the key orders every pair (ids are unique), so the list is sorted()'s head
        return heapq.nsmallest(k, scored, key=_rank_key)


def _rank_key(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1], item[0])
