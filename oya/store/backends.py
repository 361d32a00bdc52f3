"""The query backends over an open index: BM25 evaluated by DuckDB, cosine by numpy (the CLI's
lexical and semantic channels; the browser runs the pure ones of ``oya.core.channels``).

Theory of operation:

* Queries do not call ``match_bm25`` row by row; ``DuckBM25Channel`` evaluates the same
  formula as one aggregate over the BM25 tables ``oya.store.writer`` builds, which is what
  ``oya.core.bm25`` computes too — the parity tests hold the rankings together. Reading needs no
  extension at all.
* The semantic channel loads the vector blobs once into a numpy matrix and ranks by one
  matrix-vector product (DuckDB cannot read a float32 BLOB as an array, and
  ``FLOAT[dim]`` columns made the build 20x slower to write); it ranks like
  ``oya.core.vectors`` (parity-tested too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb
import numpy as np

from oya.core.bm25 import K1, B, rarest
from oya.core.channels import ChannelUnavailable
from oya.core.file_lexical import FileDocs
from oya.core.query import QueryPlan
from oya.store.index import Index


class DuckBM25Channel:
    """BM25 evaluated by DuckDB over the FTS tables; ranks exactly like ``oya.core.bm25``, and
    sums its term counts per file as ``oya.core.file_lexical.MemoryFileTerms`` does (``FileTerms``)."""

    name = "lexical"

    def __init__(self, index: Index, k1: float = K1, b: float = B) -> None:
        self.index = index
        self.k1 = k1
        self.b = b
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
            self._docs = FileDocs({str(p): int(n) for p, n in rows}, k1=self.k1, b=self.b)
        return self._docs

    def file_term_counts(self, terms: Sequence[str], paths: Mapping[str, str]) -> dict[str, dict[str, int]]:
        """Per term the chunk BM25 searches (its rarest): file -> its count summed over the file's chunks."""
        terms = list(dict.fromkeys(terms))
        if not terms or not self.index.has_fts:
            return {}
        con = self.index.con
        found = con.execute(
            f"SELECT termid, term, df FROM fts_main_chunks.dict WHERE term IN ({_sql_strings(terms)})"
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

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if not self.index.has_fts:
            raise ChannelUnavailable("the index has no full-text index")
        terms = list(dict.fromkeys(plan.lexical_tokens))
        if not terms:
            return []
        return bm25_sql(self.index.con, terms, k, self.k1, self.b)


def bm25_sql(
    con: duckdb.DuckDBPyConnection, terms: list[str], k: int | None, k1: float = K1, b: float = B
) -> list[tuple[str, float]]:
    """The BM25 of ``oya.core.bm25`` as one DuckDB aggregate over the fts tables."""
    # Bit-for-bit the core's arithmetic, so exact ties stay ties and break by id the same way:
    # the same operation order per term, and the terms summed left to right in query order
    # (a plain sum() adds in whatever order the parallel aggregate meets them).
    terms = list(dict.fromkeys(terms))
    # 1. the query's terms, inlined as SQL string literals: DuckDB's Python client converts each
    #    bound parameter on its own (a list parameter probes pandas per element), which cost
    #    80 ms for a 10 kB report's ~650 terms against 5 ms inlined (bench/long_query_bench.py)
    found = con.execute(
        f"SELECT term, termid, df FROM fts_main_chunks.dict WHERE term IN ({_sql_strings(terms)})"
    ).fetchall()
    df = {str(t): int(n) for t, _, n in found}
    keep = set(rarest(terms, lambda t: df.get(t, 0)))  # a long question's rarest, as the core
    found = [(t, tid) for t, tid, _ in found if t in keep]
    if not found:
        return []
    pos = {t: i for i, t in enumerate(terms)}
    qt = sorted((pos[str(t)], int(tid)) for t, tid in found)
    # 2. their postings from ``bm25_postings`` (term frequencies per document, sorted by termid
    #    at build time, so DuckDB's zone maps skip every row group without a query term; the
    #    termids are inlined as integers for that pruning to apply, and the (termid, position)
    #    pairs too: they are ints made here)
    values = ", ".join(f"({tid}, {i})" for i, tid in qt)
    ids = ", ".join(str(tid) for _, tid in qt)
    rows = con.execute(
        f"""
        WITH qt AS (SELECT * FROM (VALUES {values}) AS v(termid, pos)),
        st AS (SELECT num_docs, avgdl FROM fts_main_chunks.stats),
        qi AS (SELECT qt.termid, qt.pos, ln((st.num_docs - d.df + 0.5) / (d.df + 0.5) + 1.0) AS idf
               FROM qt JOIN fts_main_chunks.dict d ON d.termid = qt.termid, st),
        tf AS (SELECT docid, termid, tf FROM bm25_postings WHERE termid IN ({ids}))
        SELECT docs.name,
               list_reduce(
                   list(qi.idf * (tf.tf * (? + 1)) / (tf.tf + ? * ((1 - ?) + ? * (docs.len / st.avgdl)))
                        ORDER BY qi.pos),
                   lambda a, b: a + b
               ) AS score
        FROM tf JOIN qi USING (termid) JOIN fts_main_chunks.docs docs USING (docid), st
        GROUP BY docs.name
        ORDER BY score DESC, docs.name
        LIMIT ?
        """,
        [k1, k1, b, b, k if k is not None else 2**31 - 1],
    ).fetchall()
    return [(str(n), float(s)) for n, s in rows]


def _sql_strings(terms: list[str]) -> str:
    """``terms`` as a list of SQL string literals (quotes doubled; the tokenizer's terms are
    ``[A-Za-z0-9_]+``, the doubling keeps anything else a literal too)."""
    return ", ".join("'" + t.replace("'", "''") + "'" for t in terms)


class MatrixVectorChannel:
    """Cosine over the index's unit vectors as one numpy matrix-vector product."""

    name = "semantic"

    def __init__(self, index: Index) -> None:
        self.index = index
        self._ids: list[str] | None = None
        self._matrix: np.ndarray | None = None
        self._matrix64: np.ndarray | None = None

    def _load(self) -> None:
        rows = self.index.embedding_blobs()
        self._ids = [i for i, _ in rows]
        dim = self.index.dim
        buf = b"".join(b for _, b in rows)
        self._matrix = (
            np.frombuffer(buf, dtype="<f4").reshape(len(rows), dim) if rows else np.zeros((0, dim), "<f4")
        )

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if self._matrix is None:
            self._load()
        assert self._matrix is not None and self._ids is not None
        if not len(self._ids):
            raise ChannelUnavailable("the index has no embeddings")
        if vector is None:
            raise ChannelUnavailable("no embedding for the question")
        if len(vector) != self.index.dim:
            raise ChannelUnavailable(f"question vector has dimension {len(vector)}, index {self.index.dim}")
        # float64 accumulation, as the core's sumprod does, so near-ties break the same way
        if self._matrix64 is None:  # converted once, not per question (28 MB for 10k x 384)
            self._matrix64 = self._matrix.astype(np.float64)
        sims = self._matrix64 @ np.asarray(vector, dtype=np.float32).astype(np.float64)
        k = min(k, len(self._ids))
        if k <= 0:
            return []
        if k < len(self._ids):
            # every row tied with the k-th best comes along, so ties at the cut break by id
            # (argpartition alone picks an arbitrary member of a tie)
            kth = np.partition(sims, len(sims) - k)[len(sims) - k]
            top = np.flatnonzero(sims >= kth)
        else:
            top = np.arange(len(self._ids))
        ranked = sorted(((self._ids[i], float(sims[i])) for i in top), key=lambda item: (-item[1], item[0]))
        return ranked[:k]
