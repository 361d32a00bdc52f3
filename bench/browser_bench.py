"""The first answer as a reader meets it, for this repository's own site: bytes over the wire and
seconds to the first answer, cold and warm, under 20 Mbit/s / 40 ms throttling (bench/browser_harness.py).

Theory of operation:

* The site: ``--site DIR`` (a built site), or this repository indexed and built into
  ``bench/.cache/browser_bench/`` with ``oya build . --site`` (MiniLM, so the site ships the query
  model). Reused when it exists unless ``--rebuild``.
* Hosts: ``oya serve`` (precompressed Brotli copies, immutable caching of hashed names) and a plain
  static server (the standard library's: no compression, Last-Modified only), the same site.
* Per host: a cold visit (fresh profile) and a warm one (same profile, new browser) asking the first
  question by deep link, then the other questions on the warm page. The first answer is what the
  panel shows first: while the query model still loads, that is the core's answer without the
  semantic channel (marked partial in the panel); "full" is the answer with every channel.
* Budgets (issue 14): cold first answer <= 8 s with <= 15 MB; warm first answer <= 2 s with < 1 MB.
  Times depend on the machine's load: the load average is printed beside them.

Run: ``.venv/bin/python -m bench.browser_bench [--site DIR] [--hosts oya,plain] [--cold-runs N]``;
writes ``bench/results/browser_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.browser_harness import Network, measure, warm_line
from bench.common import CACHE_DIR, RESULTS, ROOT, machine, write_json

WORK = CACHE_DIR / "browser_bench"
RESULT = RESULTS / "browser_bench.json"
BUDGETS = {"cold_s": 8.0, "cold_mb": 15.0, "warm_s": 2.0, "warm_mb": 1.0}
QUESTIONS = [
    "How are chunks embedded and cached?",
    "Where is the Ask panel's index bundle decoded?",
    "How does oya serve refuse requests from other hosts?",
    "Which function builds the static site?",
    "How are secrets redacted from chunks?",
    "How is the DuckDB index swapped in after a build?",
    "What does the lexical channel score with?",
    "How are file pages highlighted?",
    "Where is the confidence of an answer computed?",
    "How does the incremental build reuse parsed files?",
    "Which assets does the Dagster pipeline define?",
    "How does reciprocal rank fusion combine the channels?",
    "Where is the graph expanded two hops from the hits?",
    "How is the Mermaid diagram of an answer sanitised?",
    "What decides the HIGH, MEDIUM or LOW confidence?",
    "How are citations validated against the retrieved chunks?",
    "Where are tree-sitter parsers chosen for a file's language?",
    "How does the build write the new site aside and swap it in?",
    "How are test files ranked below source files?",
    "Where is the token budget of the context enforced?",
    "How does the local llama.cpp answerer build its prompt?",
    "Which files does the repository reader skip, and why?",
    "How are content-hashed asset names written to the manifest?",
    "How does the sensor find new commits of a repository?",
    "Where are call edges between functions resolved?",
    "How is the bundle's int8 vector index decoded in the browser?",
    "What happens when the semantic channel is unavailable?",
    "How does oya serve pick a precompressed file?",
    "Where is the path filter of --include and --exclude applied?",
    "How are duplicate chunks removed from the results?",
    "How is the search-quality report built?",
]


def build_site(rebuild: bool) -> Path:
    site = WORK / "index" / "site"
    if site.is_dir() and not rebuild:
        return site
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(WORK / "dagster")}
    (WORK / "dagster").mkdir(parents=True, exist_ok=True)
    (WORK / "dagster" / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    cmd = [sys.executable, "-m", "oya", "build", str(ROOT), "--out", str(WORK / "index"), "--site", "-q"]
    subprocess.run(cmd, check=True, env=env, cwd=ROOT)
    return site


def verdict(r: dict[str, Any]) -> dict[str, bool]:
    return {
        "cold_s": r["cold"]["seconds"] <= BUDGETS["cold_s"],
        "cold_mb": r["cold"]["bytes"] / 1e6 <= BUDGETS["cold_mb"],
        "warm_s": r["warm"]["seconds"] <= BUDGETS["warm_s"],
        "warm_mb": r["warm"]["bytes"] / 1e6 < BUDGETS["warm_mb"],
    }


def print_table(out: dict[str, Any]) -> None:
    print(f"\n{out['site']} — {out['date']}, {out['machine']['cpus']} CPUs, throttled {out['network']}")
    head = f"{'host':<7}{'visit':<6}{'MB to 1st':>10}{'s to 1st':>9}{'MB to full':>11}{'s to full':>10}{'MB visit':>9}"
    print(head + f"{'requests':>9}  load avg (1 min) before/after")
    for host, r in out["hosts"].items():
        for visit in ("cold", "warm"):
            v = r[visit]
            print(
                f"{host:<7}{visit:<6}{v['bytes'] / 1e6:>10.2f}{v['seconds']:>9.2f}{v['bytes_to_full_answer'] / 1e6:>11.2f}"
                f"{v['full_answer_seconds']:>10.2f}{v['bytes_in_visit'] / 1e6:>9.2f}{v['requests']:>9}"
                f"  {r['loadavg_before'][0]} / {r['loadavg_after'][0]}"
            )
        w = r.get("warm_questions")
        if w:
            print(f"{host:<7}{warm_line(w)}; memory {r['memory']}")
        print(f"{host:<7}budgets met: {verdict(r)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", type=Path, help="a built site (default: build this repository's)")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--hosts", default="oya,plain")
    ap.add_argument("--cold-runs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=RESULT)
    args = ap.parse_args()
    site = args.site or build_site(args.rebuild)
    network = Network()
    out: dict[str, Any] = {
        "site": str(site),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "network": f"{network.down_mbit:g} Mbit/s, {network.rtt_ms:g} ms RTT",
        "budgets": BUDGETS,
        "counts": json.loads((site / "manifest.json").read_text(encoding="utf-8")).get("counts", {}),
        "hosts": {},
    }
    for host in args.hosts.split(","):
        print(f"measuring {host} …", flush=True)
        result = measure(site, QUESTIONS, server=host, network=network, cold_runs=args.cold_runs)
        result["budgets_met"] = verdict(result)
        out["hosts"][host] = result
    write_json(args.out, out)
    print_table(out)
    print(f"\nresults: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
