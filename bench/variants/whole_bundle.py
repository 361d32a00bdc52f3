"""The whole bundle's reader: the reference a sharded answer must equal (issue 26's loser).

Theory of operation: until issue 26 the site shipped the bundle whole (``index.json.gz``,
``vectors.bin.gz``) and the browser read it with ``decode_bundle``. The site now ships only the
shards cut from the same document (``oya.site.shards``), read by ``oya.core.shards.open_shards``;
this reader stays outside the shipped core as the independent reference of the parity tests
(tests/site/test_shards.py, tests/site/test_stdlib_trim.py in Pyodide) and of
``bench/shard_bench.py``: every sharded answer must equal the whole document's. The document's
format is ``oya.site.bundle.bundle_document``'s (``oya.core.bundle_format`` holds its columns).
Pure standard library over the core, so Pyodide can run it too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from oya.core.bundle import Bundle
from oya.core.bundle_format import (
    BUNDLE_FORMAT,
    BUNDLE_VERSION,
    EDGE_COLUMNS,
    NODE_COLUMNS,
    BundleError,
    LazyBM25Index,
    column,
    decode_chunks,
    decode_origins,
    decode_vectors,
    get_table,
    inflate,
    rows,
)
from oya.core.graph import CodeGraph
from oya.core.records import Edge, Node


def decode_graph(doc: Mapping[str, Any], paths: list[str]) -> tuple[list[str], CodeGraph]:
    """The node ids (in bundle order) and the code graph of ``nodes`` and ``edges``."""
    nt = get_table(doc, "nodes")
    node_ids: list[str] = column(nt, "id", None)
    nodes = [
        Node(nid, kind, name, qual, paths[p], start, end, sig, docstr, float(cent))
        for nid, kind, name, qual, p, start, end, sig, docstr, cent in rows(nt, NODE_COLUMNS, len(node_ids))
    ]
    et = get_table(doc, "edges")
    edges = [
        Edge(node_ids[s], node_ids[t], kind, float(conf))
        for s, t, kind, conf in rows(et, EDGE_COLUMNS, len(column(et, "source", None)))
    ]
    return node_ids, CodeGraph(nodes, edges)


def decode_bundle(index_json: str | bytes, vectors: bytes | None = None) -> Bundle:
    """A :class:`Bundle` from ``index.json`` and ``vectors.bin`` (None: no vectors), gzipped or not."""
    if isinstance(index_json, bytes):
        index_json = inflate(index_json)
    doc = json.loads(index_json)
    if not isinstance(doc, dict) or doc.get("format") != BUNDLE_FORMAT:
        raise BundleError("not an oya bundle (index.json lacks format 'oya-bundle')")
    if doc.get("version") != BUNDLE_VERSION:
        raise BundleError(f"bundle version {doc.get('version')!r}; this core reads version {BUNDLE_VERSION}")
    paths: list[str] = column(doc, "paths", None)
    pages = dict(zip(paths, column(doc, "pages", len(paths)), strict=True))
    node_ids, graph = decode_graph(doc, paths)
    chunks = decode_chunks(get_table(doc, "chunks"), paths, node_ids)
    ids = [c.id for c in chunks]
    bt = get_table(doc, "bm25")
    terms: list[str] = column(bt, "terms", None)
    bm25 = LazyBM25Index(
        ids,
        column(bt, "doc_lens", len(ids)),
        dict(zip(terms, column(bt, "postings", len(terms)), strict=True)),
    )
    vector_ids, dim, scales, data, offsets = decode_vectors(
        doc.get("vectors"), inflate(vectors) if vectors is not None else None, ids
    )
    return Bundle(
        origins=decode_origins(doc, paths),
        meta=doc.get("meta") or {},
        chunks=chunks,
        bm25=bm25,
        graph=graph,
        pages=pages,
        vector_ids=vector_ids,
        vector_dim=dim,
        vector_scales=scales,
        vector_data=data,
        vector_offsets=offsets,
    )
