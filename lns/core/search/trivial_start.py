"""Trivial points as the first incumbent of a large problem, when a SCIP start would cost more
than its share of the budget.

A SCIP start works on the whole problem: it builds SCIP's model (for a problem held in memory)
and presolves it before its first solution, in time that grows with the nonzeros
(:data:`START_SECONDS_PER_NONZERO`); on a problem with hundreds of thousands of rows that alone
can take more than the share of the budget the start may have, and SCIP may not stop in the
middle of it. Many such problems have a trivial feasible point (the empty set of an independent
set problem, every column of a set cover); SCIP's own trivial heuristic tries the same points.
:class:`TrivialFirst` tries them in bulk (one sparse product for all of them) and, where one is
feasible and the SCIP start would overrun the share, starts the run from the best of them: the
LNS then improves it with sub-MIPs of the neighborhood alone (:mod:`lns.core.problem.reduced`),
and the whole model is built only if a later solve needs it. Everywhere else the wrapped strategy
runs as it would alone.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from lns.core.problem.mip import Problem
from lns.core.search.start import StartStrategy, StartTask
from lns.core.solvers.protocol import FoundSolution, SolveOutcome, SolveStatus

log = logging.getLogger("lns")

#: Seconds per nonzero a SCIP start is taken to need before its first solution: the rate at which
#: :meth:`lns.core.problem.mip.Problem.to_scip` builds a model; presolving a model read from a file
#: took less (a 96,000-node independent set problem: 3.1 s to its first solution, 4 microseconds
#: per nonzero), so the estimate leans towards the trivial point.
START_SECONDS_PER_NONZERO = 1e-5


def rounded_bounds(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """The variables' bounds, those of integer variables rounded inwards (no ``-0.0``)."""
    integer = problem.integer_mask
    lower = np.where(integer, np.ceil(problem.lower - 1e-9), problem.lower) + 0.0
    upper = np.where(integer, np.floor(problem.upper + 1e-9), problem.upper) + 0.0
    return lower, upper


def start_from(task: StartTask, x: np.ndarray) -> SolveOutcome:
    """Offer ``x`` to the run's incumbent as the start's one solution; the outcome of a start
    that ends there."""
    found = FoundSolution(time.perf_counter(), task.problem.objective_value(x), x)
    task.on_found(found)
    return SolveOutcome(SolveStatus.TIME_LIMIT, [found], 0.0)


def trivial_points(problem: Problem) -> np.ndarray:
    """Candidate points, one per column: zero, the lower bounds, the upper bounds, and each
    variable at the bound its objective prefers (an infinite bound replaced by the point
    nearest zero; integer variables' bounds rounded inwards)."""
    lower, upper = rounded_bounds(problem)
    zero = np.clip(0.0, lower, upper)
    at_lower = np.where(np.isfinite(lower), lower, zero)
    at_upper = np.where(np.isfinite(upper), upper, zero)
    cheaper = problem.min_objective
    preferred = np.where(cheaper > 0, at_lower, np.where(cheaper < 0, at_upper, zero))
    return np.column_stack([zero, at_lower, at_upper, preferred])


def best_trivial_point(problem: Problem) -> np.ndarray | None:
    """The feasible point of :func:`trivial_points` with the best objective, or ``None``."""
    points = trivial_points(problem)
    activities = problem.matrix @ points
    feasible = [
        points[:, k]
        for k in range(points.shape[1])
        if problem.check(points[:, k], activity=activities[:, k]).feasible
    ]
    if not feasible:
        return None
    return min(feasible, key=lambda x: problem.min_objective @ x)


def start_seconds(problem: Problem) -> float:
    """Estimated seconds a SCIP start on ``problem`` takes to its first solution."""
    return problem.matrix.nnz * START_SECONDS_PER_NONZERO


@dataclass(frozen=True)
class TrivialFirst:
    """``then`` as it is, unless a SCIP start would take more than ``share`` of the start's time
    limit to its first solution (:func:`start_seconds`) and a trivial point is feasible: then the
    best trivial point is the start.

    Parameters
    ----------
    then : StartStrategy
        The strategy it stands in for (its name is this one's).
    share : float
        The share of the time limit the start may take (``StartParams.max_share``).
    """

    then: StartStrategy
    share: float

    @property
    def name(self) -> str:
        return self.then.name

    def __call__(self, task: StartTask) -> SolveOutcome:
        estimate = start_seconds(task.problem)
        if estimate <= self.share * task.time_limit:
            return self.then(task)
        x = best_trivial_point(task.problem)
        if x is None:
            return self.then(task)
        log.info(
            "%s: starts from a trivial point (a SCIP start would take about %.1fs to its first "
            "solution)",
            task.problem.name,
            estimate,
        )
        return start_from(task, x)
