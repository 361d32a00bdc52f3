"""The ranking before companion files moved up beside a high file (issue 24), kept runnable.

Since 2026-11-28 the shipped ``companions`` stage (``oya.core.companions.favour_companions``) gives
each of the first ``companion_seeds`` source files the place right after it for its first
companion ranked within the first ``companion_depth`` files (docs/DECISIONS.md, "A file's companion
moves up beside it"). ``without_companions`` is the ranking before (row ``oya-nocompanions`` of
``bench/commits_rank.py``); ``with_companions`` the same stage with other bounds (the sweep).
"""

from __future__ import annotations

from functools import partial

from bench.variants import replaced
from oya.core.companions import favour_companions
from oya.core.pipeline import Pipeline


def without_companions(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``companions`` stage moves nothing."""
    return with_companions(pipeline, seeds=0, depth=0)


def with_companions(pipeline: Pipeline, *, seeds: int, depth: int) -> Pipeline:
    """``pipeline`` whose ``companions`` stage looks at the first ``seeds`` source files and the
    first ``depth`` files."""
    return replaced(pipeline, "companions", partial(favour_companions, seeds=seeds, depth=depth))
