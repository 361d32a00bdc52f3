"""The ranking before docs went after the code inside each channel's list (issue 24), kept runnable.

Since 2026-11-28 the shipped ``fuse`` stage reads each channel's chunk list with the chunks of docs,
change logs and templates the first line does not ask for after the rest
(``oya.core.stages.fuse_rankings``), and the ``named`` stage moves up the files whose name the
question spells (``oya.core.stages.favour_named``; docs/DECISIONS.md, "Docs come after the code
inside each channel's list"). ``without_code_first`` fuses the lists as the channels gave them and
skips ``named`` (row ``oya-nocodefirst`` of ``bench/commits_rank.py``); ``without_named`` skips
``named`` alone (row ``oya-nonamed``); ``with_code_first`` reads more kinds after the code (the
losers: build files, tests, copies; ``demoted`` and ``copies``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

from bench.variants import replaced
from oya.core.fusion import fuse
from oya.core.kinds import code_first, first_line, unnamed_copies
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query, fuse_rankings


def _keep(q: Query, c: Candidates) -> Candidates:
    return c


def without_named(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` whose ``named`` stage moves nothing."""
    return replaced(pipeline, "named", _keep)


def without_code_first(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` that fuses the channels' lists as they came, with no ``named``."""
    fuse_in_place = partial(fuse_rankings, rrf_k=pipeline.options.rrf_k, demoted=())
    return without_named(replaced(pipeline, "fuse", fuse_in_place))


def _fuse_code_first(
    q: Query, c: Candidates, *, rrf_k: int, demoted: Sequence[str], copies: bool
) -> Candidates:
    paths = q.corpus.chunk_paths()
    files = {paths.get(cid, "") for ids in c.rankings.values() for cid in ids}
    late = unnamed_copies(q.corpus.file_origins(), files, q.question) if copies else frozenset()
    subject = first_line(q.question)
    lists = {
        n: code_first(ids, lambda cid: paths.get(cid, ""), subject, demoted, late)
        for n, ids in c.rankings.items()
    }
    return replace(c, fused=tuple(fuse(lists, c.weights, k=rrf_k)))


def with_code_first(pipeline: Pipeline, demoted: Sequence[str], *, copies: bool) -> Pipeline:
    """``pipeline`` whose ``fuse`` reads the chunks of ``demoted`` kinds (and, ``copies``, of the
    copies the question does not name) after the rest of each list."""
    stage = partial(_fuse_code_first, rrf_k=pipeline.options.rrf_k, demoted=demoted, copies=copies)
    return replaced(pipeline, "fuse", stage)
