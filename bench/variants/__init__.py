"""Retrieval variants that lost their measurement, kept runnable outside the shipped core.

Each module turns ``oya.core.pipeline.default_pipeline(options)`` into the variant (a stage
swapped or inserted, or another query planner), so ``bench/eval_quality.py`` can still measure
what docs/DECISIONS.md decided against: ``mmr`` (diversity), ``centrality`` (PageRank-ordered
expansion), ``query_plans`` (intent-adaptive weights, identifier-only long queries).
"""
