"""The site's one-off preparations, run in a child process beside the index steps of a first build.

Theory of operation:

* Part of a site build depends only on Oya's pins, never on the repository: ``npm ci`` of the
  browser runtime with Pyodide's standard library precompiled (``oya.site.vendor``), the query
  model's ONNX export (``oya.embedding.model_export``) and the Brotli 11 / gzip 9 copies of the
  runtime's and the model's files (``oya.site.assets``, cached by content digest). Each is kept in
  the cache folder, so it is paid once per machine — but on a first build it is paid in full, one
  thread at a time, after the embedding: minutes for Brotli 11 alone.
* ``start_preparation`` (``pipelines.build.run_build``, when it builds a site with its runtime) runs
  ``python -m oya.site.prepare <cache>`` at the lowest CPU priority as the build starts. It fills
  those caches with the CPU the index steps leave idle (the parse is one thread; onnxruntime's two
  threads wait on each other between operators), compressing on every core.
* It holds ``<cache>/.prepare.lock`` (taken by the parent before the child starts, so there is no
  window where it is not held) until it ends; ``wait_for_preparation`` (the site step, before its
  runtime) waits for that lock. The child only fills caches the site step reads, each written
  whole and renamed into place, keyed by content or version, so the site is byte for byte what the
  site step makes alone: whatever the child did not finish (it failed, was killed, was never
  started — a Dagster run) the site step does itself as before. A build that fails ends the child.
* With a warm cache the child finds everything done and ends in about a second.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

LOCK_NAME = ".prepare.lock"
WAIT_LIMIT_S = 3600.0  # past this the site step stops waiting and does what is left itself
STOP_GRACE_S = 3.0  # a stopped child has this long to end before it is killed


def compressed_dir(cache_root: Path) -> Path:
    """Where the runtime's compressed copies are kept (``oya.site.build`` passes the same folder)."""
    return cache_root / "compressed"


def start_preparation(
    cache_root: Path, command: Sequence[str] | None = None
) -> subprocess.Popen[bytes] | None:
    """Start the child that prepares the runtime in ``cache_root`` (``command``: another child, for
    tests); None if it cannot start or another build's child prepares this cache already."""
    cache_root.mkdir(parents=True, exist_ok=True)
    lock = os.open(cache_root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another build's child is preparing this cache: the site step waits for it
            return None
        # the lock belongs to the open file, which the child inherits: it is held until the child ends
        return subprocess.Popen(
            list(command or [sys.executable, "-m", "oya.site.prepare", str(cache_root)]),
            pass_fds=(lock,),
            # its own process group, for ``stop_preparation`` to end its workers too; not its own
            # session: with autogroup scheduling (Linux's default) a new session gets an equal share
            # of the CPU whatever its nice value, and the child took 73% of a core from the embedding
            process_group=0,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    finally:
        os.close(lock)


def wait_for_preparation(cache_root: Path, limit_s: float = WAIT_LIMIT_S) -> float:
    """Wait until no child prepares ``cache_root``; return the seconds waited."""
    path = cache_root / LOCK_NAME
    if not path.is_file():
        return 0.0
    t0 = time.perf_counter()
    with open(path, "rb") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(handle, fcntl.LOCK_UN)
                break
            except BlockingIOError:
                if time.perf_counter() - t0 > limit_s:
                    break
                time.sleep(0.1)
    return time.perf_counter() - t0


def stop_preparation(child: subprocess.Popen[bytes] | None) -> None:
    """End the child if it still runs (the build failed before its site step): asked to stop, then
    killed after ``STOP_GRACE_S`` (a child that inherited SIGTERM blocked or ignored would otherwise
    finish its minutes of work, holding the lock, before the build could end)."""
    if child is not None and child.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def _compress_one(path: str, cache: str) -> None:
    from oya.site.assets import precompress_runtime_file

    precompress_runtime_file(Path(path).read_bytes(), Path(cache))


def _compress_all(pool: ProcessPoolExecutor, paths: Iterable[Path], cache: Path) -> list[Future[None]]:
    from oya.site.assets import needs_compressing

    todo = sorted((p for p in paths if needs_compressing(p)), key=lambda p: p.stat().st_size, reverse=True)
    return [pool.submit(_compress_one, str(p), str(cache)) for p in todo]  # largest first: cores end together


def prepare(cache_root: Path, workers: int | None = None) -> None:
    """Export, install and compress everything a site's runtime needs into ``cache_root``.

    The model first (the build's embedder needs it at once, and it is the longest file to compress),
    its compression running while ``npm ci`` installs the runtime, whose files follow.
    """
    from oya.embedding.model_export import export_query_model
    from oya.site.vendor import MODEL_FILES, ensure_vendor, runtime_files

    cache = compressed_dir(cache_root)
    with ProcessPoolExecutor(workers or os.cpu_count() or 1) as pool:
        model_dir = export_query_model(cache_root)
        running = _compress_all(pool, (model_dir / rel for rel in MODEL_FILES), cache)
        modules = ensure_vendor(cache_root)
        running += _compress_all(pool, (src for src, _, _ in runtime_files(modules)), cache)
        for done in running:
            done.result()


def main(argv: list[str]) -> int:
    cache_root = Path(argv[0])
    os.nice(19)  # only the CPU the build leaves idle; its workers inherit it
    try:
        prepare(cache_root)
    except Exception:  # noqa: BLE001 — the site step does whatever is left, and reports its own errors
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
