"""The incumbent: the one place where a solution is checked and becomes the best.

Every solution of a run (the initial solve, a selector's own solution, each sub-solve's,
plain SCIP's and CP-SAT's) is offered to one :class:`Incumbent`. It rounds the integer
values, asks the acceptance rule, checks the point against the original problem, and
only then keeps it, appends it to the trajectory and tells the callbacks, so that no run
reports an infeasible point.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from lns.core.problem.mip import Change, Problem
from lns.core.search.result import Callback, Improvement

log = logging.getLogger("lns")


class ImprovingOnly:
    """Acceptance: a candidate replaces the incumbent when it improves by more than
    ``tol * max(1, |incumbent|)`` (see :meth:`lns.core.problem.mip.Problem.is_better`).

    An acceptance rule is a callable ``(problem, candidate, incumbent) -> bool`` on objective
    values (``incumbent`` is ``None`` before the first solution). The incumbent is the best
    solution of the run, so a rule may accept ties (a sideways move to another solution of the
    same objective) but never a worse objective: :class:`Incumbent` refuses those itself.
    """

    def __init__(self, tol: float = 1e-6):
        self.tol = tol

    def __call__(self, problem: Problem, candidate: float, incumbent: float | None) -> bool:
        return problem.is_better(candidate, incumbent, self.tol)


class Incumbent:
    """The best feasible solution so far, its predecessors and the trajectory of its objective.

    Parameters
    ----------
    problem : Problem
        The original problem, against which every solution is checked.
    started : float
        ``time.perf_counter()`` at which the run started; times are relative to it.
    acceptance : callable, optional
        ``(problem, candidate, incumbent) -> bool`` on objectives; default :class:`ImprovingOnly`.
    history_length : int
        Earlier incumbents kept in :attr:`history` (most recent first).
    callbacks : list of Callback
        ``on_improvement`` is called for every new objective.
    check : bool
        Check each candidate against the problem. A portfolio worker's incumbent does not: the
        main process's incumbent checks every solution once (:mod:`lns.core.parallel.portfolio`).

    Attributes
    ----------
    x : numpy.ndarray or None
        The incumbent (integers rounded).
    objective : float or None
    history : list of numpy.ndarray
    trajectory : list of (float, float)
        ``(seconds since start, objective)`` per improvement.
    improved_at : float
        ``time.perf_counter()`` of the last improvement (``started`` before the first).
    improved_iteration : int
        Iteration of the last improvement (-1: none in the loop yet).
    found_by : str or None
        The ``source`` of the last improvement.
    checks : int
        Candidates checked against the problem so far.
    """

    def __init__(
        self,
        problem: Problem,
        started: float,
        acceptance=None,
        history_length: int = 3,
        callbacks: list[Callback] | None = None,
        check: bool = True,
    ):
        self.problem = problem
        self.check, self.checks = check, 0
        self.started = started
        self.acceptance = acceptance if acceptance is not None else ImprovingOnly()
        self.history_length = history_length
        self.callbacks = list(callbacks or [])
        self.x: np.ndarray | None = None
        self.objective: float | None = None
        self.history: list = []
        self.trajectory: list = []
        self.improved_at = started
        self.improved_iteration = -1
        self.found_by: str | None = None

    def offer_found(self, found, source: str = "initial") -> bool:
        """Offer a :class:`lns.core.solvers.protocol.FoundSolution` of a solve of the whole
        problem."""
        return self.offer(found.x, found_at=found.time, source=source, change=found.change)

    def offer(
        self,
        x: np.ndarray,
        *,
        found_at: float,
        source: str,
        iteration: int = -1,
        size: int = 0,
        change: Change | None = None,
    ) -> bool:
        """Keep ``x`` if the acceptance takes it and it is feasible; return whether it was kept.

        Parameters
        ----------
        x : numpy.ndarray
            The candidate, in the problem's variable order.
        found_at : float
            ``time.perf_counter()`` when it was found.
        source : str
            A word for the records: ``"initial"``, ``"user"``, ``"selector"``, ``"subsolve"``,
            ``"cpsat"``, ...
        iteration, size : int
            The LNS iteration that found it and its neighborhood size; the defaults, -1 and 0,
            mean a solution found outside the loop (a start, a solve of the whole problem).
        change : Change, optional
            How ``x`` differs from the point it was found from: when that point is the
            incumbent or one before it (so known feasible), ``x`` (rounded already) is checked
            on what changed alone.
        """
        problem = self.problem
        if change is None or not any(change.base is kept for kept in (self.x, *self.history)):
            change = None
            x = problem.round_integers(np.asarray(x, dtype=float))
        objective = problem.objective_value(x) if change is None else change.objective
        worse = self.objective is not None and problem.is_better(self.objective, objective, 0.0)
        if worse or not self.acceptance(problem, objective, self.objective):
            return False
        if self.check:
            self.checks += 1
            check = problem.check(x, change=change)
            if not check.feasible:
                log.warning(
                    "%s: rejected a %s solution that violates the problem (%s)",
                    problem.name,
                    source,
                    check,
                )
                return False
        improves = problem.is_better(objective, self.objective, 0.0)
        if self.x is not None:
            self.history = [self.x, *self.history][: self.history_length]
        self.x, self.objective = x, objective
        if improves:
            # A portfolio's main process takes the workers' solutions in the order they arrive,
            # which may differ by milliseconds from the order they were found.
            elapsed = max(found_at - self.started, self.trajectory[-1][0] if self.trajectory else 0)
            self._improved(
                Improvement(
                    time=elapsed,
                    objective=objective,
                    iteration=iteration,
                    neighborhood_size=size,
                    source=source,
                ),
                found_at,
            )
        return True

    def adopt(self, x: np.ndarray, objective: float, iteration: int) -> None:
        """Take ``x``, checked elsewhere, as the incumbent even if it is worse (a portfolio
        worker takes the shared incumbent, or goes back to it after the main process refused
        its own solution)."""
        if self.x is not None:
            self.history = [self.x, *self.history][: self.history_length]
        if self.problem.is_better(objective, self.objective, 0.0):
            self.improved_at, self.improved_iteration = time.perf_counter(), iteration
        self.x, self.objective = x, objective

    def merge_reported(self, reported: list[tuple[float, float]], rtol: float = 1e-6) -> None:
        """Add to the trajectory objectives a solver reported without their solutions.

        CP-SAT on a MIP (:mod:`lns.core.baselines.cpsat_mip`) logs each improving objective but
        returns
        only its final solution, which :meth:`offer` checked. The ``(time.perf_counter(),
        objective)`` points of ``reported`` that lie before the incumbent's own point and are
        worse than it enter the trajectory, in time order, where they improve on the point
        before them; callbacks are not told. A point better than the checked incumbent (by
        more than ``rtol``, relative) means the log and the solution disagree: nothing is
        merged, and a warning says so.
        """
        problem, best = self.problem, self.objective
        if best is None or not reported:
            return
        scale = max(1.0, abs(best))
        if any(problem.is_better(value, best, rtol * scale) for _, value in reported):
            log.warning(
                "%s: the solver reported objectives better than its checked solution (%s); "
                "its logged trajectory is left out",
                problem.name,
                best,
            )
            return
        points = [(max(0.0, at - self.started), value) for at, value in reported]
        merged: list = []
        for elapsed, value in sorted(points + self.trajectory):
            if not merged or problem.is_better(value, merged[-1][1], 0.0):
                merged.append((elapsed, value))
        self.trajectory = merged

    def _improved(self, improvement: Improvement, found_at: float) -> None:
        self.improved_at, self.improved_iteration = found_at, improvement.iteration
        self.found_by = improvement.source
        self.trajectory.append((improvement.time, improvement.objective))
        for callback in self.callbacks:
            callback.on_improvement(improvement)

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.started
