"""``StaticEmbedder``: the static model as an ``oya.embedding.embedder.Embedder`` for the bench.

Theory of operation: the model is distilled once per machine (``static_model``) and read as one
int8 table with a float32 scale per row. A text's ids come from the pure-Python tokenizer
(``static_embed.StaticModel.token_ids``); their rows are summed in float64 by numpy (the pure
``StaticModel.embed`` arithmetic in another order, tested alike) and scaled to unit length. The
model id names the width, the SIF weight and the recipe key, so the embedding cache never mixes
vectors of two recipes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

STATIC_PREFIX = "oya-static-minilm-"


class StaticEmbedder:
    """The static model distilled from MiniLM (``static_model``), ``dims`` wide."""

    def __init__(self, dims: int = 256, cache_dir: Path | None = None, sif: float | None = 1e-4) -> None:
        from bench.variants.static.static_model import recipe_key

        self.dim = dims
        self.sif = sif
        self.cache_dir = cache_dir
        self.model_id = (
            f"{STATIC_PREFIX}{dims}" + ("" if sif == 1e-4 else f"-sif{sif}") + f" {recipe_key(dims, sif)}"
        )
        self._model: Any = None
        self._table: Any = None

    def load(self) -> tuple[Any, Any]:
        if self._model is None:
            import numpy as np

            from bench.variants.static.static_embed import StaticModel, TableRows
            from bench.variants.static.static_model import static_model

            files = static_model(self.dim, self.sif, self.cache_dir)
            values, scales = files.values, files.scales
            self._model = StaticModel(files.vocab, self.dim, TableRows(values, scales, self.dim))
            table = np.frombuffer(values, dtype=np.int8).reshape(-1, self.dim).astype(np.float64)
            self._table = table * np.frombuffer(scales, dtype="<f4").astype(np.float64)[:, None]
        return self._model, self._table

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        import numpy as np

        model, table = self.load()
        out: list[bytes] = []
        for text in texts:
            ids = model.token_ids(text)
            vec = table[ids].sum(axis=0) if ids else np.zeros(self.dim)
            norm = float(np.sqrt(np.dot(vec, vec)))
            # no token with a row (an empty text): a zero vector, which matches nothing
            out.append((vec / norm if norm > 0 else vec).astype("<f4").tobytes())
        return out
