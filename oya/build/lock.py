"""One writer per output folder: an exclusive ``flock`` on ``<out>/.oya.lock``.

Theory of operation. Every build writes aside (``.index.duckdb.<uuid>.staged``, ``.site.new-<token>``)
so two builds of one folder never write the same file; what they can break is each other's
*publish* (two site swaps interleaved: one fails on the rename, or the live site comes from one
build and the live index from the other) and the clean-up of leftovers (a concurrent build's
staged files look like a killed build's). So the swap, and the clean-up at a build's start, run
holding this lock:

* ``oya build`` holds it for the whole build and does not wait: a second ``oya build`` of the same
  folder fails at once with one line (``OutputBusyError``).
* A Dagster step (the leftover clean-up in ``source_files``, the swap in ``published_site``) waits
  for it, up to ``WAIT_SECONDS``, then fails with the same error. In a deployment two runs of one
  repository never overlap anyway (``dagster.yaml``: one run per ``dagster/partition`` value), so
  the wait only happens when an ``oya build`` and a run share a folder.

The lock is re-entrant within a process: ``oya build`` runs its steps in-process, and its publish
step must not wait for the lock its own build holds. ``flock`` is released by the kernel when the
holder dies, so a killed build never leaves the folder locked (the lock file itself stays, empty).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from oya.build.ownership import LOCK_FILE
from oya.errors import OutputBusyError

WAIT_SECONDS = 600.0
_POLL = 0.1
_held: dict[Path, int] = {}  # lock path -> depth, in this process
_guard = threading.Lock()


@contextmanager
def output_lock(out: Path, *, wait: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold the output folder's lock; ``wait`` seconds at most (0: fail at once if it is taken)."""
    path = (Path(out) / LOCK_FILE).resolve()
    with _guard:
        if path in _held:
            _held[path] += 1
            fd = -1
        else:
            fd = _acquire(path, wait)
            _held[path] = 1
    try:
        yield
    finally:
        with _guard:
            _held[path] -= 1
            if _held[path] == 0:
                del _held[path]
                if fd >= 0:
                    os.close(fd)  # closing the descriptor releases the flock


def _acquire(path: Path, wait: float) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                waited = f" after waiting {wait:.0f} s" if wait else ""
                raise OutputBusyError(
                    f"another build is writing {path.parent} (its lock {path.name} is held){waited}; "
                    "wait for it to finish or build into another folder"
                ) from None
            time.sleep(_POLL)
