"""Embedding throughput of every embedder variant, side by side on the same chunks of a real project.

Theory of operation:

* The chunks are networkx 3.6.1's (``bench/corpus.py``), made by Oya's own scan, parser and chunker;
  a fixed sample (``--sample``, ``--seed``) of their embed texts keeps a run to minutes.
* Every variant embeds the same texts, in the same process, one after another; ``--rounds`` repeats
  the whole list (every other round in reverse order) so a burst of load on the shared machine does
  not land on one variant only. chunks/s and tokens/s are the median over rounds; tokens are the
  model's real (truncated, unpadded) token counts. Model load and a short warm-up are excluded and
  the load time is reported on its own.
* Agreement: each variant's vector of a chunk against the fp32 reference's (today's ONNX path, equal
  to sentence-transformers within 1e-4): the minimum and mean cosine, and the largest change of a
  query-chunk score over the first 200 chunks' titles used as queries (``max |d score|``).
* "today" reproduces the build before this bench: fp32, groups of 256 chunks (``embed_chunks``)
  sorted by characters, fixed batches of 32. The other ONNX variants are the product's
  ``OnnxMiniLMEmbedder`` with another model file, thread count or token budget.

Run: ``.venv/bin/python -m bench.embed_bench [--sample 1500] [--rounds 1] [--only int8,today]``;
results go to ``bench/results/embed_bench.json``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS, load_avg, machine, write_json
from bench.corpus import fetch_project
from bench.variants.embedders import VARIANTS
from oya.build.steps import make_chunks, parse_and_link, scan
from oya.embedding.embedder import Embedder, embed_text

RESULT = RESULTS / "embed_bench.json"
REFERENCE = "fp32 today"


def sample_texts(spec: str, n: int, seed: int) -> list[str]:
    """A deterministic sample of the distinct embed texts of ``spec``'s chunks."""
    tree = fetch_project(spec)
    scanned = scan(tree)
    texts = sorted({embed_text(c) for c in make_chunks(scanned, parse_and_link(scanned))})
    return texts if n >= len(texts) else random.Random(seed).sample(texts, n)


def token_counts(texts: Sequence[str]) -> list[int]:
    from oya.embedding.embedder import OnnxMiniLMEmbedder

    _, tokenizer = OnnxMiniLMEmbedder()._load()
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]


def unit_matrix(blobs: Sequence[bytes]) -> Any:
    import numpy as np

    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)


def agreement(vecs: Any, ref: Any, queries: Any, ref_queries: Any) -> dict[str, float]:
    import numpy as np

    cos = (vecs * ref).sum(axis=1)
    scores = queries @ vecs.T
    ref_scores = ref_queries @ ref.T
    return {
        "min_cos": float(cos.min()),
        "mean_cos": float(cos.mean()),
        "max_score_delta": float(np.abs(scores - ref_scores).max()),
    }


def time_variant(make: Callable[[], Embedder], texts: Sequence[str]) -> tuple[Embedder, float]:
    t0 = time.perf_counter()
    emb = make()
    emb.embed(texts[:16])  # loads the model and warms the session up
    return emb, time.perf_counter() - t0


def run(names: Sequence[str], texts: Sequence[str], rounds: int) -> dict[str, dict[str, Any]]:
    tokens = sum(token_counts(texts))
    titles = [t.split("\n", 1)[0] for t in texts[:200]]
    rows: dict[str, dict[str, Any]] = {n: {"seconds": []} for n in names}
    vectors: dict[str, Any] = {}
    for r in range(rounds):
        for name in names if r % 2 == 0 else list(reversed(names)):
            emb, load_s = time_variant(VARIANTS[name], texts)
            load = load_avg()[0]
            t0, c0 = time.perf_counter(), time.process_time()
            blobs = emb.embed(texts)
            seconds = time.perf_counter() - t0
            rows[name]["seconds"].append(seconds)
            rows[name].setdefault("cpu_seconds", []).append(time.process_time() - c0)
            rows[name].setdefault("load_s", load_s)
            rows[name].setdefault("load_avg", []).append(load)
            if name not in vectors:
                vectors[name] = (unit_matrix(blobs), unit_matrix(emb.embed(titles)))
            print(
                f"  round {r + 1} {name}: {len(texts) / seconds:.1f} chunks/s (load {load:.2f})", flush=True
            )
            del emb
    ref, ref_q = vectors.get(REFERENCE, vectors[names[0]])
    for name, row in rows.items():
        s = statistics.median(row["seconds"])
        row.update(chunks_per_s=len(texts) / s, tokens_per_s=tokens / s)
        row["cpu_ms_per_chunk"] = 1000 * statistics.median(row["cpu_seconds"]) / len(texts)
        vecs, queries = vectors[name]
        row.update(agreement(vecs, ref, queries, ref_q))
    return rows


def print_table(rows: dict[str, dict[str, Any]], n: int, tokens_per_chunk: float) -> None:
    print(f"\n{n} chunks, {tokens_per_chunk:.0f} tokens/chunk on average; agreement vs {REFERENCE!r}\n")
    print("| variant | chunks/s | tokens/s | CPU ms/chunk | load s | min cos | mean cos | max abs d score |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in sorted(rows.items(), key=lambda kv: -kv[1]["chunks_per_s"]):
        print(
            f"| {name} | {r['chunks_per_s']:.1f} | {r['tokens_per_s']:.0f} | {r['cpu_ms_per_chunk']:.1f} "
            f"| {r['load_s']:.1f} "
            f"| {r['min_cos']:.4f} | {r['mean_cos']:.5f} | {r['max_score_delta']:.4f} |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--project", default="networkx==3.6.1")
    ap.add_argument("--sample", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated variant names (default: all)")
    ap.add_argument("--out", default=str(RESULT))
    args = ap.parse_args(argv)
    names = [n for n in VARIANTS if not args.only or n in args.only.split(",")]
    if REFERENCE in VARIANTS and REFERENCE not in names:
        names.insert(0, REFERENCE)
    texts = sample_texts(args.project, args.sample, args.seed)
    tokens = sum(token_counts(texts))
    start = machine()
    rows = run(names, texts, args.rounds)
    print_table(rows, len(texts), tokens / len(texts))
    result = {
        "project": args.project,
        "sample": len(texts),
        "seed": args.seed,
        "rounds": args.rounds,
        "tokens": tokens,
        "machine": start,
        "load_avg_end": load_avg(),
        "variants": rows,
    }
    out = Path(args.out)
    write_json(out, result)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
