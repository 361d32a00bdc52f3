"""The ranking before files' origins were known (issue 24): copies, generated and vendored files
rank by their words alone, as sources do (row ``oya-noorigins`` of ``bench/commits_rank.py``).

The shipped ``kinds`` stage (``oya.core.stages.order_kinds``) moves the files that are not source
after the rest, and ``fuse`` and ``whole_files`` read them after the code in each list; this
variant runs those stages over a corpus that reports no origins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace as replace_record
from functools import partial

from bench.variants import replaced
from oya.core.pipeline import Pipeline, Stage
from oya.core.stages import Candidates, Query


class _NoOrigins:
    """A corpus that forwards everything but the files' origins."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def file_origins(self) -> Mapping[str, str]:
        return {}


def _blind(stage: Stage, q: Query, c: Candidates) -> Candidates:
    return stage(replace_record(q, corpus=_NoOrigins(q.corpus)), c)


def without_origins(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` with its ``fuse``, ``whole_files`` and ``kinds`` stages blind to the files' origins."""
    stages = dict(pipeline.stages)
    for name in ("fuse", "whole_files", "kinds"):
        pipeline = replaced(pipeline, name, partial(_blind, stages[name]))
    return pipeline
