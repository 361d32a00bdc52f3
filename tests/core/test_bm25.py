"""BM25: a hand-computed score, the DuckDB-identical formula's invariants, and tie order."""

from __future__ import annotations

import math

import pytest
from core_corpus import bm25_index
from hypothesis import given
from hypothesis import strategies as st

from oya.core.bm25 import K1, B, BM25Index

DOCS = [
    ("a", ["apple", "banana", "apple"]),
    ("b", ["banana", "cherry"]),
    ("c", ["cherry", "cherry", "cherry", "durian"]),
]


def hand_score(tf: int, df: int, n: int, dl: int, avgdl: float) -> float:
    idf = math.log((n - df + 0.5) / (df + 0.5) + 1.0)
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))


def test_score_matches_hand_computation() -> None:
    index = bm25_index(DOCS)
    avgdl = (3 + 2 + 4) / 3
    assert index.avgdl == pytest.approx(avgdl)
    got = dict(index.search(["apple", "cherry"]))
    assert got["a"] == pytest.approx(hand_score(2, 1, 3, 3, avgdl), abs=1e-12)
    assert got["b"] == pytest.approx(hand_score(1, 2, 3, 2, avgdl), abs=1e-12)
    assert got["c"] == pytest.approx(hand_score(3, 2, 3, 4, avgdl), abs=1e-12)
    # idf(apple): n=3, df=1 -> ln(2.5/1.5 + 1)
    assert index.idf("apple") == pytest.approx(math.log(2.5 / 1.5 + 1))
    assert index.idf("missing") == pytest.approx(math.log(3.5 / 0.5 + 1))


def test_numbers_for_one_document_by_hand() -> None:
    # one doc, one term: idf = ln(0.5/1.5 + 1) = ln(4/3); tf part = 2.2 / (1 + 1.2) = 1
    index = bm25_index([("only", ["x"])])
    assert index.search(["x"]) == [("only", pytest.approx(math.log(4 / 3)))]


def test_only_documents_with_a_query_term_are_scored() -> None:
    index = bm25_index(DOCS)
    assert [d for d, _ in index.search(["durian"])] == ["c"]
    assert index.search(["nothing"]) == []
    assert index.search([]) == []


def test_repeated_query_terms_count_once() -> None:
    index = bm25_index(DOCS)
    assert index.search(["apple"]) == index.search(["apple", "apple", "apple"])
    assert index.search(["apple", "banana"]) == index.search(["banana", "apple", "banana"])


def test_more_occurrences_of_a_rare_term_rank_higher() -> None:
    filler = [(f"f{i}", ["noise", "word", "other", "thing"]) for i in range(10)]
    docs = [*filler, ("one", ["rare", "x", "y", "z"]), ("two", ["rare", "rare", "y", "z"])]
    ranked = bm25_index(docs).search(["rare"])
    assert [d for d, _ in ranked] == ["two", "one"]


def test_rare_term_outweighs_common_term() -> None:
    docs = [(f"c{i}", ["common", "pad"]) for i in range(8)] + [("r", ["rare", "pad"])]
    ranked = bm25_index(docs).search(["common", "rare"])
    assert ranked[0][0] == "r"


def test_shorter_document_wins_at_equal_tf() -> None:
    docs = [("long", ["term"] + ["pad"] * 20), ("short", ["term", "pad"])]
    assert [d for d, _ in bm25_index(docs).search(["term"])] == ["short", "long"]


def test_ties_break_by_id() -> None:
    docs = [("z", ["same"]), ("m", ["same"]), ("a", ["same"])]
    ranked = bm25_index(docs).search(["same"])
    assert [d for d, _ in ranked] == ["a", "m", "z"]
    assert len({s for _, s in ranked}) == 1


def test_k_limits_results() -> None:
    index = bm25_index(DOCS)
    assert index.search(["banana", "cherry"], k=1) == index.search(["banana", "cherry"])[:1]
    assert len(index) == 3


def test_empty_index_and_empty_documents() -> None:
    assert bm25_index([]).search(["x"]) == []
    assert bm25_index([("e", [])]).search(["x"]) == []


def test_constructor_checks_lengths() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        BM25Index(["a"], [1, 2], {})


words = st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta"])
corpora = st.lists(st.lists(words, max_size=12), min_size=1, max_size=12)


@given(corpora, st.lists(words, min_size=1, max_size=4))
def test_search_is_sorted_nonnegative_and_matches_scores(docs: list[list[str]], query: list[str]) -> None:
    index = bm25_index((f"d{i:02d}", toks) for i, toks in enumerate(docs))
    ranked = index.search(query)
    assert all(s > 0 for _, s in ranked)
    assert ranked == sorted(ranked, key=lambda item: (-item[1], item[0]))
    holding = {f"d{i:02d}" for i, toks in enumerate(docs) if set(toks) & set(query)}
    assert {d for d, _ in ranked} == holding


@given(corpora, words, words)
def test_score_is_additive_over_distinct_terms(docs: list[list[str]], t1: str, t2: str) -> None:
    index = bm25_index((str(i), toks) for i, toks in enumerate(docs))
    both = index.scores([t1, t2])
    s1, s2 = index.scores([t1]), index.scores([t2]) if t1 != t2 else {}
    for doc, score in both.items():
        assert score == pytest.approx(s1.get(doc, 0.0) + s2.get(doc, 0.0))


def test_a_long_query_searches_its_rarest_known_terms_in_query_order() -> None:
    from oya.core.bm25 import rarest

    df = {"a": 5, "b": 1, "c": 3, "d": 1, "e": 0}.get
    assert rarest(["a", "b", "c", "d", "e", "b"], lambda t: df(t, 0), limit=3) == ["b", "c", "d"]
    assert rarest(["a", "e", "a"], lambda t: df(t, 0), limit=3) == ["a"]  # unknown terms never count
    index = bm25_index([("x", ["common", "rare"]), ("y", ["common"]), ("z", ["common", "mid"])])
    assert index.query_terms(["common", "mid", "rare", "zebra"]) == ["common", "mid", "rare"]


@given(corpora, st.lists(words, min_size=1, max_size=4), st.integers(min_value=0, max_value=14))
def test_the_k_best_are_the_whole_rankings_head_ties_included(
    docs: list[list[str]], query: list[str], k: int
) -> None:
    """``search(k)`` sorts only the scores that can be among the k best: the same list, ties at the
    cut broken by id alike (ids given in reverse, so input order cannot pass for id order)."""
    index = bm25_index((f"d{99 - i:02d}", toks) for i, toks in enumerate(docs))
    assert index.search(query, k=k) == index.search(query)[:k]
