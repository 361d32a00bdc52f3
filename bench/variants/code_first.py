"""The ranking before each channel's list was read code first (issue 24), kept runnable as the baseline.

Since 2026-11-28 the shipped ``fuse`` stage reads each channel's chunk list with docs, change logs,
templates, build files and unnamed copies after the code (``oya.core.stages.fuse_rankings``), the
``whole_files`` stage reads its whole-file BM25 list the same way (tests too), and the ``named``
stage moves up the files whose name the question spells (``oya.core.stages.favour_named``;
docs/DECISIONS.md, "Code comes first inside each channel's list"). ``without_code_first`` reads the
lists as the channels gave them and skips ``named`` (row ``oya-nocodefirst`` of
``bench/commits_rank.py``); ``without_named`` skips ``named`` alone (row ``oya-nonamed``).
"""

from __future__ import annotations

from functools import partial

from bench.variants import replaced
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query, fuse_rankings, fuse_whole_files


def _keep(q: Query, c: Candidates) -> Candidates:
    return c


def without_named(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``named`` stage moves nothing."""
    return replaced(pipeline, "named", _keep)


def without_code_first(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` that fuses the channels' and the whole-file lists in place, with no ``named``."""
    o = pipeline.options
    fuse = partial(fuse_rankings, rrf_k=o.rrf_k, demoted=())
    whole = partial(
        fuse_whole_files, depth=o.fetch_k, rrf_k=o.rrf_k, weight=o.file_lexical_weight, demoted=()
    )
    return without_named(replaced(replaced(pipeline, "fuse", fuse), "whole_files", whole))
