"""Progress of long build steps: a live bar per step in the terminal, and log lines such as
"chunk_embeddings: 4,000/10,481 embedded, ETA 1m20s".

Theory of operation:

* The terminal gets ``ProgressBars`` (rich, with an ETA column), which ``oya build`` hands to
  ``pipelines.build.run_build``. Dagster's log (and so
  its UI, and the build's log file) gets lines, and those must stay few: a step of 10,000 chunks
  must not write 10,000 lines. ``ProgressLog`` writes the first update, then one whenever another
  tenth of the total is done or ``every_seconds`` have passed, whichever comes first, and always
  the last one; never two within ``min_interval`` seconds but for the last, so a step done in
  under a second writes two lines (each line is a Dagster event: ~1-3 ms to store, and a
  one-file rebuild's quick steps wrote ~40 of them).
* The ETA is the remaining work at the average rate since the step's first update (the first
  update's work is not counted: it often arrives before anything was done). No ETA until some
  work and a second have passed, none once the step is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def format_duration(seconds: float) -> str:
    """``80`` -> ``1m20s``, ``4000`` -> ``1h06m``, ``7.4`` -> ``7s``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


@dataclass
class ProgressLog:
    """Turns ``(done, total)`` updates of one step into a bounded number of log lines."""

    step: str
    unit: str
    log: Callable[[str], None]
    every_fraction: float = 0.1
    every_seconds: float = 5.0
    min_seconds: float = 1.0  # no ETA before this much time: the early rate is noise
    min_interval: float = 1.0  # between two lines, the last one excepted
    clock: Callable[[], float] = time.monotonic
    _start: tuple[float, int] | None = field(default=None, init=False)
    _last: tuple[float, int] | None = field(default=None, init=False)

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self._start is None:
            self._start = (now, done)
        if not self._due(now, done, total):
            return
        self._last = (now, done)
        line = f"{self.step}: {done:,}/{total:,} {self.unit}"
        eta = self.eta(now, done, total)
        if eta is not None:
            line += f", ETA {format_duration(eta)}"
        self.log(line)

    def _due(self, now: float, done: int, total: int) -> bool:
        if self._last is None:
            return True
        last_time, last_done = self._last
        if done >= total:  # the end is always written, once
            return last_done < done
        if now - last_time < self.min_interval:
            return False
        return (
            done - last_done >= self.every_fraction * max(total, 1) or now - last_time >= self.every_seconds
        )

    def eta(self, now: float, done: int, total: int) -> float | None:
        assert self._start is not None
        start_time, start_done = self._start
        elapsed, progressed = now - start_time, done - start_done
        if done >= total or progressed <= 0 or elapsed < self.min_seconds:
            return None
        return (total - done) * elapsed / progressed


class ProgressBars:
    """The terminal's live display of a build: one bar per step, with its count, elapsed time and
    ETA, gone once the build ends. A new step means the steps before it are done, so their bars
    are filled. Use it as a context manager around the build; ``update`` is what the build's
    ``Progress`` resource calls."""

    def __init__(self, console: Console) -> None:
        self._bar = Progress(
            TextColumn("[bold]{task.description:<18}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._tasks: dict[str, TaskID] = {}

    def update(self, step: str, done: int, total: int) -> None:
        bar, tasks = self._bar, self._tasks
        if step not in tasks:
            for tid in tasks.values():  # a new step means the previous ones are done
                bar.update(tid, completed=bar.tasks[tid].total)
            tasks[step] = bar.add_task(step, total=max(total, 1))
        bar.update(tasks[step], completed=done, total=max(total, 1))

    def __enter__(self) -> ProgressBars:
        self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._bar.stop()
