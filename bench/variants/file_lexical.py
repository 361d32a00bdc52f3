"""The file ranking before whole-file BM25 joined it (issue 16 item 3), kept runnable as the baseline.

Whole-file BM25 (path + text, ``oya.core.file_lexical``) is fused into the file ranking by the
shipped pipeline's ``whole_files`` stage since 2026-11-27 (docs/DECISIONS.md, "Whole-file BM25
joins the file ranking"). ``without_file_lexical`` drops it again: the files are then ranked from
the chunks alone. ``bench/commits_rank.py`` (row ``oya-nofilelex``) and ``bench/eval_quality.py``
(ablation ``file-level BM25 off``) measure the shipped pipeline against it.
"""

from __future__ import annotations

from bench.variants import replaced
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query


def _keep(q: Query, c: Candidates) -> Candidates:
    return c


def without_file_lexical(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose files are ranked from the chunks alone."""
    return replaced(pipeline, "whole_files", _keep)
