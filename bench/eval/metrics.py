"""Ranking metrics: Recall@k and MRR (percentiles: ``bench.common.percentile``)."""

from __future__ import annotations

from collections.abc import Sequence

KS = (1, 5, 10)


def first_rank(ranked: Sequence[str], wanted: set[str] | frozenset[str]) -> int | None:
    """1-based rank of the first item of ``ranked`` in ``wanted``; None when absent."""
    for i, item in enumerate(ranked, 1):
        if item in wanted:
            return i
    return None


def summarize_ranks(ranks: Sequence[int | None], cutoff: int = 10) -> dict[str, float]:
    """Recall@1/5/10 (the answer within the top k) and MRR@cutoff, over queries."""
    n = len(ranks) or 1
    out = {f"R@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["MRR"] = sum(1 / r for r in ranks if r is not None and r <= cutoff) / n
    return out


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")
