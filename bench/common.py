"""What every benchmark shares: where things are, percentiles, a stopwatch, the machine's facts and
writing a result file.

Theory of operation:

* The benchmarks are one package, run from the repository root as ``python -m bench.<name>``
  (``python -m bench.experiments.<name>`` for a finished experiment), so they import each other
  and ``oya`` by package name and never edit ``sys.path``. Code outside the package (the commits
  set's ``score.py``, a project's unpacked sdist, a wheel unpacked into the cache) is loaded with
  :func:`import_from`, which finds it in the one folder given and leaves ``sys.path`` alone.
* Percentiles are nearest-rank (no interpolation): p95 of 100 values is the 95th smallest, and
  every reported value is one that was measured. One formula for every bench, so a p95 in one
  table means what it means in another. (Until issue 23 three formulas were in use; the benches
  whose numbers that touched say so in their docstrings.)
* The machine's facts (CPU, cores, memory, load average, the code's commit) are recorded beside
  every timing: these machines are shared, and a number means little without the load it ran at.
* Result files are JSON with a final newline, written through a temporary file and renamed, so
  an interrupted run never leaves half a result where ``bench/doc_tables.py`` reads it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import math
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "bench"
# one current result file per standing benchmark; the archive keeps what a decision cites as evidence
RESULTS = BENCH_DIR / "results"
ARCHIVE = RESULTS / "archive"
CACHE_DIR = BENCH_DIR / ".cache"  # downloads, indexes and logs; gitignored

# the libraries whose versions move a timing (listed by machine() when installed)
_VERSIONS = ("dagster", "duckdb", "numpy", "torch", "sentence-transformers", "tree-sitter")


# -- statistics -------------------------------------------------------------------------------------
def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile, ``p`` in 0..100: the smallest value with at least p % of the values
    at or below it (NaN for no values)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(p / 100 * len(ordered))))
    return ordered[rank - 1]


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.seconds`` / ``sw.ms`` (``time.perf_counter``);
    read inside the block, it gives the time so far."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.end: float | None = None

    def __enter__(self) -> Stopwatch:
        self.start, self.end = time.perf_counter(), None
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.end = time.perf_counter()

    @property
    def seconds(self) -> float:
        return (self.end if self.end is not None else time.perf_counter()) - self.start

    @property
    def ms(self) -> float:
        return self.seconds * 1000


# -- the machine ------------------------------------------------------------------------------------
def load_avg() -> list[float]:
    """The 1, 5 and 15-minute load averages, rounded to 0.01."""
    return [round(x, 2) for x in os.getloadavg()]


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gb() -> float:
    """Total memory in GiB (0.0 where /proc/meminfo is missing)."""
    try:
        return round(int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024, 1)
    except (OSError, IndexError, ValueError):
        return 0.0


def git_head(dirty_paths: Sequence[str] = ()) -> str:
    """This checkout's short commit, with ``+dirty`` when tracked files (under ``dirty_paths``, or
    anywhere when none are given) have uncommitted changes."""
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    status = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", *dirty_paths],
        capture_output=True,
        text=True,
    )
    return head.stdout.strip() + ("+dirty" if status.stdout.strip() else "")


def machine() -> dict[str, Any]:
    """The facts a timing needs beside it; ``load_avg_start`` is now (add ``load_avg_end`` after)."""
    versions = {}
    for pkg in _VERSIONS:
        try:
            from importlib.metadata import version

            versions[pkg] = version(pkg)
        except Exception:  # noqa: BLE001 - a missing package is just not listed
            pass
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu_name(),
        "cpus": os.cpu_count(),
        "memory_gb": memory_gb(),
        "load_avg_start": load_avg(),
        # the product's code: a bench edit does not make the measured code dirty
        "oya_commit": git_head(("oya", "pipelines")),
        "versions": versions,
    }


# -- files ------------------------------------------------------------------------------------------
def write_json(path: Path, data: Any, *, indent: int | None = 2, sort_keys: bool = False) -> None:
    """``data`` as JSON with a final newline, written whole or not at all (temporary file, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=indent, sort_keys=sort_keys, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def import_from(folder: Path, name: str) -> ModuleType:
    """Import the module or package ``name`` found directly in ``folder`` (a ``.py`` file, a package
    folder or an extension module), without putting ``folder`` on ``sys.path``. Once imported it is
    in ``sys.modules``, so a package's own submodule imports resolve inside it as usual."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.machinery.PathFinder.find_spec(name, [str(folder)])
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module {name!r} in {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
