"""The browser bundle's document: an index as the data its shards (``oya.site.shards``) are cut from.

Theory of operation:

* ``bundle_document`` gives ``index.json``'s document (everything but the vectors) and
  ``vectors.bin``'s bytes (the unit vectors). The site ships them only as content-hashed shards a
  question fetches on demand (``oya.site.shards``); the whole document is never written to the
  site (a reader would not fetch it; the checks and the parity tests read the shards, or this
  document in memory through ``bench/variants/whole_bundle.py``; ``oya.core.bundle``'s docstring is the format).
* ``index.json`` is column-oriented: one JSON array per field instead of one object per chunk, so
  Pyodide's ``json.loads`` (C code) does the parsing and the Python side only zips arrays. Paths
  are stored once and referenced by position; BM25 postings are per term flat ``[doc, tf, ...]``
  lists with doc numbers delta-encoded (small numbers, decoded lazily per query term).
* The lexical channel indexes exactly ``oya.store.writer.chunk_tokens(chunk)`` (read back from the
  index's ``tokens`` column, where the build stored it, rather than computed again) in chunk order
  ``(path, start_line, id)`` — the same tokens DuckDB's FTS index holds — so the browser's BM25 is
  the CLI's BM25.
* Vectors are quantised to int8 per row: ``q = round(v / max|v| * 127)`` and the row's scale is
  ``1 / ||q||``, so ``q * scale`` is again a unit vector and cosine ranking stays near-identical to
  float32 (measured by tests/site/test_ask_panel.py and bench/site_bench.py). That is 388 bytes a
  chunk instead of 1,536. Layout: ``count`` little-endian float32 scales, then ``count * dim`` int8.
* Deterministic bytes: sorted rows, ``sort_keys`` JSON with fixed separators, no timestamps (the
  index's ``built_at`` is left out), numpy's round-half-to-even quantisation; the shards are
  gzipped deterministically (``gzip_deterministic``).
"""

from __future__ import annotations

import gzip
from collections import Counter
from typing import Any

import numpy as np

from oya.core.answer import first_sentence
from oya.core.bundle_format import (
    BM25_COLUMNS,
    BUNDLE_FORMAT,
    BUNDLE_VERSION,
    CHUNK_COLUMNS,
    EDGE_COLUMNS,
    NODE_COLUMNS,
    VECTORS_FILE,
    columns,
)
from oya.core.results import page_url
from oya.store.export import bm25_doc_lens, bm25_posting_columns, bm25_term_names, graph_rows
from oya.store.index import Index
from oya.store.writer import chunk_tokens

# index meta copied into the bundle (``built_at`` is not: the same content gives the same bytes)
_META_KEYS = ("repo_name", "repo_commit", "model_id", "dim", "schema_version")


def quantize_int8(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``matrix`` as int8 plus a float32 scale per row with ``q * scale`` of unit length."""
    m = np.asarray(matrix, dtype=np.float64)
    peak = np.abs(m).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    q = np.clip(np.round(m / peak * 127.0), -127, 127).astype(np.int8)
    norms = np.sqrt((q.astype(np.float64) ** 2).sum(axis=1))
    scales = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0).astype("<f4")
    return q, scales


def gzip_deterministic(data: bytes) -> bytes:
    """Deterministic gzip: the same bytes in give the same bytes out (mtime 0, no file name)."""
    return gzip.compress(data, compresslevel=6, mtime=0)


def _token_lists(index: Index, chunks: list[Any]) -> list[list[str]]:
    """Each chunk's tokens as the index stored them (``chunk_tokens`` at build time): no re-tokenising."""
    stored = index.chunk_token_lists()  # the same (path, start_line, id) order as ``all_chunks``
    if [i for i, _ in stored] != [c.id for c in chunks]:
        return [chunk_tokens(c) for c in chunks]  # cannot happen with one index; stay correct anyway
    return [tokens for _, tokens in stored]


def _bm25(token_lists: list[list[str]]) -> dict[str, Any]:
    """Per term the flat ``[doc, tf, ...]`` list, doc numbers delta-encoded (see ``decode_postings``).

    The deltas are written as the postings are collected (docs come in ascending order): a
    second pass over ~700k (doc, tf) pairs to encode them cost networkx 0.45 s of a 0.8 s step.
    """
    postings: dict[str, list[int]] = {}
    last: dict[str, int] = {}  # each term's previous doc
    for i, tokens in enumerate(token_lists):
        for tok, tf in Counter(tokens).items():  # Counter counts in C: half the time of a dict loop
            flat = postings.get(tok)
            if flat is None:
                postings[tok] = [i, tf]
            else:
                flat += (i - last[tok], tf)
            last[tok] = i
    terms = sorted(postings)
    return {
        "doc_lens": [len(tokens) for tokens in token_lists],
        "terms": terms,
        "postings": [postings[t] for t in terms],
    }


def _bm25_from_index(index: Index, chunks: list[Any]) -> dict[str, Any]:
    """``_bm25`` of the chunks' stored tokens, from the index's BM25 tables when it has them."""
    if not index.has_fts:
        return _bm25(_token_lists(index, chunks))
    lens = bm25_doc_lens(index)
    if len(lens) != len(chunks):  # cannot happen with one index; stay correct anyway
        return _bm25(_token_lists(index, chunks))
    cols = bm25_posting_columns(index)
    termid, pos, tf = (np.asarray(cols[k], dtype=np.int64) for k in ("termid", "pos", "tf"))
    starts = np.flatnonzero(np.r_[True, termid[1:] != termid[:-1]]) if len(termid) else np.zeros(0, np.int64)
    delta = pos.copy()
    delta[1:] -= pos[:-1]
    delta[starts] = pos[starts]  # a term's first doc is absolute, the rest are deltas
    flat = np.empty(2 * len(pos), dtype=np.int64)
    flat[0::2], flat[1::2] = delta, tf
    values = flat.tolist()
    bounds = [*(2 * starts).tolist(), len(values)]
    names = bm25_term_names(index)
    postings = {
        str(names[t]): values[bounds[i] : bounds[i + 1]] for i, t in enumerate(termid[starts].tolist())
    }
    terms = sorted(postings)
    return {"doc_lens": lens, "terms": terms, "postings": [postings[t] for t in terms]}


def bundle_document(index: Index) -> tuple[dict[str, Any], bytes]:
    """``index.json``'s document and ``vectors.bin``'s bytes (empty without vectors): the data both
    the shards (``oya.site.shards``) are cut from, and the whole-bundle reference of the tests."""
    chunks = index.all_chunks()  # ordered by (path, start_line, id)
    nodes, edges = graph_rows(index)
    node_ids = [n[0] for n in nodes]
    node_pos = {n: i for i, n in enumerate(node_ids)}
    file_paths = sorted({p for p, *_ in index.files()} | {c.path for c in chunks} | {n[4] for n in nodes})
    path_pos = {p: i for i, p in enumerate(file_paths)}
    doc: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "meta": {k: index.meta[k] for k in _META_KEYS if k in index.meta},
        "paths": file_paths,
        "pages": [page_url(p) for p in file_paths],
        "chunks": columns(
            CHUNK_COLUMNS,
            {
                "path": [path_pos[c.path] for c in chunks],
                "kind": [c.kind for c in chunks],
                "title": [c.title for c in chunks],
                "start_line": [c.start_line for c in chunks],
                "end_line": [c.end_line for c in chunks],
                "text": [c.text for c in chunks],
                # no chunk ids or content hashes: the core computes both from path, lines and text
                # (oya.core.bundle), 0.2 MB of incompressible hex in networkx's bundle
                "n_tokens": [c.n_tokens for c in chunks],
                "node": [node_pos[c.node_id] if c.node_id in node_pos else -1 for c in chunks],
            },
        ),
        "bm25": columns(BM25_COLUMNS, _bm25_from_index(index, chunks)),
        "nodes": columns(
            NODE_COLUMNS,
            {
                "id": node_ids,
                "kind": [n[1] for n in nodes],
                "name": [n[2] for n in nodes],
                "qualname": [n[3] for n in nodes],
                "path": [path_pos[n[4]] for n in nodes],
                "start_line": [n[5] for n in nodes],
                "end_line": [n[6] for n in nodes],
                "signature": [n[7] for n in nodes],
                # answers quote only a docstring's first sentence (oya.core.answer), which is idempotent;
                # whole docstrings were a second copy of chunk text (networkx: 0.47 MB gzipped)
                "docstring": [first_sentence(n[8]) if n[8] else "" for n in nodes],
                "centrality": [n[9] for n in nodes],
            },
        ),
        "edges": columns(
            EDGE_COLUMNS,
            {
                "source": [node_pos[e[0]] for e in edges],
                "target": [node_pos[e[1]] for e in edges],
                "kind": [e[2] for e in edges],
                "confidence": [e[3] for e in edges],
            },
        ),
    }

    origins = index.file_origins()
    if origins:  # the files that are not source rank after it in the browser too (oya.core.kinds)
        listed = sorted(p for p in origins if p in path_pos)
        doc["origins"] = {"path": [path_pos[p] for p in listed], "origin": [origins[p] for p in listed]}

    chunk_pos = {c.id: i for i, c in enumerate(chunks)}
    blobs = sorted(
        ((chunk_pos[cid], blob) for cid, blob in index.embedding_blobs() if cid in chunk_pos),
        key=lambda item: item[0],
    )
    dim = index.dim
    vec_bytes = b""
    if blobs and dim > 0:
        matrix = np.frombuffer(b"".join(b for _, b in blobs), dtype="<f4").reshape(len(blobs), dim)
        q, scales = quantize_int8(matrix)
        vec_bytes = scales.astype("<f4").tobytes() + q.tobytes()
        doc["vectors"] = {
            "file": VECTORS_FILE,
            "dtype": "int8",
            "dim": dim,
            "count": len(blobs),
            "rows": [pos for pos, _ in blobs],  # chunk position of each row
            "scales_offset": 0,
            "data_offset": 4 * len(blobs),
        }
    else:
        doc["vectors"] = None
    return doc, vec_bytes


def bundle_counts(doc: dict[str, Any]) -> dict[str, str | int]:
    """What the site's ``manifest.json`` says of its bundle beside the shards: format and sizes."""
    return {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "chunks": len(doc["chunks"]["text"]),
        "nodes": len(doc["nodes"]["id"]),
        "edges": len(doc["edges"]["source"]),
    }
