"""The CPython query path: an open index, its DuckDB-backed channels and the query embedder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from oya.core.channels import Channel, make_channels
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.core.results import RetrievalResult
from oya.embedding.embedder import MINILM_ID, MINILM_INT8_ID, Embedder, HashingEmbedder, OnnxMiniLMEmbedder
from oya.errors import OyaError, QueryError
from oya.store.backends import DuckBM25Channel, MatrixVectorChannel
from oya.store.index import Index


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


def index_channels(
    index: Index,
    semantic_reason: str = "",
    backends: tuple[DuckBM25Channel, MatrixVectorChannel] | None = None,
) -> list[Channel]:
    """The CLI's channels over an open index: DuckDB BM25, numpy cosine, the code graph.

    ``semantic_reason`` (the question could not be embedded) reports the semantic channel
    unavailable. ``backends`` reuses a searcher's lexical and semantic backends (the vector
    matrix is loaded once). The eval scripts call this too, so they measure what the CLI runs.
    """
    lexical, semantic = backends or (DuckBM25Channel(index), MatrixVectorChannel(index))
    return make_channels(
        lexical=lexical,
        semantic=None if semantic_reason else semantic,
        graph=index.graph,
        corpus=index,
        semantic_reason=semantic_reason,
    )


class Searcher:
    def __init__(self, index: Index, embedder: Embedder | None) -> None:
        self.index = index
        self.embedder = embedder
        self.backends = (DuckBM25Channel(index), MatrixVectorChannel(index))

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
        given = {"k": k, "include": include, "exclude": exclude}
        opts = replace(options or RetrievalOptions(), **{n: v for n, v in given.items() if v is not None})
        return retrieve(
            question,
            channels=index_channels(self.index, reason if vector is None else "", self.backends),
            graph=self.index.graph,
            corpus=self.index,
            vector=vector,
            options=opts,
        )
