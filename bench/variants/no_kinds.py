"""The retrieval before the file-kind prior (issue 16 item 7), kept runnable as the baseline.

``without_kinds(pipeline)`` drops the ``kinds`` stage and puts back the test rules the core had
before ``oya.core.kinds`` owned them (a tests/test/testing folder, test_*.py, *_test.py,
*_tests.py, conftest.py; a question "asks about tests" by test/tests/testing/tested, pytest,
unittest, fixture). ``bench/commits_eval.py`` (row ``oya-nokinds``) and ``bench/eval_quality.py``
(ablation ``kind prior off``) measure the shipped pipeline against it in the same run.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from bench.variants import replaced
from oya.core import filters
from oya.core.pipeline import Pipeline
from oya.core.stages import Candidates, Query

_TEST_WORD = re.compile(r"\btest(s|ing|ed)?\b|\bpytest\b|\bunittest\b|\bfixtures?\b", re.IGNORECASE)


def old_is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
        or name == "conftest.py"
    )


def _old_reweigh(q: Query, c: Candidates, *, test_weight: float, semantic_lead: float) -> Candidates:
    """``stages.reweigh`` with the old test rules."""
    fused = list(c.fused)
    weigh = test_weight < 1.0 and _TEST_WORD.search(q.question) is None
    paths = q.corpus.chunk_paths()
    if weigh and fused:
        fused = [
            replace(f, score=f.score * test_weight) if old_is_test_path(paths.get(f.id, "")) else f
            for f in fused
        ]
        fused.sort(key=lambda f: (-f.score, f.id))
    semantic = c.rankings.get("semantic", [])
    # the clear-winner rule skipped test code by the old rule
    skip = weigh and bool(semantic) and old_is_test_path(paths.get(semantic[0], ""))
    if semantic_lead > 0 and fused and not skip:
        fused = filters.promote_clear_winner(
            fused, semantic, c.scores.get("semantic", {}), semantic_lead, None
        )
    return replace(c, fused=tuple(fused))


def _keep(q: Query, c: Candidates) -> Candidates:
    return c


def without_kinds(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` as it was before the file-kind prior: no ``kinds`` stage, the old test rules."""
    o = pipeline.options
    return replaced(
        replaced(pipeline, "kinds", _keep),
        "reweigh",
        partial(_old_reweigh, test_weight=o.test_weight, semantic_lead=o.semantic_lead),
    )
