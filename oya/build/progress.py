"""Progress of long build steps as log lines: "chunk_embeddings: 4,000/10,481 embedded, ETA 1m20s".

Theory of operation:

* The terminal gets a live bar from ``pipelines.build`` (rich, with an ETA column). Dagster's log (and so
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
