"""Local Branching (Fischetti & Lodi 2003) as a neighborhood selector, and its distance row.

The Local Branching ILP is the original problem plus the *distance constraint*
``Δ(x, x*) = Σ_{j integer} |x_j - x*_j| <= k`` and the objective cutoff "strictly
better than the incumbent ``x*``". Its best solution ``x^LB`` is the best point
within Hamming (for general integers: L1) distance ``k``; the variables where
``x^LB`` and ``x*`` differ form the neighborhood (Sonnerat et al. 2021; Huang et
al., CPAIOR 2023, where LB is the expert that LB-RELAX approximates and the
teacher of CL-LNS, ICML 2023).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from heuristics.subproblem import SubproblemSelector
from lns.core.problem.mip import Problem
from lns.core.search.selection import SearchState
from lns.core.solvers.lp import ExtraColumns, ExtraRows
from lns.core.solvers.scip.subsolver import ScipSubSolver


@dataclass(frozen=True)
class Distance:
    """The L1 distance to an incumbent over the integer variables, as linear rows.

    For an integer variable at a bound the distance is linear: ``x_j - l_j`` at its lower
    bound, ``u_j - x_j`` at its upper bound (for a binary: ``x_j`` if ``x*_j = 0``,
    ``1 - x_j`` if ``x*_j = 1``, the classical local-branching row). A general integer
    strictly inside its bounds gets an auxiliary column ``d_j >= 0`` with
    ``d_j >= x_j - x*_j`` and ``d_j >= x*_j - x_j``, so that
    ``Δ(x) = coefficients · x + constant + Σ_j d_j``; ``Δ(x) <= k`` is exact at integer
    points (``d_j = |x_j - x*_j|`` is feasible, and any feasible ``d_j`` is at least that).

    Attributes
    ----------
    incumbent : numpy.ndarray, shape (n,)
        ``x*``.
    coefficients : numpy.ndarray, shape (n,)
        +1 for integer variables at their lower bound, -1 at their upper bound, 0 otherwise.
    constant : float
        ``Σ -l_j`` over the former plus ``Σ u_j`` over the latter.
    interior : numpy.ndarray of int
        General integers strictly inside their bounds (one auxiliary column each, in this order).
    """

    incumbent: np.ndarray
    coefficients: np.ndarray
    constant: float
    interior: np.ndarray

    @classmethod
    def to(cls, problem: Problem, incumbent: np.ndarray) -> Distance:
        """The distance to ``incumbent`` (integer values are rounded first)."""
        x = problem.round_integers(incumbent)
        integer = problem.integer_mask
        at_lower = integer & (x <= problem.lower)
        at_upper = integer & ~at_lower & (x >= problem.upper)
        coefficients = at_lower.astype(float) - at_upper.astype(float)
        constant = float(-problem.lower[at_lower].sum() + problem.upper[at_upper].sum())
        interior = np.flatnonzero(integer & ~at_lower & ~at_upper)
        return cls(x, coefficients, constant, interior)

    def __call__(self, x: np.ndarray) -> float:
        """``Σ_{j integer} |x_j - x*_j|`` for any point ``x``."""
        integer = self.coefficients != 0
        integer[self.interior] = True
        return float(np.abs(np.asarray(x)[integer] - self.incumbent[integer]).sum())

    def lp_rows(self, k: float) -> tuple[ExtraColumns, ExtraRows]:
        """The auxiliary columns and the rows ``Δ(x) <= k`` for
        :func:`lns.core.solvers.lp.solve_lp`.

        Rows: first the distance row, then ``x_j - d_j <= x*_j`` and ``-x_j - d_j <= -x*_j``
        for each interior general integer ``j``.
        """
        p = len(self.interior)
        columns = ExtraColumns(np.zeros(p), np.zeros(p), np.full(p, np.inf))
        distance_row = sp.csr_matrix(np.concatenate([self.coefficients, np.ones(p)])[None, :])
        values = self.incumbent[self.interior]
        rows = ExtraRows(
            sp.vstack(
                [distance_row, absolute_value_rows(self.interior, len(self.incumbent))],
                format="csr",
            ),
            np.full(1 + 2 * p, -np.inf),
            np.r_[k - self.constant, values, -values],
        )
        return columns, rows


def absolute_value_rows(columns: np.ndarray, n: int) -> sp.csr_matrix:
    """Rows ``x_j - d_g`` then ``-x_j - d_g`` for ``j = columns[g]``, over ``n`` variables, ``d``.

    With right-hand sides ``x*_j`` and ``-x*_j`` they say ``d_g >= |x_j - x*_j|``; the
    auxiliary column ``d_g`` is column ``n + g``. Shape ``(2p, n + p)``, ``p = len(columns)``.
    """
    p = len(columns)
    pairs, aux, ones = np.arange(p), np.arange(n, n + p), np.ones(p)
    return sp.csr_matrix(
        (
            np.r_[ones, -ones, -ones, -ones],
            (np.r_[pairs, p + pairs, pairs, p + pairs], np.r_[columns, columns, aux, aux]),
        ),
        shape=(2 * p, n + p),
    )


class LocalBranching(SubproblemSelector):
    """Solve the Local Branching ILP with SCIP; free the variables its best solution changes.

    Each call adds ``Δ(x, x*) <= size`` (see :class:`Distance`) to one SCIP model of the
    problem, hands SCIP the incumbent as a start solution (so SCIP reports only strictly
    better solutions: the objective cutoff), solves within ``time_limit`` (clipped to the time
    left), and removes the rows and auxiliary columns again
    (:class:`heuristics.subproblem.SubproblemSelector`).

    Parameters
    ----------
    time_limit : float
        Seconds for each Local Branching solve. The CL-LNS authors use 600 s at test time
        (3600 s when collecting data) with 120 s sub-solves; our budgets are 60-300 s in all,
        so the default is 5 s, half the loop's default sub-solve limit.
    complete : bool
        Complete the set of changed variables at random up to ``size`` (default). ``False``
        frees only the changed variables, as the authors' code does; in our loop LB's best
        solution already becomes the incumbent, so freeing exactly those variables would give
        the sub-solve little to do.
    node_limit : int
        Branch-and-bound nodes per Local Branching solve (-1: no limit). With a node limit
        that binds before the time limit, selections repeat exactly under the same seed.
    scip_params : dict, optional
        SCIP parameters for the Local Branching solves.

    Notes
    -----
    ``Neighborhood.solution`` is LB's best solution (a real solution of the problem: the
    loop keeps it if it improves). ``Neighborhood.info`` holds:

    - ``"solutions"``: every improving solution SCIP found while solving the LB ILP, in the
      order found, each a full ``x`` vector of the problem's variables checked feasible with
      :meth:`Problem.check` (CL-LNS uses them as positive samples);
    - ``"fallback"``: ``True`` when no improving solution was found in the limit; the
      neighborhood is then ``size`` integer variables drawn uniformly at random;
    - ``"lb_status"``, ``"lb_time"``: SCIP's status and seconds of the LB solve;
    - ``"changed"``: how many integer variables LB's best solution changed.
    """

    name = "local_branching"
    info_prefix = "lb"

    def __init__(
        self,
        time_limit: float = 5.0,
        complete: bool = True,
        node_limit: int = -1,
        scip_params: dict | None = None,
    ):
        super().__init__(time_limit, complete, scip_params)
        self.node_limit = int(node_limit)

    def change(
        self, solver: ScipSubSolver, state: SearchState, size: int, added: tuple[list, list]
    ) -> None:
        """Add the row ``Δ(x, x*) <= size`` (and the auxiliary columns of general integers)."""
        from pyscipopt import quicksum

        distance = Distance.to(solver.problem, state.incumbent)
        model, x = solver.model, solver.variables
        added_vars, added_conss = added
        for j in distance.interior:
            d = model.addVar(name=f"lb_aux_{j}", vtype="C", lb=0.0, ub=None)
            added_vars.append(d)
            added_conss.append(
                model.addCons(x[j] - d <= distance.incumbent[j], name=f"lb_aux_up_{j}")
            )
            added_conss.append(
                model.addCons(distance.incumbent[j] - x[j] <= d, name=f"lb_aux_down_{j}")
            )
        nonzero = np.flatnonzero(distance.coefficients)
        expression = quicksum(distance.coefficients[j] * x[j] for j in nonzero) + quicksum(
            added_vars
        )
        added_conss.append(
            model.addCons(expression <= size - distance.constant, name="lb_distance")
        )

    def solve_arguments(self, state: SearchState) -> dict:
        """From the incumbent (SCIP then reports only better solutions: the cutoff)."""
        return {"start": state.incumbent, "node_limit": self.node_limit}
