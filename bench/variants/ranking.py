"""Ranking variants of issue 16 (items 2, 3, 6, 8), each against the shipped pipeline, runnable.

* ``main_pipeline``: the file ranking before this round, ``file_aggregation="graph"`` (a file gains
  half the score of hits that call or import it); the shipped one is ``decay``.
* file-level BM25 (shipped since 2026-11-27): ``variants.file_lexical`` is the ranking without it.
* ``with_build_files_last``: the ``kinds`` stage also moves build files and configuration
  (kind ``other``: Makefile, .github/, karma.conf.js) after the code, unless asked for (shipped
  since 2026-11-23: kept here as the row that measured it; ``without_build_files_last`` is the
  pipeline before).
* ``subject_text``: the semantic channel embeds the prose's first paragraph (a commit's subject
  line, a bug report's title) instead of all the prose.
* co-activation: ``variants.coactivation``.

``bench/commits_rank.py`` (rows ``oya-*``) and ``bench/eval_quality.py`` run them beside the
shipped pipeline on the same queries.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from bench.variants import replaced
from oya.core import stages
from oya.core.kinds import DEMOTED, DEMOTED_ALL, HIT_DEMOTED, NON_CODE
from oya.core.pipeline import Pipeline, default_pipeline

from .file_lexical import without_file_lexical
from .query_parts import split_parts


def main_pipeline(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` as on main before issue 16's round: ``graph`` file aggregation,
    tests/docs/change logs/templates last, no whole-file BM25."""
    return without_file_lexical(
        without_build_files_last(default_pipeline(replace(pipeline.options, file_aggregation="graph")))
    )


def with_build_files_last(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``kinds`` stage moves build files and configuration after the code too."""
    return replaced(
        pipeline, "kinds", partial(stages.order_kinds, demoted=DEMOTED_ALL, hit_demoted=HIT_DEMOTED)
    )


def without_build_chunks_last(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``kinds`` stage leaves the chunks of build files and configuration
    (kind ``other``) in place in the answer, as before 2026-11-27 (the shipped stage moves them
    after the code's: the sample question's own Makefile line was the answer's fourth item)."""
    return replaced(pipeline, "kinds", partial(stages.order_kinds, demoted=DEMOTED_ALL, hit_demoted=NON_CODE))


def without_build_files_last(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``kinds`` stage is main's: only files, only tests, docs, change logs, templates."""
    return replaced(pipeline, "kinds", partial(stages.order_kinds, demoted=DEMOTED, hit_demoted=()))


def subject_text(question: str) -> str:
    """The prose's first paragraph (the whole text when it has no prose)."""
    prose = split_parts(question).prose or question.strip()
    return prose.split("\n\n", 1)[0].strip()
