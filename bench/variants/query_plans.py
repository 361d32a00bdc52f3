"""Losing variants of query planning, kept runnable (docs/DECISIONS.md).

* Intent-adaptive channel weights (``INTENT_WEIGHTS``): lookups and debugging lean lexical,
  conceptual and architecture questions lean semantic and graph. At most +0.7 points on any
  ranking metric and -4.4 connected-code coverage (bench/results/eval_quality.md, row
  "adaptive weights on"); the shipped weights are ``oya.core.query.CHANNEL_WEIGHTS`` (this
  table's "general" row) for every question.
* Long-query identifiers: a long question (over ``LONG_QUERY_TOKENS`` tokens, a pasted bug
  report) searches BM25 with only its identifiers and paths. No measured gain (the eval's
  long questions moved by <= 0.2 points); BM25's IDF already favours rare identifiers.
"""

from __future__ import annotations

from dataclasses import replace

from oya.core.pipeline import Pipeline
from oya.core.query import QueryPlan
from oya.core.tokenize import tokenize

LONG_QUERY_TOKENS = 60  # a longer question is a pasted bug report, not a question

INTENT_WEIGHTS: dict[str, dict[str, float]] = {
    "lookup": {"lexical": 1.2, "semantic": 0.8, "graph": 1.0},
    "debug": {"lexical": 1.2, "semantic": 0.8, "graph": 0.8},
    "conceptual": {"lexical": 0.8, "semantic": 1.2, "graph": 0.8},
    "architecture": {"lexical": 0.7, "semantic": 1.1, "graph": 1.2},
    "general": {"lexical": 1.0, "semantic": 1.0, "graph": 0.8},
}


def adaptive_plan(plan: QueryPlan) -> QueryPlan:
    """``plan`` with its intent's channel weights."""
    return replace(plan, weights=dict(INTENT_WEIGHTS[plan.intent]))


def is_long(plan: QueryPlan) -> bool:
    """Over ``LONG_QUERY_TOKENS`` tokens (the core once marked this on every plan; only this
    variant read it)."""
    return len(tokenize(plan.text)) > LONG_QUERY_TOKENS


def identifiers_plan(plan: QueryPlan) -> QueryPlan:
    """A long ``plan`` that names identifiers or paths searches BM25 with those alone."""
    if not is_long(plan) or not (plan.identifiers or plan.paths):
        return plan
    precise = tokenize(" ".join(plan.identifiers + plan.paths))
    return replace(plan, lexical_tokens=tuple(dict.fromkeys(precise)))


def with_adaptive_weights(pipeline: Pipeline) -> Pipeline:
    planner = pipeline.plan
    return replace(pipeline, plan=lambda question: adaptive_plan(planner(question)))


def with_long_query_identifiers(pipeline: Pipeline) -> Pipeline:
    planner = pipeline.plan
    return replace(pipeline, plan=lambda question: identifiers_plan(planner(question)))
