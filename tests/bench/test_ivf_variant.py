"""The coarse vector index variant (``bench.variants.ivf``): its lists and what it says a question
fetches, on vectors made here."""

from __future__ import annotations

import numpy as np

from bench.variants.ivf import DEPTH, measure, plan_ivf


def _unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_every_row_is_in_exactly_one_list() -> None:
    x = _unit_rows(400, 16, 1)
    plan = plan_ivf(x)
    rows = np.sort(np.concatenate(plan.members))
    assert rows.tolist() == list(range(400))
    assert len(plan.members) == round(2 * 400**0.5) and plan.nprobe == len(plan.members) // 2


def test_probing_every_list_is_the_exact_search_and_the_whole_shard() -> None:
    x, qs = _unit_rows(400, 16, 2), _unit_rows(5, 16, 3)
    got = measure(x, qs, plan_ivf(x, probe_fraction=1.0))
    assert got["recall_mean"] == got["recall_min"] == 1.0
    lists = got["lists"]
    assert got["first_question_bytes"] == 400 * (16 + 8) + lists * (16 + 4)
    assert got["later_question_bytes_p95"] == 0  # every list came with the first question


def test_probing_half_the_lists_fetches_less_and_may_miss() -> None:
    x, qs = _unit_rows(2000, 8, 4), _unit_rows(20, 8, 5)
    half = measure(x, qs, plan_ivf(x))
    assert half["first_question_bytes"] < 2000 * (8 + 8)
    assert 0.5 < half["recall_mean"] <= 1.0 and DEPTH == 100
