"""Weighted Reciprocal Rank Fusion against the formula by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oya.core.fusion import fuse

RRF_K = 60  # the paper's k, used here as any k


def test_formula_by_hand() -> None:
    fused = fuse({"lexical": ["a", "b", "c"], "semantic": ["c", "a"]}, None, k=RRF_K)
    scores = {f.id: f.score for f in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert [f.id for f in fused] == ["a", "c", "b"]
    a = next(f for f in fused if f.id == "a")
    assert a.channels == ("lexical", "semantic") and a.ranks == (1, 2)


def test_weights_scale_each_channel() -> None:
    fused = fuse({"lexical": ["a"], "semantic": ["b"]}, {"lexical": 0.5, "semantic": 2.0}, k=RRF_K)
    assert [(f.id, f.score) for f in fused] == [("b", pytest.approx(2 / 61)), ("a", pytest.approx(0.5 / 61))]


def test_missing_weight_is_one_and_zero_weight_drops_channel() -> None:
    fused = fuse({"x": ["a"], "y": ["b"]}, {"y": 0.0}, k=RRF_K)
    assert [(f.id, f.score) for f in fused] == [("a", pytest.approx(1 / 61))]


def test_found_by_several_channels_beats_single_channel_top() -> None:
    fused = fuse(
        {"lexical": ["solo", "both"], "semantic": ["x", "both"], "graph": ["y", "both"]}, None, k=RRF_K
    )
    assert fused[0].id == "both"


def test_ties_break_by_id() -> None:
    fused = fuse({"lexical": ["b", "x"], "semantic": ["a", "y"]}, None, k=RRF_K)
    assert [f.id for f in fused] == ["a", "b", "x", "y"]


def test_duplicates_in_a_channel_count_once() -> None:
    fused = fuse({"lexical": ["a", "a", "b"]}, None, k=RRF_K)
    assert [(f.id, f.ranks) for f in fused] == [("a", (1,)), ("b", (2,))]


def test_custom_k_and_bad_k() -> None:
    assert fuse({"c": ["a"]}, None, k=1)[0].score == pytest.approx(0.5)
    with pytest.raises(ValueError, match="positive"):
        fuse({"c": ["a"]}, None, k=0)


def test_empty() -> None:
    assert fuse({}, None, k=RRF_K) == []
    assert fuse({"lexical": []}, None, k=RRF_K) == []


ids = st.lists(st.sampled_from("abcdefghij"), max_size=10)


@given(st.dictionaries(st.sampled_from(["lexical", "semantic", "graph"]), ids))
def test_fusion_properties(rankings: dict[str, list[str]]) -> None:
    fused = fuse(rankings, None, k=RRF_K)
    assert [f.id for f in fused] == sorted(
        {d for r in rankings.values() for d in r},
        key=lambda d: (-next(f.score for f in fused if f.id == d), d),
    )
    for f in fused:
        expected = 0.0
        for ranking in rankings.values():
            distinct = list(dict.fromkeys(ranking))
            if f.id in distinct:
                expected += 1 / (RRF_K + distinct.index(f.id) + 1)
        assert f.score == pytest.approx(expected)
        assert len(f.channels) == len(f.ranks) >= 1
