"""A one-file rebuild under two versions of Oya, interleaved, so both meet the same machine load.

Theory of operation:

* Each variant is a folder holding a checkout of Oya (``git archive <commit> | tar -x -C DIR``
  gives one); its build runs in a child process with that folder first on ``PYTHONPATH``.
* A round, per variant: copy the corpus, build it into a fresh output folder (the "previous
  index", written by that variant's own code), add one line to one function, and build again
  into the same folder. Only the second build is measured. Rounds alternate the variants, so a
  load spike hits both about equally; the load average is printed beside every row.
* The corpus is copied 2.1 s before the first build, so its files are not "racy" for
  ``oya.scanning.scan_cache`` (files changed < 2 s before a scan are read again by the next one).
* Both variants use the same embedder and embedding cache, so embedding is the same small cost.
* ``cpu`` is the build process's CPU seconds (all its threads) during ``run_build``: on a machine
  shared with other jobs it moves much less than wall seconds do.

* ``--site`` builds the wiki too (``oya build --site``: pages, runtime, bundle), so the two site
  assets are measured as well.

Run: ``.venv/bin/python -m bench.experiments.rebuild_ab BEFORE_DIR AFTER_DIR [--rounds 3] [--embedder hashing]
[--site]``. It prints its table; the runs docs/performance.md and docs/DECISIONS.md cite are kept as
``bench/results/archive/rebuild_ab*.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import fetch_project

INDEX_ASSETS = ("source_files", "code_graph", "chunks", "chunk_embeddings", "search_index")
SITE_ASSETS = ("wiki_pages", "wiki_site")
EDIT = ("networkx/utils/misc.py", '    """\n')  # the first docstring's end gets one line after it
_CHILD = """
import json, sys, time
from pathlib import Path
from pipelines.build import run_build
t, cpu = time.perf_counter(), time.process_time()
s = run_build(Path(sys.argv[1]), Path(sys.argv[2]), embedder=sys.argv[3], cache_dir=Path(sys.argv[4]),
              with_site=sys.argv[5] == "site").to_dict()
print(json.dumps({"run_build": time.perf_counter() - t, "cpu": time.process_time() - cpu,
                  "assets": {r["asset"]: r["seconds"] for r in s["assets"]}}))
"""


def build(root: Path, repo: Path, out: Path, embedder: str, cache: Path, site: bool) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(repo), str(out), embedder, str(cache), "site" if site else "-"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"build under {root} failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall"] = time.perf_counter() - t0
    return result


def _seconds(row: dict[str, object], key: str) -> float:
    """One row's seconds for ``key``: run_build, an asset, or the overhead (run_build minus assets)."""
    assets = row["assets"]
    assert isinstance(assets, dict)
    if key in ("run_build", "cpu"):
        return float(row[key])  # type: ignore[arg-type]
    if key == "overhead":
        return float(row["run_build"]) - sum(float(v) for v in assets.values())  # type: ignore[arg-type]
    return float(assets[key])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--project", default="networkx==3.6.1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--embedder", default="hashing", choices=["hashing", "minilm"])
    ap.add_argument("--site", action="store_true", help="build and measure the wiki too")
    args = ap.parse_args()
    assets = INDEX_ASSETS + (SITE_ASSETS if args.site else ())
    src = fetch_project(args.project)
    work = Path(tempfile.mkdtemp(prefix="oya-rebuild-ab-"))
    cache = work / "cache"
    rows: dict[str, list[dict[str, object]]] = {"before": [], "after": []}
    try:
        for rnd in range(args.rounds):
            for name, root in (("before", args.before), ("after", args.after)):
                repo, out = work / "repo", work / f"out-{name}-{rnd}"
                shutil.rmtree(repo, ignore_errors=True)
                shutil.copytree(src, repo)
                time.sleep(2.1)  # past oya.scanning.scan_cache's racy window, as a repository's old files are
                build(root.resolve(), repo, out, args.embedder, cache, args.site)
                path, marker = repo / EDIT[0], EDIT[1]
                path.write_text(path.read_text().replace(marker, f"{marker}    _ab_edit = {rnd}\n", 1))
                load = os.getloadavg()[0]
                row = build(root.resolve(), repo, out, args.embedder, cache, args.site)
                row["load"] = load
                rows[name].append(row)
                seconds = row["assets"]
                assert isinstance(seconds, dict)
                print(
                    f"{name:<6} round {rnd}  load {load:4.1f}  run_build {row['run_build']:6.2f} s  "
                    f"cpu {row['cpu']:6.2f} s  " + "  ".join(f"{a} {seconds[a]:.2f}" for a in assets),
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\nmedian seconds of the one-file rebuild")
    print(f"{'':<18}{'before':>10}{'after':>10}{'after/before':>14}")
    for key in ("run_build", *assets, "overhead", "cpu"):
        values = {n: statistics.median(_seconds(r, key) for r in rs) for n, rs in rows.items()}
        ratio = values["after"] / values["before"] if values["before"] else float("nan")
        print(f"{key:<18}{values['before']:>10.2f}{values['after']:>10.2f}{ratio:>14.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
