"""Is one eval_quality.py run better than another? Paired bootstrap over the same queries.

Usage: ``.venv/bin/python -m bench.eval_compare BASE.json NEW.json [--config default] [--n 2000]``
(two ``eval_quality.py --out`` files made with the same projects, query counts and seed).

For each metric: both runs' values (mean over the tuning projects, and the held-out ones apart),
the difference in points, and a 95% interval of that difference from resampling the queries of
every project with replacement, the same draw for both runs (queries are the unit of noise: the
indexes and rankings are deterministic). The interval's ends are nearest-rank percentiles
(``bench.common.percentile``) of the sorted differences. Until issue 23 the lower end was the
(0.025 n + 1)-th difference (the 51st of 2,000 where nearest-rank takes the 50th; the upper end,
the 1,950th, is the same): the intervals in ``bench/results/archive/*compare*.md`` and
docs/DECISIONS.md were computed that way, so a rerun may widen a lower half-width by one draw.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.common import percentile
from bench.eval.metrics import mean, summarize_ranks

Ranks = Sequence[int | None]


def _summary(key: str, level: str) -> Callable[[dict[str, Any], list[int]], float]:
    def get(res: dict[str, Any], idx: list[int]) -> float:
        ranks = res[key.split()[0]][f"{level}_ranks"]
        return summarize_ranks([ranks[i] for i in idx])[key.split()[1]]

    return get


def _coverage(res: dict[str, Any], idx: list[int]) -> float:
    values = res["connected"]["coverages"]
    return mean([values[i] for i in idx])


METRICS: dict[str, tuple[str, Callable[[dict[str, Any], list[int]], float]]] = {
    "code chunk R@1": ("code", _summary("code R@1", "chunk")),
    "code chunk R@10": ("code", _summary("code R@10", "chunk")),
    "code chunk MRR": ("code", _summary("code MRR", "chunk")),
    "code file R@5": ("code", _summary("code R@5", "file")),
    "prose file R@1": ("prose", _summary("prose R@1", "file")),
    "prose file R@5": ("prose", _summary("prose R@5", "file")),
    "prose file R@10": ("prose", _summary("prose R@10", "file")),
    "prose file MRR": ("prose", _summary("prose MRR", "file")),
    "connected coverage": ("connected", _coverage),
}


def _size(res: dict[str, Any], task: str) -> int:
    return len(res["connected"]["coverages"]) if task == "connected" else len(res[task]["chunk_ranks"])


def compare(
    base: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], n: int, seed: int
) -> dict[str, tuple[float, float, float, float]]:
    """metric -> (base, new, delta, half-width of the 95% interval of delta), means over projects."""
    rng = random.Random(seed)
    out = {}
    for name, (task, get) in METRICS.items():
        full = {p: list(range(_size(base[p], task))) for p in base}
        b = mean([get(base[p], full[p]) for p in base])
        w = mean([get(new[p], full[p]) for p in base])
        deltas = []
        for _ in range(n):
            draw = {p: rng.choices(full[p], k=len(full[p])) for p in base}
            deltas.append(mean([get(new[p], draw[p]) - get(base[p], draw[p]) for p in base]))
        lo, hi = percentile(deltas, 2.5), percentile(deltas, 97.5)
        out[name] = (b, w, w - b, max(w - b - lo, hi - (w - b)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--config", default="default")
    ap.add_argument("--n", type=int, default=2000, help="bootstrap resamples")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    runs = [json.loads(Path(f).read_text()) for f in (args.base, args.new)]
    held = set(runs[0]["args"]["holdout"].split(",")) - {""}
    for label, keep in (("tuning projects", lambda p: p not in held), ("held out", lambda p: p in held)):
        base = {p: r[args.config] for p, r in runs[0]["results"].items() if keep(p)}
        new = {p: runs[1]["results"][p][args.config] for p in base}
        if not base:
            continue
        print(
            f"\n**{args.config}, {label} ({', '.join(base)})**: {runs[0]['embedder']} -> {runs[1]['embedder']}\n"
        )
        print("| metric | base | new | delta (points) | 95% interval of delta |")
        print("|---|---|---|---|---|")
        for name, (b, w, d, half) in compare(base, new, args.n, args.seed).items():
            print(f"| {name} | {b:.3f} | {w:.3f} | {d * 100:+.1f} | ±{half * 100:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
