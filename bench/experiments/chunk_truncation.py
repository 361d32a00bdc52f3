"""Chunks embedded up to 128 tokens instead of 256: the build's cheapest saving, measured (issue 25).

Theory of operation: 57 % of networkx's chunks are longer than 128 tokens (mean tokens embedded
159 at 256, 104 at 128), and the encoder's cost grows with the tokens, so cutting chunks at 128
saves ~40 % of the build's embedding CPU (``bench/results/archive/issue25_first_build.md``). Only
the chunks change; a question is still read up to 256 tokens (issue reports are long). A chunk of
fewer than 128 tokens gets the same vector either way (same model, same text, no cut), so over a
kept index only the longer chunks are embedded again, with ``Truncated`` (``bench/variants/
embedders.py``; its own cache file by model id), and swapped into the semantic channel's matrix;
the question vectors and every other channel stay the kept index's. Each query of ``--set`` is
ranked twice, as the shipped pipeline ranks it: ``oya`` (the kept vectors) and ``oya-t128``.

Measured (2026-11-28, docs/DECISIONS.md "The embedding model stays all-MiniLM-L6-v2"): issue reports,
77 of 81 (sympy's last four not run: 13k new chunks per tree), file R@1 / R@5 42.2 / 81.9 ->
43.5 / 77.1, R@5 −4.9 [−10.0, −0.5] (Rust −18.8 [−43.8, +2.1], C −12.5, C++ −2.2, JVM +0.0): gold
files at rank 5 slip to 6. The own eval (``bench.eval_quality --embedder "int8 truncated 128"``;
short questions, cut alike) holds: code chunk R@1 / R@10 +0.5 ± 2.6 / −0.7 ± 2.0, prose file R@5
+0.4 ± 1.3, connected coverage +1.0 ± 3.7. A loss beyond noise on the issue reports: not shipped.

Run: ``OYA_COMMITS_CACHE=... OYA_MIRRORS=... OYA_CACHE_DIR=... python -m bench.experiments.chunk_truncation
--set ../shared/eval/issues --log L`` (resumes from ``L``), then ``python -m bench.commits_families --log L
--set ../shared/eval/issues --rows oya,oya-t128 --compare oya-t128,oya``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.commits_rank import IndexRankers
from bench.common import CACHE_DIR
from bench.experiments.kept_runs import rank_kept
from bench.variants.embedders import Truncated
from oya.core.options import RetrievalOptions
from oya.core.pipeline import default_pipeline
from oya.embedding.cache import EmbeddingCache
from oya.embedding.embedder import embed_chunks, embed_text
from oya.store.backends import MatrixVectorChannel


def truncated_channel(r: IndexRankers, embedder: Truncated, cache: EmbeddingCache) -> MatrixVectorChannel:
    """The kept index's semantic channel with every chunk of ``embedder.max_length`` tokens or more
    embedded again, cut there."""
    sem = MatrixVectorChannel(r.searcher.index)
    sem._load()
    assert sem._ids is not None and sem._matrix is not None
    _, tokenizer = embedder._load()
    chunks = r.searcher.index.get_chunks(sem._ids)
    order = [chunks[i] for i in sem._ids]
    lengths = [len(e.ids) for e in tokenizer.encode_batch([embed_text(c) for c in order])]
    long = [c for c, n in zip(order, lengths, strict=True) if n >= embedder.max_length]
    vectors, _, _ = embed_chunks(long, embedder, cache)
    matrix = np.array(sem._matrix, copy=True)
    row = {cid: i for i, cid in enumerate(sem._ids)}
    for cid, blob in vectors.items():
        matrix[row[cid]] = np.frombuffer(blob, dtype="<f4")
    sem._matrix = matrix
    return sem


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=Path, required=True)
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--max-length", type=int, default=128)
    args = ap.parse_args()
    embedder = Truncated(args.max_length, threads=1)
    cache = EmbeddingCache(CACHE_DIR / "chunk_truncation" / f"vectors-{args.max_length}.sqlite")
    pipe = default_pipeline(replace(RetrievalOptions(), k=10))
    name = f"oya-t{args.max_length}"

    def rows_for(r: IndexRankers, q: dict[str, Any]) -> dict[str, list[str]]:
        rows = {"oya": [f.path for f in r._search(q["query"], pipe).files]}
        shipped = r.searcher.backends
        r.searcher.backends = (shipped[0], truncated_channel(r, embedder, cache))
        rows[name] = [f.path for f in r._search(q["query"], pipe).files]
        r.searcher.backends = shipped
        return rows

    rank_kept(args.set, args.log, rows_for)
    cache.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
