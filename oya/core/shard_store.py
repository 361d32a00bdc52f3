"""Shard names, the shard store and fetchers: the transport layer of the sharded bundle
(``oya.core.shards`` says what a shard holds and how a question reads them).

Theory of operation: a shard is named ``<kind>-<16 hex of sha256 of its bytes before
gzip>.json.gz`` (vectors ``.bin.gz``); ``ShardStore`` asks an injected ``fetch(name) -> bytes``
only for names of that form, inflates what it gets (as stored, or already inflated by a host
that serves ``.gz`` with ``Content-Encoding: gzip``) and checks it against the name. A fetcher
may raise ``ShardsMissing`` for shards it does not hold yet (the browser's: it fetches them all
at once and asks again); ``ShardStore.tables`` asks for a stage's shards in one round, so one
``ShardsMissing`` names them all.
"""

from __future__ import annotations

import binascii
import hashlib
import json
import os
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import Any

from oya.core.bundle_format import BundleError, column, decode_vectors, inflate
from oya.core.channels import DataMissing

SHARD_KINDS = ("manifest", "terms", "chunks", "graph", "nodes", "vectors")

Fetch = Callable[[str], bytes]
_NAME = re.compile(r"(manifest|terms|chunks|graph|nodes|vectors)-([0-9a-f]{16})\.(json|bin)\.gz")


def term_bucket(term: str, buckets: int) -> int:
    """The bucket of ``term`` among ``buckets``: CRC-32 of its UTF-8 bytes, modulo ``buckets``."""
    return zlib.crc32(term.encode("utf-8")) % buckets


def deltas(values: Sequence[int]) -> list[int]:
    """``values`` as differences from the previous one (the first from 0): sorted or clustered
    positions gzip several times smaller so (``undelta`` reads them)."""
    return [b - a for a, b in zip([0, *values][: len(values)], values, strict=True)]


def undelta(diffs: Sequence[int]) -> list[int]:
    """The values ``deltas`` encoded (a running sum in C: opening reads ~400k of them)."""
    return list(accumulate(map(int, diffs)))


def file_deltas(files: Sequence[int], values: Sequence[int]) -> list[int]:
    """``values`` as differences from the previous value of the same file (the first from 0);
    ``files`` (each value's file position) runs in blocks, as chunks in bundle order do."""
    out: list[int] = []
    prev_file, prev = None, 0
    for f, v in zip(files, values, strict=True):
        if f != prev_file:
            prev_file, prev = f, 0
        out.append(v - prev)
        prev = v
    return out


def file_undelta(files: Sequence[int], diffs: Sequence[int]) -> list[int]:
    """The values ``file_deltas`` encoded."""
    out: list[int] = []
    prev_file, total = None, 0
    for f, d in zip(files, diffs, strict=True):
        if f != prev_file:
            prev_file, total = f, 0
        total += int(d)
        out.append(total)
    return out


def same_text(texts: Sequence[str]) -> dict[str, list[int]]:
    """The positions whose text repeats an earlier one's (``at``, as differences) and that earlier
    first position (``of``): the classes of equal text, sparse."""
    first: dict[str, int] = {}
    at: list[int] = []
    of: list[int] = []
    for i, text in enumerate(texts):
        j = first.setdefault(text, i)
        if j != i:
            at.append(i)
            of.append(j)
    return {"at": deltas(at), "of": of}


_ID_HEX = re.compile(r"[0-9a-f]{16}")  # records.chunk_id: 16 lower-case hex digits


def pack_ids(ids: Sequence[str]) -> str:
    """Chunk ids as one base64 string of their 8 bytes each: gzipped ~8.1 bytes an id, the
    hashes' own size, where a JSON list of hex strings takes 10.3 (sympy's 50k ids: 516 -> 405 kB)."""
    if not all(_ID_HEX.fullmatch(i) for i in ids):
        raise ValueError("a chunk id is not 16 lower-case hex digits")
    return binascii.b2a_base64(bytes.fromhex("".join(ids)), newline=False).decode("ascii")


def unpack_ids(packed: Any, n: int) -> list[str]:
    """``pack_ids``'s ``n`` ids, checked."""
    if not isinstance(packed, str):
        raise BundleError("the manifest's chunk ids are missing")
    try:
        raw = binascii.a2b_base64(packed, strict_mode=True)
    except binascii.Error as err:
        raise BundleError(f"the manifest's chunk ids are not base64: {err}") from None
    if len(raw) != 8 * n:
        raise BundleError(f"the manifest holds {len(raw) // 8} chunk ids for {n} chunks")
    hexed = raw.hex()
    return [hexed[i : i + 16] for i in range(0, len(hexed), 16)]


def wide_positions(ct: Mapping[str, Any], n: int) -> set[int] | None:
    """The positions of the chunks whose indexed text is not all ASCII (None: the manifest does
    not say, so postings prove nothing)."""
    if "wide" not in ct:
        return None
    wide = undelta(column(ct, "wide", None))
    if any(not 0 <= p < n for p in wide):
        raise BundleError("the manifest's table of non-ASCII chunks names positions out of range")
    return set(wide)


def repeated_texts(t: Mapping[str, Any], n: int) -> dict[int, int]:
    """``same_text``'s table, read back, as position -> the first position with that text, checked."""
    at = undelta(column(t, "at", None))
    of: list[int] = column(t, "of", len(at))
    if any(not 0 <= j < i < n for i, j in zip(at, of, strict=True)):
        raise BundleError("the manifest's table of repeated chunk texts names positions out of order")
    return dict(zip(at, of, strict=True))


def is_shard_name(name: str) -> bool:
    """Whether ``name`` has the form of a shard's file name (``<kind>-<16 hex>.json.gz``)."""
    return _NAME.fullmatch(name) is not None


def shard_name(kind: str, payload: bytes, ext: str = "json") -> str:
    """The content-hashed file name of a shard whose bytes (before gzip) are ``payload``."""
    if kind not in SHARD_KINDS:
        raise ValueError(f"unknown shard kind {kind!r}; expected one of {', '.join(SHARD_KINDS)}")
    return f"{kind}-{hashlib.sha256(payload).hexdigest()[:16]}.{ext}.gz"


class ShardsMissing(DataMissing):
    """The fetcher does not hold these shards yet: fetch them (all at once) and ask again."""


class ShardStore:
    """Shards through the injected ``fetch``: names checked, bytes checked against the name."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch

    def raw(self, name: str) -> bytes:
        """The bytes of shard ``name``, inflated (as stored, or as a host that inflated them sent
        them), verified against the hash in its name."""
        m = _NAME.fullmatch(name)
        if m is None:
            raise BundleError(f"not a shard name: {name[:80]!r}")
        data = inflate(self._fetch(name))
        if hashlib.sha256(data).hexdigest()[:16] != m.group(2):
            raise BundleError(f"shard {name} does not hold the bytes its name hashes")
        return data

    def table(self, name: str) -> dict[str, Any]:
        """Shard ``name`` decoded from gzipped JSON (it must be an object)."""
        doc = json.loads(self.raw(name))
        if not isinstance(doc, dict):
            raise BundleError(f"shard {name} is not a table")
        return doc

    def tables(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """Every shard of ``names``, asked for in one round: when the fetcher lacks some (it raises
        ``ShardsMissing``), one ``ShardsMissing`` lists them all, so they can be fetched together."""
        got: list[dict[str, Any]] = []
        missing: list[str] = []
        for name in names:
            try:
                got.append(self.table(name))
            except ShardsMissing as exc:
                missing.extend(exc.names)
        if missing:
            raise ShardsMissing(missing)
        return got


def check_name(name: str, kind: str) -> str:
    """``name`` when it is a shard name of ``kind`` (the manifest is untrusted input too)."""
    m = _NAME.fullmatch(name) if isinstance(name, str) else None
    if m is None or m.group(1) != kind:
        raise BundleError(f"not a {kind} shard name: {str(name)[:80]!r}")
    return name


def folder_fetch(folder: str | os.PathLike[str]) -> Fetch:
    """A fetcher reading shards from ``folder`` (CPython; the browser fetches over HTTP)."""
    root = os.fspath(folder)

    def fetch(name: str) -> bytes:
        with open(os.path.join(root, name), "rb") as fh:
            return fh.read()

    return fetch


def manifest_vectors(
    store: ShardStore, vt: Any, ids: list[str]
) -> tuple[list[str], int, tuple[int, int] | None, Callable[[], tuple[Sequence[float], bytes]] | None]:
    """The vector ids, width and layout the manifest lists, and a loader of the vectors shard."""
    if not isinstance(vt, dict):
        return [], 0, None, None
    vt = {**vt, "rows": undelta(column(vt, "rows", int(vt["count"])))}
    vector_ids = [ids[r] for r in column(vt, "rows", int(vt["count"]))]
    offsets = (int(vt["scales_offset"]), int(vt["data_offset"]))
    return (
        vector_ids,
        int(vt["dim"]),
        offsets,
        _vector_loader(store, vt, listed_name(vt, "file", "vectors"), ids),
    )


def _vector_loader(
    store: ShardStore, vt: Mapping[str, Any], name: str, ids: list[str]
) -> Callable[[], tuple[Sequence[float], bytes]]:
    """Fetches and decodes the vectors shard when first called (the first pure-Python semantic search)."""

    def load() -> tuple[Sequence[float], bytes]:
        _, _, scales, data, _ = decode_vectors(vt, store.raw(name), ids)
        return scales, data

    return load


def listed_name(t: Mapping[str, Any], key: str, kind: str) -> str:
    name = t.get(key)
    if not isinstance(name, str):
        raise BundleError(f"the shard manifest lacks {key!r}")
    return check_name(name, kind)
