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

from heuristics.local_branching import Distance
from heuristics.subproblem import SubproblemSelector
from lns.core.errors import InvalidArgumentError
from lns.core.search.selection import SearchState
from lns.core.solvers.scip.subsolver import ScipSubSolver


class Proximity(SubproblemSelector):
    """Solve the proximity problem with SCIP; free the variables its solution changes.

    Each call gives one SCIP model of the problem the distance to the incumbent as its
    objective and the cutoff row ``f(x) <= f(x*) - δ``, solves it until ``solution_limit``
    solutions or ``time_limit`` seconds (clipped to the time left), and restores the model
    (:class:`heuristics.subproblem.SubproblemSelector`). The last solution found (the closest:
    SCIP's solutions come in order of improving distance) becomes the neighborhood's solution;
    the integer variables it changes, completed at random to ``size``, are freed.

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
    info_prefix = "proximity"

    def __init__(
        self,
        time_limit: float = 5.0,
        min_improvement: float = 0.02,
        solution_limit: int = 1,
        scip_params: dict | None = None,
    ):
        if not 0 <= min_improvement < 1:
            raise InvalidArgumentError(
                f"proximity: min_improvement must be in [0, 1), got {min_improvement}"
            )
        if not (solution_limit == -1 or solution_limit >= 1):
            raise InvalidArgumentError(
                f"proximity: solution_limit must be -1 or >= 1, got {solution_limit}"
            )
        super().__init__(time_limit, True, scip_params)
        self.min_improvement = float(min_improvement)
        self.solution_limit = int(solution_limit)

    def change(
        self, solver: ScipSubSolver, state: SearchState, size: int, added: tuple[list, list]
    ) -> None:
        """The distance objective and the cutoff row."""
        from pyscipopt import quicksum

        problem, model, x = solver.problem, solver.model, solver.variables
        distance = Distance.to(problem, state.incumbent)
        added_vars, added_conss = added
        model.freeTransform()
        for j in distance.interior:
            d = model.addVar(name=f"prox_aux_{j}", vtype="C", lb=0.0, ub=None)
            added_vars.append(d)
            added_conss.append(model.addCons(x[j] - d <= distance.incumbent[j]))
            added_conss.append(model.addCons(distance.incumbent[j] - x[j] <= d))
        margin = self.min_improvement * max(1.0, abs(state.objective))
        target = state.objective - problem.objective_offset
        value = _objective(solver)
        if problem.sense == "minimize":
            added_conss.append(model.addCons(value <= target - margin, name="prox_cutoff"))
        else:
            added_conss.append(model.addCons(value >= target + margin, name="prox_cutoff"))
        nonzero = np.flatnonzero(distance.coefficients)
        model.setObjective(
            quicksum(distance.coefficients[j] * x[j] for j in nonzero) + quicksum(added_vars),
            sense="minimize",
        )

    def restore(self, solver: ScipSubSolver, added: tuple[list, list]) -> None:
        """The problem's own objective again, without the added rows and columns."""
        super().restore(solver, added)
        solver.model.setObjective(_objective(solver), sense=solver.problem.sense)
        if solver.problem.objective_offset:  # setObjective clears the offset
            solver.model.addObjoffset(float(solver.problem.objective_offset))

    def solve_arguments(self, state: SearchState) -> dict:
        return {"solution_limit": self.solution_limit}


def _objective(solver: ScipSubSolver):
    """The problem's objective over ``solver``'s variables, without its offset."""
    from pyscipopt import quicksum

    c, x = solver.problem.objective, solver.variables
    return quicksum(float(c[j]) * x[j] for j in np.flatnonzero(c))
