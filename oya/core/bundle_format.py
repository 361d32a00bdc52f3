"""The bundle's format, shared by its writer (``oya.site.bundle``) and its reader (``oya.core.bundle``).

The names of every column table live here (``CHUNK_COLUMNS``, ``NODE_COLUMNS``, ...): the
writer builds each table with ``columns`` (a missing or unknown column is a ``BundleError``
before anything is written), the reader reads rows by the same tuples. The format itself is
described in ``oya.core.bundle``.
"""

from __future__ import annotations

import gzip
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate
from typing import Any

from oya.core.bm25 import BM25Index
from oya.core.records import Chunk, chunk_id, content_hash

BUNDLE_FORMAT = "oya-bundle"
BUNDLE_VERSION = 2
VECTORS_FILE = "vectors.bin.gz"
_GZIP_MAGIC = b"\x1f\x8b"


CHUNK_COLUMNS = ("path", "kind", "title", "start_line", "end_line", "text", "n_tokens", "node")
NODE_COLUMNS = (
    "id", "kind", "name", "qualname", "path", "start_line", "end_line", "signature", "docstring", "centrality",
)  # fmt: skip
EDGE_COLUMNS = ("source", "target", "kind", "confidence")
BM25_COLUMNS = ("doc_lens", "terms", "postings")


class BundleError(ValueError):
    """The bundle is not one this core can read (wrong format, version, or inconsistent arrays)."""


def columns(names: Sequence[str], t: Mapping[str, Any]) -> dict[str, Any]:
    """``t`` checked to hold exactly the columns ``names`` (the writer's side of the format)."""
    missing = [n for n in names if n not in t]
    unknown = [n for n in t if n not in names]
    if missing or unknown:
        raise BundleError(f"bundle table columns: missing {missing}, unknown {unknown}")
    return dict(t)


def get_table(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The column table ``name`` of a bundle document (a ``BundleError`` when absent)."""
    t = doc.get(name)
    if not isinstance(t, dict):
        raise BundleError(f"bundle table {name!r} is missing")
    return t


# -- postings ----------------------------------------------------------------------------------
def decode_postings(flat: Sequence[int]) -> list[tuple[int, int]]:
    """``[(doc, tf), ...]`` from a flat ``[doc, tf, ...]`` list whose doc numbers are delta-encoded."""
    end = len(flat) // 2 * 2  # an odd last number is no pair
    return list(zip(accumulate(flat[0:end:2]), flat[1:end:2], strict=True))  # a loop in C


class LazyBM25Index(BM25Index):
    """A ``BM25Index`` whose postings are decoded per term on first use; scores are identical."""

    __slots__ = ("_raw",)

    def __init__(self, doc_ids: Sequence[str], doc_lens: Sequence[int], raw: Mapping[str, list[int]]) -> None:
        super().__init__(doc_ids, doc_lens, {})
        self._raw = dict(raw)

    def _materialize(self, terms: Iterable[str]) -> None:
        for term in terms:
            flat = self._raw.pop(term, None)
            if flat is not None:
                self.postings[term] = decode_postings(flat)

    def idf(self, term: str) -> float:
        self._materialize((term,))
        return super().idf(term)

    def scores(self, query_tokens: Iterable[str]) -> dict[int, float]:
        tokens = list(query_tokens)
        self._materialize(tokens)
        return super().scores(tokens)


# -- vectors -----------------------------------------------------------------------------------
def dequantize(int8_rows: bytes, scales: Sequence[float], dim: int) -> array[float]:
    """The float32 matrix ``row * scale`` of int8 rows (row-major)."""
    q = memoryview(int8_rows).cast("b")
    if len(q) != len(scales) * dim:
        raise BundleError(f"{len(q)} int8 values do not hold {len(scales)} rows of {dim}")
    out = array("f")
    for i, s in enumerate(scales):
        out.extend([v * s for v in q[i * dim : (i + 1) * dim]])
    return out


# -- decoding ---------------------------------------------------------------------------------
def column(t: Mapping[str, Any], name: str, n: int | None) -> list[Any]:
    col = t.get(name)
    if not isinstance(col, list):
        raise BundleError(f"bundle column {name!r} is missing")
    if n is not None and len(col) != n:
        raise BundleError(f"bundle column {name!r} has {len(col)} values, expected {n}")
    return col


def rows(t: Mapping[str, Any], names: Sequence[str], n: int) -> Iterator[tuple[Any, ...]]:
    """The named columns of ``t`` (each ``n`` long), zipped into rows."""
    return zip(*(column(t, name, n) for name in names), strict=True)


def inflate(data: bytes) -> bytes:
    """``data`` gunzipped when it is gzip (the bundle's files on disk), else as it is."""
    return gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data


def decode_origins(doc: Mapping[str, Any], paths: list[str]) -> dict[str, str]:
    """Path -> origin of the files that are not source (absent in a bundle of a repository with
    none, and in bundles written before origins were kept)."""
    table = doc.get("origins")
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise BundleError("the bundle's origins are not a table")
    at = column(table, "path", None)
    return {paths[i]: str(o) for i, o in zip(at, column(table, "origin", len(at)), strict=True)}


def decode_chunks(ct: Mapping[str, Any], paths: list[str], node_ids: list[str]) -> list[Chunk]:
    """Chunks, their ids and content hashes computed by the indexer's own formulas."""
    return [
        Chunk(
            chunk_id(paths[p], start, end, text),
            paths[p],
            kind,
            title,
            start,
            end,
            text,
            content_hash(text),
            ntok,
            node_ids[node] if node >= 0 else None,
        )
        for p, kind, title, start, end, text, ntok, node in rows(
            ct, CHUNK_COLUMNS, len(column(ct, "text", None))
        )
    ]


def decode_vectors(
    vt: Mapping[str, Any] | None, vectors: bytes | None, ids: list[str]
) -> tuple[list[str], int, list[float], bytes, tuple[int, int] | None]:
    """``(vector ids, dim, scales, int8 data, (scales offset, data offset))``; empty without vectors."""
    if vt is None or vectors is None:
        return [], 0, [], b"", None
    if vt.get("dtype") != "int8":
        raise BundleError(f"vector dtype {vt.get('dtype')!r} is not supported (int8 is)")
    dim = int(vt["dim"])
    count = int(vt["count"])
    rows: list[int] = column(vt, "rows", count)
    s_off = int(vt["scales_offset"])
    d_off = int(vt["data_offset"])
    if len(vectors) < d_off + count * dim:
        raise BundleError(f"vectors.bin holds {len(vectors)} bytes, expected {d_off + count * dim}")
    scale_arr = array("f")
    scale_arr.frombytes(vectors[s_off : s_off + 4 * count])
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI
        scale_arr.byteswap()
    data = bytes(vectors[d_off : d_off + count * dim])
    return [ids[r] for r in rows], dim, scale_arr.tolist(), data, (s_off, d_off)
