"""The ranking before files' origins were known (issue 24): copies, generated and vendored files
rank by their words alone, as sources do (row ``oya-noorigins`` of ``bench/commits_rank.py``).

The shipped ``kinds`` stage (``oya.core.stages.order_kinds``) moves the files that are not source
after the rest; this variant runs the same stage over a corpus that reports no origins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace as replace_record
from functools import partial

from bench.variants import replaced
from oya.core.kinds import DEMOTED_ALL, HIT_DEMOTED
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query, order_kinds


class _NoOrigins:
    """A corpus that forwards everything but the files' origins."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def file_origins(self) -> Mapping[str, str]:
        return {}


def _kinds_without_origins(q: Query, c: Candidates) -> Candidates:
    blind = replace_record(q, corpus=_NoOrigins(q.corpus))
    return order_kinds(blind, c, demoted=DEMOTED_ALL, hit_demoted=HIT_DEMOTED)


def without_origins(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` with its ``kinds`` stage blind to the files' origins."""
    return replaced(pipeline, "kinds", partial(_kinds_without_origins))
