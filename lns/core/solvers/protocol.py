"""The sub-solver protocol: what the LNS loop asks of the solver of its sub-problems.

A sub-solver holds one model of the whole problem for a run and solves it again and
again with a different set of integer variables left free, the others fixed at the incumbent's
values. SCIP
(:class:`lns.core.solvers.scip.subsolver.ScipSubSolver`) solves any MILP; CP-SAT
(:class:`lns.core.solvers.cpsat.subsolver.CpSatSubSolver`) pure-integer problems. The loop
(:mod:`lns.core.search.loop`), the interrupt guard (:mod:`lns.core.interrupt`) and the tests'
fake sub-solver know nothing else of them than what is written here. Both run each solve
under a watchdog (:mod:`lns.core.solvers.watchdog`): a solve returns at most about a second after
its time limit, whatever the solver does (``ABANDONED`` when it had to be left running).
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from lns.core.errors import InvalidArgumentError, LNSError
from lns.core.problem.mip import Change, Problem

#: Seeds handed to a sub-solver are drawn from ``range(SEED_BOUND)``.
SEED_BOUND = 2**31 - 1


class SolveStatus(str, enum.Enum):
    """How one solve ended. The values are SCIP's status words, as stored in earlier records."""

    OPTIMAL = "optimal"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "inforunbd"
    TIME_LIMIT = "timelimit"
    NODE_LIMIT = "nodelimit"
    SOLUTION_LIMIT = "sollimit"
    GAP_LIMIT = "gaplimit"
    MEMORY_LIMIT = "memlimit"
    INTERRUPTED = "userinterrupt"
    ERROR = "error"
    ABANDONED = "abandoned"
    OTHER = "other"

    @property
    def proven(self) -> bool:
        """Nothing better than what the solve returned exists in the space it searched."""
        return self in (
            SolveStatus.OPTIMAL,
            SolveStatus.INFEASIBLE,
            SolveStatus.UNBOUNDED,
            SolveStatus.INFEASIBLE_OR_UNBOUNDED,
        )

    @property
    def out_of_time(self) -> bool:
        """The solve ended at its time limit, or ran past it and was left (``ABANDONED``): a
        neighborhood too hard for the time it was given, whichever way the solver stopped."""
        return self in (SolveStatus.TIME_LIMIT, SolveStatus.ABANDONED)

    @property
    def usable_after(self) -> bool:
        """The sub-solver can solve again (``ABANDONED``: a solve that ignored every stop
        request was left running, and the sub-solver refuses further solves with
        :class:`SubSolverAbandonedError`)."""
        return self is not SolveStatus.ABANDONED

    def __str__(self) -> str:
        return self.value


class SubSolverAbandonedError(LNSError, RuntimeError):
    """A solve was asked of a sub-solver whose earlier solve was abandoned while still running."""


@dataclass
class FoundSolution:
    """A solution found during one solve, captured when it was found.

    Attributes
    ----------
    time : float
        ``time.perf_counter()`` when the solver reported it.
    objective : float
        Objective in the problem's own sense.
    x : numpy.ndarray, shape (n,)
        Values of all variables, integers rounded.
    change : Change, optional
        How ``x`` differs from the start of the solve, where the solver knows it (a reduced
        sub-MIP's solution): the incumbent then checks only what changed.
    """

    time: float
    objective: float
    x: np.ndarray
    change: Change | None = None


@dataclass
class SolveOutcome:
    """What one solve returned.

    Attributes
    ----------
    status : SolveStatus
        How the solve ended.
    found : list of FoundSolution
        Every new best solution found in this solve, in order; empty if none. A start
        solution handed in is not included.
    solve_time : float
        Wall-clock seconds spent solving.
    dual_bound : float
        The solver's dual bound at the end, in the problem's own sense (NaN if none).
    """

    status: SolveStatus
    found: list = field(default_factory=list)
    solve_time: float = 0.0
    dual_bound: float = float("nan")

    @property
    def best(self) -> FoundSolution | None:
        return self.found[-1] if self.found else None

    @property
    def interrupted(self) -> bool:
        return self.status == SolveStatus.INTERRUPTED  # ScipSubSolver still returns the plain word


OnFound = Callable[[FoundSolution], object]


class SubSolver(Protocol):
    """A solver of the problem with some integer variables fixed, re-solved many times in a run.

    Attributes
    ----------
    name : str
        Short name for records and logs (``"scip"``, ``"cpsat"``).
    total_solve_time : float
        Seconds spent solving over all calls so far.
    """

    name: str
    total_solve_time: float

    def solve(
        self,
        *,
        time_limit: float,
        seed: int,
        free: np.ndarray | None = None,
        start: np.ndarray | None = None,
        solution_limit: int = -1,
        node_limit: int = -1,
        on_found: OnFound | None = None,
    ) -> SolveOutcome:
        """Solve with the integer variables outside ``free`` held at their values in ``start``.

        Parameters
        ----------
        time_limit : float
            Seconds for this solve.
        seed : int
            The solver's random seed for this solve, in ``range(SEED_BOUND)``.
        free : numpy.ndarray of int, optional
            Indices of the integer variables left free; every other integer variable is fixed
            at its value in ``start`` (continuous variables are always free). Omitted: none is
            fixed. The neighborhood, not its complement, so that a solve's preparation can cost
            what the neighborhood holds rather than the whole problem.
        start : numpy.ndarray, optional
            A feasible solution: a start (hint) and a cutoff, so that only strictly better
            solutions are reported. Required when ``free`` is given.
        solution_limit : int
            Stop after this many solutions (-1: no limit).
        node_limit : int
            Stop after this many branch-and-bound nodes (-1: no limit), for runs that repeat
            exactly; a solver without nodes maps it to its own deterministic work limit.
        on_found : callable, optional
            Called with each :class:`FoundSolution` as it is found, so that progress shows live
            (from the thread that runs the solver).

        Returns
        -------
        SolveOutcome
            Also when the solve was stopped; ``ABANDONED`` when it ignored its time limit (by
            more than about a second) or a stop request, and was left running.

        Raises
        ------
        SubSolverAbandonedError
            An earlier solve was abandoned: the solver's model is still in use by it.
        """
        ...

    def stop(self) -> None:
        """Ask the solve in progress to end soon. Safe from another thread; a no-op when idle."""
        ...

    def session(self) -> contextlib.AbstractContextManager:
        """A block of solves of one run: state that speeds up the next solve (fixings, a model)
        may stay between them, and is undone when the block ends, also after an exception."""
        ...


def fixed_indices(
    problem: Problem, free: np.ndarray | None, start: np.ndarray | None
) -> np.ndarray:
    """The integer variables that a solve of :meth:`SubSolver.solve` with ``free`` fixes, as an
    index array, ascending (empty if ``free`` is omitted).

    Raises
    ------
    InvalidArgumentError
        Variables to fix but no ``start`` to fix them at.
    """
    if free is None:
        return np.empty(0, dtype=np.int64)
    if start is None:
        raise InvalidArgumentError("fixing variables needs a start solution to fix them at")
    fixed = problem.integer_mask.copy()
    fixed[np.asarray(free, dtype=np.int64)] = False
    return np.flatnonzero(fixed)


@contextlib.contextmanager
def no_session():
    """A :meth:`SubSolver.session` for sub-solvers that keep nothing between solves."""
    yield
