"""Variants that lost their measurement, kept runnable outside the shipped code.

Each ranking module turns ``oya.core.pipeline.default_pipeline(options)`` into the variant (a stage
swapped or inserted, or another query planner), so ``bench/eval_quality.py`` and
``bench/commits_rank.py`` can still measure what docs/DECISIONS.md decided against: ``mmr``
(diversity), ``centrality`` (PageRank-ordered expansion), ``query_plans`` (intent-adaptive weights,
identifier-only long queries) and the others named there. ``embedders`` holds the embedders the
shipped one was chosen over (``bench/embed_bench.py``, ``bench/eval_quality.py --embedder``);
``dagster_multiprocess`` the executor the in-process job replaced (``bench/dagster_bench.py``).
"""
