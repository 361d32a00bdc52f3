"""Which words of a question ask for tests, docs or build files (issue 16 items 7 and 8), runnable.

The shipped pipeline reads a kind's words in two places: the ``kinds`` stage (files and the
answer's chunks) reads the question's first line only, ``reweigh`` (test code weighed down) reads
the whole question, so a fix description whose body says "add a test" or a bug report saying "I
tested with 2.1" has its test code weighed like the code it asks for.

* ``with_tests_asked_by_first_line``: ``reweigh`` reads the first line too, like ``kinds``.
* ``with_reports_asking_for_code``: the same, and a question classified ``debug`` (an error, a
  traceback, "fails", "bug") asks for no kind at all: its fix is in the code whatever its first
  line names ("Sphinx fails to build the documentation", "pytest crashes with -k").

``bench/commits_rank.py`` (rows ``oya-testsubject``, ``oya-debugcode``) and
``bench/experiments/kind_prior_eval.py`` run them beside the shipped pipeline.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from bench.variants import replaced
from oya.core import stages
from oya.core.kinds import first_line
from oya.core.pipeline import Pipeline, Stage
from oya.core.stages import Candidates, Query


def _asking(q: Query, *, reports: bool) -> Query:
    """``q`` whose question is only what may ask for a kind: its first line, or nothing for a
    bug report when ``reports``."""
    if reports and q.plan.intent == "debug":
        return replace(q, question="")
    return replace(q, question=first_line(q.question))


def _reweigh(
    q: Query, c: Candidates, *, reports: bool, test_weight: float, semantic_lead: float
) -> Candidates:
    return stages.reweigh(
        _asking(q, reports=reports), c, test_weight=test_weight, semantic_lead=semantic_lead
    )


def _kinds(q: Query, c: Candidates, *, stage: Stage) -> Candidates:
    return stage(_asking(q, reports=True), c)


def with_tests_asked_by_first_line(pipeline: Pipeline) -> Pipeline:
    o = pipeline.options
    return replaced(
        pipeline,
        "reweigh",
        partial(_reweigh, reports=False, test_weight=o.test_weight, semantic_lead=o.semantic_lead),
    )


def with_reports_asking_for_code(pipeline: Pipeline) -> Pipeline:
    o = pipeline.options
    kinds = dict(pipeline.stages)["kinds"]
    reweighed = replaced(
        pipeline,
        "reweigh",
        partial(_reweigh, reports=True, test_weight=o.test_weight, semantic_lead=o.semantic_lead),
    )
    return replaced(reweighed, "kinds", partial(_kinds, stage=kinds))
