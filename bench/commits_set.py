"""The commits eval set as the bench uses it: its queries, a sample of them, trees, the scorer.

The set's own scripts do the work (``materialize.sh`` extracts a tree, ``score.py`` scores);
this module only calls them and never writes inside the set's folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# extensions no index reads (the estimate leaves them out)
_BINARY = (
    ".png",
    ".jpg",
    ".gif",
    ".ico",
    ".woff",
    ".woff2",
    ".ttf",
    ".svg",
    ".gz",
    ".zip",
    ".jar",
    ".pdf",
    ".lock",
)


class EvalSet:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        qfile = folder / "queries.jsonl"
        if not qfile.exists():
            raise SystemExit(f"no eval set at {folder} (queries.jsonl missing)")
        self.queries = [json.loads(line) for line in qfile.read_text().splitlines() if line.strip()]
        self.mirrors = os.environ.get("OYA_MIRRORS", "")
        if not self.mirrors:
            raise SystemExit("set OYA_MIRRORS to the folder holding <owner>+<name>/repo snapshots")

    def gitdir(self, repo: str) -> Path:
        return Path(self.mirrors) / repo.replace("/", "+") / "repo"

    def materialize(self, qid: str, dest: Path) -> Path:
        """The query's base tree in ``dest`` (extracted once; a finished tree has its marker file)."""
        if (dest / ".materialize_missing").exists():
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [str(self.folder / "materialize.sh"), qid, str(dest)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"materialize.sh {qid} failed: {proc.stderr.strip()}")
        return dest

    def estimate_chunks(self, queries: Sequence[dict[str, Any]], bytes_per_chunk: int) -> int:
        """Chunks the first build of each repository embeds, from its first tree's text bytes."""
        first: dict[str, str] = {}
        for q in queries:
            first.setdefault(q["repo"], q["base_commit"])
        total = 0
        for repo, commit in first.items():
            out = subprocess.run(
                ["git", f"--git-dir={self.gitdir(repo)}", "ls-tree", "-r", "-l", commit],
                capture_output=True,
                text=True,
            ).stdout
            for line in out.splitlines():
                meta, path = line.split("\t", 1)
                _mode, kind, _sha, size = meta.split()
                if kind == "blob" and size.isdigit() and int(size) < 1_000_000 and not path.endswith(_BINARY):
                    total += int(size)
        return total // bytes_per_chunk

    def score(self, preds: Path) -> dict[str, Any]:
        """``score.py --json`` on ``preds`` (queries the run did not cover are left out first)."""
        ids = {json.loads(line)["id"] for line in preds.read_text().splitlines() if line.strip()}
        subset = preds.with_suffix(".queries.jsonl")
        subset.write_text("".join(json.dumps(q) + "\n" for q in self.queries if q["id"] in ids))
        proc = subprocess.run(
            [sys.executable, str(self.folder / "score.py"), str(subset), str(preds), "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        return dict(json.loads(proc.stdout))


def sample(
    queries: Sequence[dict[str, Any]], repos: str, languages: str, per_repo: int, how: str = "oldest"
) -> list[dict[str, Any]]:
    """Queries of the chosen repositories/languages; ``per_repo`` > 0 keeps that many per
    repository: the oldest fixes (``oldest``: consecutive commits share most chunks, so each
    later build embeds a fraction) or evenly spread from oldest to newest (``spread``: every
    build embeds nearly all its chunks anew)."""
    want_repos = {r.strip() for r in repos.split(",") if r.strip()}
    want_langs = {x.strip().lower() for x in languages.split(",") if x.strip()}
    by_repo: dict[str, list[dict[str, Any]]] = {}
    for q in queries:
        if want_repos and q["repo"] not in want_repos:
            continue
        if want_langs and q["language"].lower() not in want_langs:
            continue
        by_repo.setdefault(q["repo"], []).append(q)
    out: list[dict[str, Any]] = []
    for qs in by_repo.values():
        if 0 < per_repo < len(qs) and how == "oldest":
            qs = qs[:per_repo]
        elif 0 < per_repo < len(qs):
            step = (len(qs) - 1) / max(per_repo - 1, 1)
            picks = sorted({round(i * step) for i in range(per_repo)})
            qs = [qs[i] for i in picks]
        out.extend(qs)
    return out
