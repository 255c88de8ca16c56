"""RINS-style neighborhoods (Danna, Rothberg & Le Pape 2005): where incumbent and LP disagree."""

from __future__ import annotations

import numpy as np

from heuristics.sizing import fit_to_size
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Problem
from lns.core.search.selection import Neighborhood, SearchState, Selector
from lns.core.solvers.lp import METHODS, LPSolution, solve_lp

#: An incumbent value and an LP value closer than this agree.
AGREEMENT_TOL = 1e-6


class RINS(Selector):
    """Free the integer variables whose incumbent value differs from the root LP solution.

    RINS (Relaxation Induced Neighborhood Search) fixes the variables on which the incumbent
    and the LP relaxation agree. Here the disagreeing integer variables are freed, trimmed
    uniformly at random to ``size`` if there are more, and completed uniformly at random
    if fewer, so the neighborhood has ``min(size, #integers)`` variables.

    The root LP is solved once per problem, at the first call (so its time is clipped to the
    run's deadline), with HiGHS (:func:`lns.core.solvers.lp.solve_lp`). If it fails (time limit,
    numerical trouble), every call falls back to a uniformly random neighborhood
    (``info["fallback"] = True``).

    Parameters
    ----------
    lp_method : {"highs", "highs-ds", "highs-ipm"}
        HiGHS algorithm for the root LP.
    """

    name = "rins"

    def __init__(self, lp_method: str = "highs"):
        if lp_method not in METHODS:
            raise InvalidArgumentError(
                f"rins: lp_method {lp_method!r} is not one of {list(METHODS)}"
            )
        self.lp_method = lp_method
        self._problem: Problem | None = None
        self._lp: LPSolution | None = None

    def setup(self, problem: Problem) -> None:
        self._problem, self._lp = problem, None

    def differing(self, state: SearchState, lp_x: np.ndarray) -> np.ndarray:
        """Mask over the integer variables: where the incumbent and LP solution ``lp_x`` differ."""
        candidates = state.problem.integer_indices
        return np.abs(state.incumbent[candidates] - lp_x[candidates]) > AGREEMENT_TOL

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        problem = state.problem
        if self._problem is not problem:
            self.setup(problem)
        if self._lp is None:
            self._lp = solve_lp(
                problem, time_limit=max(0.0, state.time_left()), method=self.lp_method
            )
        candidates = problem.integer_indices
        info = {"lp_status": self._lp.status, "fallback": not self._lp.optimal}
        if not self._lp.optimal:
            return Neighborhood(
                fit_to_size(np.empty(0, np.int64), size, rng, candidates), info=info
            )
        differ = self.differing(state, self._lp.x)
        info["differing"] = int(differ.sum())
        return Neighborhood(fit_to_size(candidates[differ], size, rng, candidates), info=info)
