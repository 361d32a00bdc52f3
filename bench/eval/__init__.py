"""Helpers of ``bench/eval_quality.py``: corpus preparation, query sets, metrics."""
