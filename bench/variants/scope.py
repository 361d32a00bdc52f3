"""The file ranking before a subject's scope prefix moved its files up, kept runnable as the baseline.

Since 2026-11-27 the shipped pipeline's ``scope`` stage (``oya.core.stages.favour_scope``,
``oya.core.scope``) fuses the candidate files whose path names the first line's scope
("printer: fix ...", "fix(parser): ...", "[hmr] ...") as one more list (docs/DECISIONS.md, "A
subject's scope moves its files up"). ``without_scope`` drops it: the scope is then one more word
of the question. ``with_scope_weight`` runs it at another weight (the sweep: 0.5, 1.0, 2.0).
``bench/commits_rank.py`` (rows ``oya-noscope``, ``oya-scope1``, ``oya-scope2``) and
``bench/eval_quality.py`` (ablation ``scope prefix off``) measure the shipped pipeline against them.
"""

from __future__ import annotations

from functools import partial

from bench.variants import replaced
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query, favour_scope


def _keep(q: Query, c: Candidates) -> Candidates:
    return c


def without_scope(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` that reads the scope prefix as one more word."""
    return replaced(pipeline, "scope", _keep)


def with_scope_weight(pipeline: Pipeline, weight: float) -> Pipeline:
    """``pipeline`` whose scope list counts ``weight``."""
    return replaced(pipeline, "scope", partial(favour_scope, rrf_k=pipeline.options.rrf_k, weight=weight))
