"""Real ``oya build`` runs for the edge tests: a subprocess with the hashing embedder, and a cache
that borrows the machine's npm install and its Brotli copies of the runtime (both keyed by content),
so a ``--site`` build ships the real runtime and bundle without paying for ``npm ci`` and a minute of
Brotli per test (the pattern of tests/pipelines/test_cache_dir.py).

(A plain module, not a conftest.py: see tests/core/core_corpus.py for why.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from oya.settings import default_cache_dir
from oya.site.vendor import ensure_vendor

ROOT = Path(__file__).resolve().parents[2]


def runtime_cache(tmp_path: Path) -> Path:
    """A fresh cache folder whose ``npm`` and ``compressed`` are the machine's."""
    shared = default_cache_dir()
    lent = {"npm": ensure_vendor(shared).parent, "compressed": shared / "compressed"}
    lent["compressed"].mkdir(parents=True, exist_ok=True)
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    for name, target in lent.items():
        if not (cache / name).exists():
            (cache / name).symlink_to(target, target_is_directory=True)
    return cache


def oya(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m oya ARGS`` from this checkout; stdout and stderr captured."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OYA_DEBUG", None)  # errors as the user sees them: one line, no traceback
    return subprocess.run(
        [sys.executable, "-m", "oya", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def oya_build(repo: Path, out: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``oya build REPO --out OUT --site`` with the hashing embedder."""
    return oya(
        "build", str(repo), "--out", str(out), "--site", "--embedder", "hashing",
        "--cache-dir", str(cache), "-q", *extra,
    )  # fmt: skip


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The non-blank lines of a run's stderr."""
    return [line for line in done.stderr.splitlines() if line.strip()]
