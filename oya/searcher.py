"""The CPython query path: an open index, its DuckDB-backed channels and the query embedder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from oya.core.engine import ChannelUnavailable, GraphChannel, RetrievalOptions, retrieve
from oya.core.query import QueryPlan
from oya.core.results import RetrievalResult
from oya.embed import MINILM_ID, MINILM_INT8_ID, Embedder, HashingEmbedder, OnnxMiniLMEmbedder
from oya.errors import OyaError, QueryError
from oya.store import DuckBM25Channel, Index, MatrixVectorChannel


def embedder_for(model_id: str) -> Embedder | None:
    """The embedder that made an index, so questions land in the same vector space."""
    if model_id in (MINILM_INT8_ID, MINILM_ID):
        # An fp32 index from before the int8 default is asked with int8 question vectors, as the
        # browser always did (cosine >= 0.98 with fp32); rebuilding it re-embeds it with int8.
        # One thread: a single short question gains nothing from two, and a second thread
        # contending with other work made query embedding 5-10x slower in the benchmark
        return OnnxMiniLMEmbedder(threads=1)
    if model_id.startswith("oya-hashing-"):
        return HashingEmbedder(int(model_id.rsplit("-", 1)[1]))
    return None


class _Unavailable:
    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        raise ChannelUnavailable(self.reason)


class Searcher:
    def __init__(self, index: Index, embedder: Embedder | None) -> None:
        self.index = index
        self.embedder = embedder
        self.lexical = DuckBM25Channel(index)
        self.semantic = MatrixVectorChannel(index)
        self.graph_channel = GraphChannel(index.graph, index)

    @classmethod
    def open(cls, path: Path) -> Searcher:
        index = Index(path)
        return cls(index, embedder_for(index.meta.get("model_id", "")))

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.index.close()

    def embed_query(self, text: str) -> tuple[list[float] | None, str]:
        if self.embedder is None:
            return None, f"no embedder for model {self.index.meta.get('model_id')!r}"
        try:
            from oya.core.vectors import decode_f32

            return list(decode_f32(self.embedder.embed([text])[0])), ""
        except OyaError as exc:
            return None, str(exc)

    def search(
        self,
        question: str,
        *,
        k: int | None = None,
        include: tuple[str, ...] | None = None,
        exclude: tuple[str, ...] | None = None,
        options: RetrievalOptions | None = None,
    ) -> RetrievalResult:
        """Retrieve for ``question``: ``options`` (the defaults when None) with ``k``, ``include``
        and ``exclude`` put over it when given."""
        if not question.strip():
            raise QueryError("the query is empty")
        vector, reason = self.embed_query(question)
        semantic = self.semantic if vector is not None else _Unavailable("semantic", reason)
        given = {"k": k, "include": include, "exclude": exclude}
        opts = replace(options or RetrievalOptions(), **{n: v for n, v in given.items() if v is not None})
        return retrieve(
            question,
            channels=[self.lexical, semantic, self.graph_channel],
            graph=self.index.graph,
            corpus=self.index,
            vector=vector,
            options=opts,
        )
