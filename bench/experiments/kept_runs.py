"""Rank an eval set's queries again from the indexes an earlier run kept: the experiments' loop.

Theory of operation: ``bench.commits_eval --kept-only`` ranks from each query's kept index; an
experiment that changes one thing at question time (a question encoder, some chunks' vectors) wants
the same loop with its own rows. ``rank_kept`` walks the set's queries that have a kept index and are
not yet in ``log`` (so a run cut to fit a CPU slot resumes), extracts the query's tree into a
temporary folder, opens ``IndexRankers`` on both and appends ``{"id", "rows"}`` to ``log``: the
format ``bench.commits_families --log`` reads.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.commits_eval import kept_index
from bench.commits_rank import IndexRankers
from bench.commits_set import EvalSet

Rows = dict[str, list[str]]


def rank_kept(
    evalset_dir: Path,
    log: Path,
    rows_for: Callable[[IndexRankers, dict[str, Any]], Rows],
    most: int | None = None,
) -> int:
    """Append ``rows_for(rankers, query)`` to ``log`` for up to ``most`` queries of the set not yet
    in it that have a kept index; return how many were ranked."""
    evalset = EvalSet(evalset_dir)
    done = {json.loads(line)["id"] for line in log.open()} if log.exists() else set()
    todo = [
        q for q in evalset.queries if q["id"] not in done and (kept_index(q["id"]) / "index.duckdb").exists()
    ]
    for q in todo[:most]:
        with tempfile.TemporaryDirectory() as tmp:
            rankers = IndexRankers(kept_index(q["id"]), evalset.materialize(q["id"], Path(tmp) / "tree"))
            try:
                rows = rows_for(rankers, q)
            finally:
                rankers.close()
        with log.open("a") as fh:
            fh.write(json.dumps({"id": q["id"], "rows": rows}) + "\n")
        print(q["id"], flush=True)
    return len(todo[:most])
