"""The bundle's column tables: one list of names for the writer and the reader; a gap is a BundleError."""

from __future__ import annotations

import json

import pytest

from bench.variants.whole_bundle import decode_bundle
from oya.core.bundle_format import (
    BUNDLE_FORMAT,
    BUNDLE_VERSION,
    CHUNK_COLUMNS,
    EDGE_COLUMNS,
    NODE_COLUMNS,
    BundleError,
    columns,
    decode_postings,
)


def test_columns_takes_exactly_the_named_columns() -> None:
    table = {name: [] for name in EDGE_COLUMNS}
    assert columns(EDGE_COLUMNS, table) == table
    with pytest.raises(BundleError, match=r"missing \['confidence'\]"):
        columns(EDGE_COLUMNS, {n: [] for n in EDGE_COLUMNS[:-1]})
    with pytest.raises(BundleError, match=r"unknown \['weight'\]"):
        columns(EDGE_COLUMNS, {**table, "weight": []})


def tiny_bundle() -> dict[str, object]:
    return {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "meta": {},
        "paths": ["a.py"],
        "pages": ["files/a.py.html"],
        "chunks": {
            **{n: [] for n in CHUNK_COLUMNS},
            "path": [0],
            "kind": ["code"],
            "title": ["f"],
            "start_line": [1],
            "end_line": [1],
            "text": ["def f(): pass"],
            "n_tokens": [4],
            "node": [0],
        },
        "bm25": {"doc_lens": [3], "terms": ["f"], "postings": [[0, 1]]},
        "nodes": {
            **{n: [] for n in NODE_COLUMNS},
            "id": ["a.py::f"],
            "kind": ["function"],
            "name": ["f"],
            "qualname": ["f"],
            "path": [0],
            "start_line": [1],
            "end_line": [1],
            "signature": ["def f()"],
            "docstring": [""],
            "centrality": [0.0],
        },
        "edges": {n: [] for n in EDGE_COLUMNS},
        "vectors": None,
    }


def test_the_reader_reads_the_shared_columns() -> None:
    bundle = decode_bundle(json.dumps(tiny_bundle()))
    assert [c.title for c in bundle.chunks] == ["f"] and "a.py::f" in bundle.graph.nodes
    assert bundle.fetch_depth() == 100 and bundle.fetch_depth(k=50, include=["a.py"]) == 750


@pytest.mark.parametrize(
    ("table", "column"), [("nodes", "centrality"), ("chunks", "node"), ("edges", "kind")]
)
def test_a_missing_column_is_a_bundle_error(table: str, column: str) -> None:
    doc = tiny_bundle()
    del doc[table][column]  # type: ignore[attr-defined]
    with pytest.raises(BundleError, match=f"column {column!r} is missing"):
        decode_bundle(json.dumps(doc))


@pytest.mark.parametrize("table", ["nodes", "edges", "chunks", "bm25"])
def test_a_missing_table_is_a_bundle_error(table: str) -> None:
    doc = tiny_bundle()
    del doc[table]
    with pytest.raises(BundleError, match=f"table {table!r} is missing"):
        decode_bundle(json.dumps(doc))


def test_postings_decode_from_doc_differences() -> None:
    assert decode_postings([3, 1, 2, 5, 0, 2]) == [(3, 1), (5, 5), (5, 2)]
    assert decode_postings([4, 1, 7]) == [(4, 1)]  # an odd last number is no pair
    assert decode_postings([]) == []
