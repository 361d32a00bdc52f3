"""Float32 blobs round-trip; VectorIndex agrees with a brute-force cosine."""

from __future__ import annotations

import struct
from array import array

import pytest
from core_corpus import normalize, vector_index
from hypothesis import given
from hypothesis import strategies as st

from oya.core.vectors import VectorIndex, decode_f32, encode_f32

f32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(st.lists(f32, max_size=64))
def test_encode_decode_round_trip(values: list[float]) -> None:
    blob = encode_f32(values)
    assert len(blob) == 4 * len(values)
    assert list(decode_f32(blob)) == values


@given(st.lists(st.floats(width=32, allow_nan=False), max_size=16))
def test_blob_is_little_endian_float32(values: list[float]) -> None:
    assert encode_f32(values) == struct.pack(f"<{len(values)}f", *values)


def test_decode_rejects_partial_floats() -> None:
    with pytest.raises(ValueError, match="divisible by 4"):
        decode_f32(b"\x00\x00\x80")


def bag_vector(text: str, dim: int = 8) -> list[float]:
    """Deterministic unit vector: letter counts folded into ``dim`` buckets."""
    v = [0.0] * dim
    for ch in text:
        v[ord(ch) % dim] += 1.0
    return normalize(v)


WORDS = ["parse", "token", "graph", "vector", "store", "query", "fusion", "engine", "answer"]


def brute_force(rows: list[tuple[str, list[float]]], q: list[float]) -> list[tuple[str, float]]:
    stored = [(i, list(decode_f32(encode_f32(v)))) for i, v in rows]  # what float32 keeps
    q32 = list(decode_f32(encode_f32(q)))
    scored = [(i, sum(a * b for a, b in zip(v, q32, strict=True))) for i, v in stored]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def test_search_matches_brute_force_on_bag_vectors() -> None:
    rows = [(w, bag_vector(w)) for w in WORDS]
    index = vector_index(rows)
    for q in ("parser", "vectors", "graphs", "zzz"):
        qv = bag_vector(q)
        got = index.search(qv)
        want = brute_force(rows, qv)
        assert [i for i, _ in got] == [i for i, _ in want]
        for (_, a), (_, b) in zip(got, want, strict=True):
            assert a == pytest.approx(b, abs=1e-6)
        assert index.search(qv, k=3) == got[:3]


def test_index_from_a_blob_equals_one_from_floats() -> None:
    rows = [(w, bag_vector(w)) for w in WORDS]
    blob = b"".join(encode_f32(v) for _, v in rows)
    a = VectorIndex([w for w, _ in rows], blob, 8)
    b = vector_index(rows)
    assert a.search(bag_vector("token")) == b.search(bag_vector("token"))
    assert list(a.row(2)) == list(b.row(2))
    assert len(a) == len(WORDS)


def test_ties_break_by_id() -> None:
    index = vector_index([("b", [1.0, 0.0]), ("a", [1.0, 0.0]), ("c", [0.0, 1.0])])
    assert [i for i, _ in index.search([1.0, 0.0])] == ["a", "b", "c"]


def test_shape_errors() -> None:
    with pytest.raises(ValueError, match="does not hold"):
        VectorIndex(["a", "b"], array("f", [1.0, 2.0, 3.0]), 2)
    index = vector_index([("a", [1.0, 0.0])])
    with pytest.raises(ValueError, match="dimension"):
        index.search([1.0, 0.0, 0.0])


def test_empty_index() -> None:
    index = VectorIndex([], array("f"), 1)
    assert len(index) == 0
    assert index.search([1.0]) == []


unit_rows = st.lists(
    st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(any).map(normalize), min_size=1, max_size=20
)


@given(unit_rows, st.lists(st.floats(-1, 1), min_size=4, max_size=4))
def test_search_vs_brute_force_property(vectors: list[list[float]], q: list[float]) -> None:
    rows = [(f"r{i:02d}", v) for i, v in enumerate(vectors)]
    got = vector_index(rows).search(q)
    want = brute_force(rows, q)
    assert sorted(i for i, _ in got) == sorted(i for i, _ in want)
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert a == pytest.approx(b, abs=1e-6)  # same scores in the same order
