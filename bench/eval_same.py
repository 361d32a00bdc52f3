"""Did a change move any ranking? Two ``eval_quality.py --dump`` files compared query by query.

Usage: ``.venv/bin/python -m bench.eval_same BEFORE.json AFTER.json`` (dumps made with the same
projects, query counts, seed and embedder). For every project, config and task it compares each
query's ranked hit ids, file paths and context chunk ids, prints one table row per project and
config, the first differences, and exits 1 when anything differs (0: identical rankings). A
refactor of the retrieval code must leave them identical; averages can hide swaps.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FIELDS = ("hits", "files", "context")


def differences(
    before: dict[str, Any], after: dict[str, Any]
) -> tuple[list[tuple[str, str, int, int]], list[str]]:
    """Per (project, config): queries compared and differing; and a line per first differences."""
    rows: list[tuple[str, str, int, int]] = []
    notes: list[str] = []
    for project in sorted(set(before) | set(after)):
        configs = sorted(set(before.get(project, {})) | set(after.get(project, {})))
        for config in configs:
            b = before.get(project, {}).get(config)
            a = after.get(project, {}).get(config)
            if a is None or b is None:
                notes.append(f"{project} / {config}: only in {'before' if a is None else 'after'}")
                rows.append((project, config, 0, 1))
                continue
            n = differ = 0
            for task in sorted(set(a) | set(b)):
                qa, qb = a.get(task, []), b.get(task, [])
                if len(qa) != len(qb):
                    notes.append(f"{project} / {config} / {task}: {len(qb)} queries before, {len(qa)} after")
                    differ += 1
                for x, y in zip(qb, qa, strict=False):
                    n += 1
                    moved = [f for f in FIELDS if x.get(f) != y.get(f)] + (
                        ["query"] if x["query"] != y["query"] else []
                    )
                    if moved:
                        differ += 1
                        if len(notes) < 20:
                            notes.append(
                                f"{project} / {config} / {task}: {x['query'][:60]!r}: {', '.join(moved)}"
                            )
            rows.append((project, config, n, differ))
    return rows, notes


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    args = ap.parse_args(argv)
    before, after = (json.loads(Path(f).read_text()) for f in (args.before, args.after))
    rows, notes = differences(before, after)
    print("| project | config | queries | differing |\n|---|---|---|---|")
    for project, config, n, differ in rows:
        print(f"| {project} | {config} | {n} | {differ} |")
    total = sum(r[2] for r in rows)
    bad = sum(r[3] for r in rows)
    print(f"\n{total} query rankings compared ({', '.join(FIELDS)}), {bad} differ")
    for line in notes:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
