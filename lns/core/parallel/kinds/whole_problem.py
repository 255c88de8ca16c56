"""What the ``scip`` and ``cpsat`` worker kinds share: a solver of the whole problem, restarted
from the newest shared incumbent."""

from __future__ import annotations

from typing import Any

import numpy as np

from lns.core.parallel.kinds.protocol import KindWorker
from lns.core.search.loop import as_status, stop_state
from lns.core.search.stop import StopReason
from lns.core.solvers.protocol import SEED_BOUND, SolveStatus

#: Seconds of a whole-problem worker's first solve (each restart doubles them).
FIRST_SEGMENT = 10.0


class WholeProblemWorker(KindWorker):
    """A complete solver (:attr:`solver`, a :class:`lns.core.solvers.protocol.SubSolver` built by
    :meth:`prepare`) on the whole problem, restarted from the newest shared incumbent.

    Each solve starts from the incumbent, which is also its cutoff, and runs for
    :data:`FIRST_SEGMENT` seconds, twice as long as the one before after each restart (so at
    most about half of its time is spent repeating work that a restart discards); a pause
    ends the solve, and the next one, after the pause, starts from the incumbent of then. A
    solver that keeps its search (SCIP's ``resume``) continues it instead of starting again,
    the incumbent of then handed to it.
    Solutions are sent to the main process as the solver finds them. When a solve ends proven
    (optimal, or infeasible under the cutoff), the incumbent is optimal: the worker ends with
    ``StopReason.OPTIMAL``, which ends the run.
    """

    solver: Any = None
    #: Seconds of the first solve.
    first_segment = FIRST_SEGMENT

    def interrupt(self) -> None:
        if self.solver is not None:
            self.solver.stop()

    def search(self, rng: np.random.Generator) -> tuple[list, StopReason]:
        segment = self.first_segment
        while True:
            reason = self.take()
            time_left = self.spec.stop.remaining(stop_state(self.incumbent, 0))
            if reason is not None or time_left <= 0:
                return [], reason or StopReason.TIME_LIMIT
            assert self.solver is not None, "prepare() builds the solver"
            outcome = self.solver.solve(
                time_limit=min(segment, time_left),
                seed=int(rng.integers(SEED_BOUND)),
                start=self.incumbent.x,
                on_found=self._found,
            )
            self.solves += 1
            status = as_status(outcome.status)
            if status.proven:  # a solver may find its optimum without proving it
                proves = getattr(self.solver, "proves", True)
                return [], StopReason.OPTIMAL if proves else StopReason.SOLVER_FINISHED
            if status is SolveStatus.ERROR:
                return [], StopReason.FAILURES
            if status is SolveStatus.INTERRUPTED:
                continue  # a pause or a stop: take() tells which
            if not status.usable_after:
                return [], StopReason.SUB_SOLVER_ABANDONED
            segment *= 2

    def _found(self, found) -> None:
        """A solution of the solver's (from its thread): to the incumbent and to the main
        process."""
        if self.incumbent.offer(found.x, found_at=found.time, source=self.kind):
            self.share(-1)
