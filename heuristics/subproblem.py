"""Selectors that solve a problem of their own around the incumbent with SCIP (Local Branching,
proximity search), offer the solutions it has, and free what its last solution changed."""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from heuristics.sizing import fit_to_size
from lns.core.errors import InvalidArgumentError, UnsupportedProblemError
from lns.core.problem.mip import Problem
from lns.core.search.selection import Neighborhood, SearchState, Selector
from lns.core.solvers.protocol import SEED_BOUND, SolveOutcome, SolveStatus
from lns.core.solvers.scip.subsolver import ScipSubSolver

#: SCIP keeps the best solutions of a solve in the original problem at ``freeTransform`` and
#: starts the next solve from them; a solve of the changed problem must start from nothing but
#: the incumbent, or it would not report the improving solutions it finds again (CL-LNS's
#: positives).
FRESH_START = {"misc/transsolsorig": False}


def require_integers(problem: Problem, selector: str) -> None:
    """Raise :class:`UnsupportedProblemError` if ``problem`` has no binary or integer variable."""
    if not problem.integer_mask.any():
        raise UnsupportedProblemError(
            f"{problem.source or problem.name}: the {selector} selector needs binary or integer "
            f"variables (it measures the distance to the incumbent over them), and the problem "
            f"has none"
        )


class SubproblemSelector(Selector):
    """Change one SCIP model of the problem around the incumbent, solve it, and restore it.

    Each call asks the subclass to change the model built in :meth:`setup`
    (:meth:`change`), solves it within ``time_limit`` seconds (clipped to the time left) with
    the arguments of :meth:`solve_arguments`, and restores the model (:meth:`restore`), also
    after an error; after a solve the watchdog abandoned, the model is still in use by that
    solve: it is left alone, and the next call builds a new one. The solutions found that are
    feasible for the problem are offered; the integer variables the last one changed form the
    neighborhood, completed at random to ``size`` (with ``complete``), or ``size`` integer
    variables at random when none was found.

    ``Neighborhood.info`` holds ``"<prefix>_status"`` and ``"<prefix>_time"`` (SCIP's status and
    seconds), ``"solutions"`` (every solution found, in order, checked feasible),
    ``"fallback"`` (no solution: a random neighborhood) and ``"changed"``.
    """

    #: The prefix of the status and time keys of ``Neighborhood.info``.
    info_prefix = "subproblem"

    def __init__(self, time_limit: float, complete: bool = True, scip_params: dict | None = None):
        if not time_limit > 0:
            raise InvalidArgumentError(
                f"{self.name}: time_limit must be positive, got {time_limit}"
            )
        self.time_limit = float(time_limit)
        self.complete = complete
        self.scip_params = dict(scip_params or {})
        self._solver: ScipSubSolver | None = None

    def setup(self, problem: Problem) -> None:
        require_integers(problem, self.name)
        self._solver = ScipSubSolver(problem, {**FRESH_START, **self.scip_params})

    @abstractmethod
    def change(
        self, solver: ScipSubSolver, state: SearchState, size: int, added: tuple[list, list]
    ) -> None:
        """Change ``solver``'s model for this call, listing the variables and constraints it adds
        in ``added`` (for :meth:`restore`)."""

    def restore(self, solver: ScipSubSolver, added: tuple[list, list]) -> None:
        """Take the added variables and constraints out of the model again."""
        variables, constraints = added
        solver.model.freeTransform()
        for constraint in constraints:
            solver.model.delCons(constraint)
        for variable in variables:
            solver.model.delVar(variable)

    def solve_arguments(self, state: SearchState) -> dict:
        """Keyword arguments of the solve besides its time limit and seed."""
        return {}

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        problem = state.problem
        if self._solver is None or self._solver.problem is not problem:
            self.setup(problem)
        candidates = problem.integer_indices
        time_limit = min(self.time_limit, state.time_left())
        found, status, solve_time = [], "not_run", 0.0
        if time_limit > 0:
            outcome = self._solve(state, size, time_limit, int(rng.integers(SEED_BOUND)))
            found = [s.x for s in outcome.found if problem.check(s.x).feasible]
            status, solve_time = outcome.status, outcome.solve_time
        info = {f"{self.info_prefix}_status": status, f"{self.info_prefix}_time": solve_time}
        info.update(solutions=found, fallback=not found)
        if not found:
            info["changed"] = 0
            return Neighborhood(
                fit_to_size(np.empty(0, np.int64), size, rng, candidates), info=info
            )
        best = found[-1]
        changed = candidates[np.round(best[candidates]) != np.round(state.incumbent[candidates])]
        info["changed"] = len(changed)
        return Neighborhood(
            fit_to_size(changed, size, rng, candidates, self.complete), solution=best, info=info
        )

    def _solve(self, state: SearchState, size: int, time_limit: float, seed: int) -> SolveOutcome:
        solver = self._solver
        assert solver is not None, "setup() builds the sub-solver"
        added: tuple[list, list] = ([], [])
        try:
            self.change(solver, state, size, added)
            outcome = solver.solve(time_limit=time_limit, seed=seed, **self.solve_arguments(state))
        except BaseException:
            self.restore(solver, added)
            raise
        if outcome.status is SolveStatus.ABANDONED:
            self._solver = None
        else:
            self.restore(solver, added)
        return outcome
