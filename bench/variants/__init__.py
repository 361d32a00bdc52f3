"""Variants that lost their measurement, kept runnable outside the shipped code.

Each ranking module turns ``oya.core.pipeline.default_pipeline(options)`` into the variant (a stage
swapped or inserted, or another query planner), so ``bench/eval_quality.py`` and
``bench/commits_rank.py`` can still measure what docs/DECISIONS.md decided against: ``mmr``
(diversity), ``centrality`` (PageRank-ordered expansion), ``query_plans`` (intent-adaptive weights,
identifier-only long queries) and the others named there. ``embedders`` holds the embedders the
shipped one was chosen over (``bench/embed_bench.py``, ``bench/eval_quality.py --embedder``);
``dagster_multiprocess`` the executor the in-process job replaced (``bench/dagster_bench.py``);
``suffix_folds`` the tokenizer's suffix folding (ablation "suffix folding on (lexical)");
``static`` issue 25's static embedding model distilled from MiniLM (no product option);
``whole_bundle`` the whole bundle's reader the shards replaced (issue 26), the parity tests' reference;
``length_norm`` file scores normalised by the file's chunks (issue 24's hub files);
``issue_templates`` a report asked without its repository's issue-template boilerplate (issue 24).

A pipeline is a frozen record of named stages; ``replaced`` and ``inserted`` below make the copy
a variant runs (they left the core with the variants: no shipped code swaps a stage).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oya.core.pipeline import Pipeline, Stage


def replaced(pipeline: Pipeline, name: str, stage: Stage) -> Pipeline:
    """``pipeline`` with its stage ``name`` swapped for ``stage``."""
    if name not in dict(pipeline.stages):
        raise ValueError(f"no stage {name!r} in {[n for n, _ in pipeline.stages]}")
    return replace(pipeline, stages=tuple((n, stage if n == name else s) for n, s in pipeline.stages))


def inserted(pipeline: Pipeline, after: str, name: str, stage: Stage) -> Pipeline:
    """``pipeline`` with ``stage`` (named ``name``) run right after its stage ``after``."""
    names = [n for n, _ in pipeline.stages]
    if after not in names:
        raise ValueError(f"no stage {after!r} in {names}")
    at = names.index(after) + 1
    return replace(pipeline, stages=(*pipeline.stages[:at], (name, stage), *pipeline.stages[at:]))
