"""CP-SAT on the whole problem: known optima, maximisation, scaled rows, and what it refuses."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import knapsack, miplib, mixed_problem
from lns.api import solve
from lns.core import metrics
from lns.core.cpsat_model import build_cpsat_model
from lns.core.errors import InfeasibleProblemError, UnsupportedProblemError
from lns.core.problem import Problem


def _two_var_problem(coefficients, upper=(10.0, 10.0), rhs=1.1, types=("I", "I")):
    """max x + y  s.t.  a1 x + a2 y <= rhs, x, y integer in [0, upper]."""
    return Problem(
        name="two",
        var_names=("x", "y"),
        var_types=np.array(types),
        lower=np.zeros(2),
        upper=np.array(upper, dtype=float),
        objective=np.array([1.0, 1.0]),
        objective_offset=0.0,
        sense="maximize",
        matrix=sp.csr_matrix(np.array([coefficients], dtype=float)),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([rhs]),
        row_names=("row",),
    )


def test_p0201_reaches_its_optimum_with_a_checked_trajectory():
    result = solve(miplib("p0201"), method="cpsat", time_limit=30, seed=0)
    assert result.method == "cpsat" and result.selector is None
    assert result.objective == pytest.approx(7615)
    assert result.status == "optimal" and result.stop_reason == "optimal"
    assert result.feasibility.feasible
    values = [v for _, v in result.trajectory]
    assert values[-1] == pytest.approx(7615)
    assert all(a > b for a, b in itertools.pairwise(values))  # minimisation: strictly improving
    times = [t for t, _ in result.trajectory]
    assert times == sorted(times) and times[-1] <= result.runtime


@pytest.mark.parametrize("sense, optimum", [("maximize", 23.0), ("minimize", -23.0)])
def test_knapsack_in_both_senses(sense, optimum):
    result = solve(knapsack(sense), method="cpsat", time_limit=10, seed=3, num_workers=1)
    assert result.objective == pytest.approx(optimum)
    assert result.status == "optimal"
    np.testing.assert_allclose(result.x, [1, 1, 0, 0])
    assert result.dual_bound == pytest.approx(optimum)
    assert metrics.primal_gap(result.trajectory[-1][1], optimum) == 0.0


def test_rows_with_decimal_coefficients_are_scaled_exactly():
    # 0.25 x + 0.5 y <= 1.1  <=>  x + 2 y <= 4 over the integers: max x + y = 4
    result = solve(_two_var_problem([0.25, 0.5]), method="cpsat", time_limit=10, num_workers=1)
    assert result.objective == pytest.approx(4.0)
    assert result.feasibility.feasible


@pytest.mark.parametrize(
    "problem, reason",
    [
        (mixed_problem(), "continuous variable.*'w'"),
        (_two_var_problem([1 / 3, 1.0]), "row 'row' has coefficients that are not integral"),
        (_two_var_problem([1.0, 1.0], upper=(np.inf, 10.0)), "finite integer bounds, variable 'x'"),
    ],
)
def test_unsupported_problems_raise_with_the_reason(problem, reason):
    with pytest.raises(UnsupportedProblemError, match=reason):
        build_cpsat_model(problem)
    with pytest.raises(UnsupportedProblemError, match=reason):
        solve(problem, method="cpsat", time_limit=5)


def test_infeasible_problem_is_reported():
    problem = _two_var_problem([1.0, 1.0], rhs=-1.0)
    with pytest.raises(InfeasibleProblemError, match="two"):
        solve(problem, method="cpsat", time_limit=5)


def test_bad_option_is_rejected():
    with pytest.raises(ValueError, match="num_workers"):
        solve(knapsack(), method="cpsat", time_limit=5, num_workers=0)


def test_out_and_initial_solution_go_through_the_common_path(tmp_path):
    start = np.array([1.0, 0.0, 0.0, 0.0])  # value 10 of the knapsack, feasible
    result = solve(
        knapsack(),
        method="cpsat",
        time_limit=10,
        num_workers=1,
        initial_solution=start,
        out=tmp_path / "best.sol",
    )
    assert result.trajectory[0][1] == pytest.approx(10.0)  # the user's start is the first incumbent
    assert result.objective == pytest.approx(23.0)
    assert (tmp_path / "best.sol").exists()
