"""Oya's benchmarks: measurements on real projects, their results in ``bench/results/``."""
