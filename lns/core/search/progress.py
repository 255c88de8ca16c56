"""Progress reporting through ``logging``: one line per new incumbent."""

from __future__ import annotations

import logging

from lns.core.search.metrics import primal_gap
from lns.core.search.result import Callback, Improvement

log = logging.getLogger("lns")


class ImprovementLogger(Callback):
    """Logs ``time, objective, iteration, neighborhood size`` (and the gap to ``optimum``) per
    improvement."""

    def __init__(self, instance: str, optimum: float | None = None):
        self.instance = instance
        self.optimum = optimum

    def on_improvement(self, improvement: Improvement) -> None:
        gap = ""
        if self.optimum is not None:
            gap = f"  gap {100 * primal_gap(improvement.objective, self.optimum):.3f}%"
        iteration = "initial" if improvement.iteration < 0 else f"iteration {improvement.iteration}"
        log.info(
            "%s  %7.2fs  objective %.10g  %s  k=%d  (%s)%s",
            self.instance,
            improvement.time,
            improvement.objective,
            iteration,
            improvement.neighborhood_size,
            improvement.source,
            gap,
        )
