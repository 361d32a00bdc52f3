"""A static embedding: a text's vector is the normalised mean of its WordPiece tokens' rows.

Theory of operation: the model (``bench.variants.static.static_model`` distils it from
all-MiniLM-L6-v2, model2vec's recipe) is one row per token of MiniLM's vocabulary, stored as int8
values and one float32 scale per row. A text is cut into token ids by ``.wordpiece`` (at most
``MAX_TOKENS``, ``[UNK]`` left out, as model2vec does), the rows of those ids are summed (each
occurrence counts) and the sum scaled to unit length. No runtime, no arithmetic beyond that, and
pure standard library, so the same code could run in the browser's Pyodide (issue 25 measured the
variant and it lost to MiniLM: it lives in bench only, docs/DECISIONS.md).
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Sequence
from typing import Protocol

from bench.variants.static.wordpiece import WordPiece

MAX_TOKENS = 512  # model2vec's default; a longer text's tail adds little to a mean


class RowSource(Protocol):
    def row(self, token_id: int) -> tuple[memoryview, float] | None:
        """The token's int8 values (a signed memoryview) and scale, or None when it has no row."""
        ...


def decode_scales(blob: bytes) -> array[float]:
    scales = array("f")
    scales.frombytes(blob)
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI
        scales.byteswap()
    return scales


class TableRows:
    """Rows ``first .. first + count - 1`` of a table: int8 values row by row, float32 scales."""

    def __init__(self, values: bytes, scales: bytes, dim: int, first: int = 0) -> None:
        self.dim = dim
        self.first = first
        self._values = memoryview(values).cast("b")
        self._scales = decode_scales(scales)
        if len(self._values) != len(self._scales) * dim:
            raise ValueError(f"{len(self._values)} int8 values do not make {len(self._scales)} rows of {dim}")

    def __len__(self) -> int:
        return len(self._scales)

    def row(self, token_id: int) -> tuple[memoryview, float] | None:
        i = token_id - self.first
        if not 0 <= i < len(self._scales):
            return None
        return self._values[i * self.dim : (i + 1) * self.dim], self._scales[i]


class StaticModel:
    """A vocabulary, its rows and how a text becomes a unit vector."""

    def __init__(self, vocab: Sequence[str], dim: int, rows: RowSource, max_tokens: int = MAX_TOKENS) -> None:
        self.tokenizer = WordPiece(vocab)
        self.dim = dim
        self.rows = rows
        self.max_tokens = max_tokens

    def token_ids(self, text: str) -> list[int]:
        """The ids whose rows make ``text``'s vector: ``[UNK]`` dropped, at most ``max_tokens``."""
        unk = self.tokenizer.unk_id
        return [i for i in self.tokenizer.encode(text, self.max_tokens) if i != unk]

    def embed(self, text: str) -> list[float] | None:
        """The unit vector of ``text``; None when no token has a row (nothing to average)."""
        return mean_vector((self.rows.row(i) for i in self.token_ids(text)), self.dim)


def mean_vector(rows: Iterable[tuple[memoryview, float] | None], dim: int) -> list[float] | None:
    """Sum of dequantised rows (int8 value times its row's scale, in float64), unit length."""
    acc = [0.0] * dim
    seen = False
    for found in rows:
        if found is None:
            continue
        values, scale = found
        seen = True
        for j, v in enumerate(values):
            acc[j] += v * scale
    norm = math.sqrt(math.fsum(a * a for a in acc))
    if not seen or norm == 0.0:
        return None
    return [a / norm for a in acc]
