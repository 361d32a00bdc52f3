"""Finished experiments: each answered one question, whose answer is in docs/DECISIONS.md and whose
raw results are in ``bench/results/archive/``. Kept runnable (``python -m bench.experiments.<name>``),
not kept current; they import the standing benches, never the other way round."""
