"""A one-line live progress bar over the time budget, for terminals."""

from __future__ import annotations

import sys
import time

from lns.core.search.metrics import primal_gap
from lns.core.search.result import Callback, Improvement, IterationRecord


class ProgressBar(Callback):
    """Redraws ``[####....]  12.3/60s  best 28249  gap 6.6%  it 155  k 3598``, 10 times a second."""

    def __init__(
        self,
        time_limit: float | None,
        optimum: float | None = None,
        stream=sys.stderr,
        width: int = 30,
    ):
        self.time_limit = time_limit
        self.optimum = optimum
        self.stream = stream
        self.width = width
        self.started = time.perf_counter()
        self.best: float | None = None
        self.iteration = 0
        self.size = 0
        self._drawn = 0.0

    def on_improvement(self, improvement: Improvement) -> None:
        self.best = improvement.objective
        self._draw(force=True)

    def on_iteration(self, record: IterationRecord) -> None:
        self.iteration, self.size = record.iteration + 1, record.neighborhood_size
        self._draw()

    def filter(self, record) -> bool:
        """A ``logging`` filter: wipe the bar's line so that the next log line stands alone."""
        self.stream.write("\r\x1b[K")
        self.stream.flush()
        self._drawn = 0.0
        return True

    def close(self) -> None:
        self._draw(force=True)
        self.stream.write("\n")
        self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self._drawn < 0.1:
            return
        self._drawn = now
        elapsed = now - self.started
        if self.time_limit:
            filled = min(self.width, int(self.width * elapsed / self.time_limit))
            bar = (
                f"[{'#' * filled}{'.' * (self.width - filled)}] {elapsed:6.1f}/{self.time_limit:g}s"
            )
        else:
            bar = f"{elapsed:6.1f}s"
        best = "none" if self.best is None else f"{self.best:.10g}"
        gap = (
            ""
            if self.optimum is None or self.best is None
            else f"  gap {100 * primal_gap(self.best, self.optimum):.2f}%"
        )
        self.stream.write(f"\r{bar}  best {best}{gap}  it {self.iteration}  k {self.size}   ")
        self.stream.flush()
