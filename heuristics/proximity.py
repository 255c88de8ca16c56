"""Proximity search (Fischetti & Monaci 2014) as a neighborhood selector.

Proximity search replaces the objective by the distance to the incumbent ``x*`` and asks for
a solution better than ``x*`` by a margin: ``min Δ(x, x*)`` subject to the problem's rows and
``f(x) <= f(x*) - δ`` (minimisation; ``>=`` and ``+`` for maximisation), with ``Δ`` the L1
distance over the integer variables (:class:`heuristics.local_branching.Distance`). Any
solution of that problem improves the incumbent, and the distance objective keeps SCIP's search
near ``x*``, where its heuristics find solutions quickly; SCIP's ``heur_proximity`` runs it
with the margin ``δ = 0.02 |f(x*)|`` and stops at the first improving solution.
"""

from __future__ import annotations

import numpy as np

from heuristics.local_branching import FRESH_START, Distance, require_integers
from heuristics.sizing import fit_to_size
from lns.core.problem import Problem
from lns.core.scip_subsolver import ScipSubSolver
from lns.core.selection import Neighborhood, SearchState, Selector
from lns.core.subsolver import SEED_BOUND, SolveStatus


class Proximity(Selector):
    """Solve the proximity problem with SCIP; free the variables its solution changes.

    Each call gives one SCIP model of the problem (built in :meth:`setup`) the distance to the
    incumbent as its objective and the cutoff row ``f(x) <= f(x*) - δ``, solves it until
    ``solution_limit`` solutions or ``time_limit`` seconds (clipped to the time left), and
    restores the model in ``finally``. The last solution found (the closest, SCIP's solutions
    coming in order of improving distance) becomes the neighborhood's solution; the integer
    variables it changes, completed at random to ``size``, are freed.

    Parameters
    ----------
    time_limit : float
        Seconds for each proximity solve.
    min_improvement : float
        The margin ``δ`` relative to ``max(1, |f(x*)|)`` (SCIP's ``heuristics/proximity/
        minimprove``: 0.02).
    solution_limit : int
        Solutions after which a proximity solve stops (-1: only at its time limit).
    scip_params : dict, optional
        SCIP parameters for the proximity solves.

    Notes
    -----
    ``Neighborhood.info`` holds ``"proximity_status"``, ``"proximity_time"``, ``"changed"``
    (integer variables the solution changed), ``"fallback"`` (no improving solution: the
    neighborhood is ``size`` integer variables at random) and ``"solutions"`` (every solution
    found, checked feasible).

    References
    ----------
    M. Fischetti, M. Monaci. "Proximity search for 0-1 mixed-integer convex programming."
    Journal of Heuristics 20(6), 2014.
    """

    name = "proximity"

    def __init__(
        self,
        time_limit: float = 5.0,
        min_improvement: float = 0.02,
        solution_limit: int = 1,
        scip_params: dict | None = None,
    ):
        if not time_limit > 0:
            raise ValueError(f"proximity: time_limit must be positive, got {time_limit}")
        if not 0 <= min_improvement < 1:
            raise ValueError(f"proximity: min_improvement must be in [0, 1), got {min_improvement}")
        if not (solution_limit == -1 or solution_limit >= 1):
            raise ValueError(f"proximity: solution_limit must be -1 or >= 1, got {solution_limit}")
        self.time_limit = float(time_limit)
        self.min_improvement = float(min_improvement)
        self.solution_limit = int(solution_limit)
        self.scip_params = dict(scip_params or {})
        self._solver: ScipSubSolver | None = None

    def setup(self, problem: Problem) -> None:
        require_integers(problem, self.name)
        self._solver = ScipSubSolver(problem, {**FRESH_START, **self.scip_params})

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        problem = state.problem
        if self._solver is None or self._solver.problem is not problem:
            self.setup(problem)
        candidates = problem.integer_indices
        time_limit = min(self.time_limit, state.time_left())
        found, status, solve_time = [], "not_run", 0.0
        if time_limit > 0:
            outcome = self._solve(state, time_limit, int(rng.integers(SEED_BOUND)))
            found = [s.x for s in outcome.found if problem.check(s.x).feasible]
            status, solve_time = outcome.status, outcome.solve_time
        info = {"proximity_status": status, "proximity_time": solve_time, "solutions": found}
        info["fallback"] = not found
        if not found:
            info["changed"] = 0
            return Neighborhood(
                fit_to_size(np.empty(0, np.int64), size, rng, candidates), info=info
            )
        best = found[-1]
        changed = candidates[np.round(best[candidates]) != np.round(state.incumbent[candidates])]
        info["changed"] = len(changed)
        return Neighborhood(fit_to_size(changed, size, rng, candidates), solution=best, info=info)

    def _solve(self, state: SearchState, time_limit: float, seed: int):
        """The proximity problem of ``state.incumbent``, solved; the model restored after (a
        model an abandoned solve still uses is left alone, and the next call builds another)."""
        solver = self._solver
        assert solver is not None, "setup() builds the sub-solver"
        distance = Distance.to(solver.problem, state.incumbent)
        margin = self.min_improvement * max(1.0, abs(state.objective))
        added_vars: list = []
        added_conss: list = []
        try:
            self._set_proximity(solver, distance, state.objective, margin, added_vars, added_conss)
            outcome = solver.solve(
                time_limit=time_limit, seed=seed, solution_limit=self.solution_limit
            )
        except BaseException:
            self._restore(solver, added_vars, added_conss)
            raise
        if outcome.status is SolveStatus.ABANDONED:
            self._solver = None
        else:
            self._restore(solver, added_vars, added_conss)
        return outcome

    @staticmethod
    def _set_proximity(
        solver: ScipSubSolver,
        distance: Distance,
        objective: float,
        margin: float,
        added_vars: list,
        added_conss: list,
    ) -> None:
        """Distance objective and cutoff row on ``solver``'s model; what was added is listed."""
        from pyscipopt import quicksum

        problem, model, x = solver.problem, solver.model, solver.variables
        model.freeTransform()
        for j in distance.interior:
            d = model.addVar(name=f"prox_aux_{j}", vtype="C", lb=0.0, ub=None)
            added_vars.append(d)
            added_conss.append(model.addCons(x[j] - d <= distance.incumbent[j]))
            added_conss.append(model.addCons(distance.incumbent[j] - x[j] <= d))
        value = quicksum(
            float(problem.objective[j]) * x[j] for j in np.flatnonzero(problem.objective)
        )
        target = objective - problem.objective_offset
        if problem.sense == "minimize":
            added_conss.append(model.addCons(value <= target - margin, name="prox_cutoff"))
        else:
            added_conss.append(model.addCons(value >= target + margin, name="prox_cutoff"))
        nonzero = np.flatnonzero(distance.coefficients)
        model.setObjective(
            quicksum(distance.coefficients[j] * x[j] for j in nonzero) + quicksum(added_vars),
            sense="minimize",
        )

    @staticmethod
    def _restore(solver: ScipSubSolver, added_vars: list, added_conss: list) -> None:
        """The problem's own objective again, without the added rows and columns."""
        from pyscipopt import quicksum

        problem, model, x = solver.problem, solver.model, solver.variables
        model.freeTransform()
        for cons in added_conss:
            model.delCons(cons)
        for var in added_vars:
            model.delVar(var)
        model.setObjective(
            quicksum(float(problem.objective[j]) * x[j] for j in np.flatnonzero(problem.objective)),
            sense=problem.sense,
        )
