"""Unit vectors stored as little-endian float32 blobs, and cosine top-k over them.

Theory of operation: vectors are normalised when they are built (the embedder does it), so
cosine similarity is a dot product. A matrix is one contiguous ``array('f')`` of
``n * dim`` floats; rows are sliced through a ``memoryview`` without copying. The kernel is
``math.sumprod`` where it exists (Python 3.12+, which Pyodide has), else ``sum(map(mul))``.
Ties are broken by id, as in every other channel.
"""

from __future__ import annotations

import math
import operator
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence

_sumprod: Callable[[Iterable[float], Iterable[float]], float] = getattr(
    math, "sumprod", lambda a, b: sum(map(operator.mul, a, b))
)


def encode_f32(values: Sequence[float]) -> bytes:
    """Little-endian float32 bytes of ``values``."""
    arr = array("f", values)
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI
        arr.byteswap()
    return arr.tobytes()


def decode_f32(blob: bytes) -> array[float]:
    """Inverse of :func:`encode_f32`."""
    if len(blob) % 4:
        raise ValueError(f"a float32 blob has a length divisible by 4; got {len(blob)}")
    arr = array("f")
    arr.frombytes(blob)
    if sys.byteorder == "big":  # pragma: no cover
        arr.byteswap()
    return arr


class VectorIndex:
    """Row-major float32 matrix of unit vectors with an id per row."""

    __slots__ = ("ids", "dim", "_data", "_rows")

    def __init__(self, ids: Sequence[str], data: array[float] | bytes, dim: int) -> None:
        if isinstance(data, bytes | bytearray | memoryview):
            data = decode_f32(bytes(data))
        if dim <= 0 or len(data) != len(ids) * dim:
            raise ValueError(f"matrix of {len(data)} floats does not hold {len(ids)} rows of {dim}")
        self.ids = list(ids)
        self.dim = dim
        self._data = data
        view = memoryview(data)
        self._rows = [view[i * dim : (i + 1) * dim] for i in range(len(ids))]

    def __len__(self) -> int:
        return len(self.ids)

    def row(self, i: int) -> Sequence[float]:
        return self._rows[i]

    def similarities(self, query: Sequence[float]) -> list[float]:
        if len(query) != self.dim:
            raise ValueError(f"query has dimension {len(query)}, index has {self.dim}")
        q = array("f", query)
        return [_sumprod(q, r) for r in self._rows]

    def search(self, query: Sequence[float], k: int | None = None) -> list[tuple[str, float]]:
        """Best rows first as ``(id, cosine)``; ties by id."""
        ids = self.ids
        scored = [(ids[i], float(s)) for i, s in enumerate(self.similarities(query))]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored if k is None else scored[:k]
