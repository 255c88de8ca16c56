"""CP-SAT on the whole problem: known optima, maximisation, scaled rows, and what it refuses."""

import itertools
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import lns.core.baselines.cpsat_mip
from helpers import knapsack, miplib, miplib2017, mixed_problem
from lns import solve_cpsat
from lns.core.baselines.cpsat_mip import _follow
from lns.core.errors import InfeasibleProblemError, UnsupportedProblemError
from lns.core.problem.mip import Problem
from lns.core.search import metrics
from lns.core.solvers.cpsat.model import build_cpsat_model


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
    result = solve_cpsat(miplib("p0201"), stop=30, seed=0)
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
    result = solve_cpsat(knapsack(sense), stop=10, seed=3, num_workers=1)
    assert result.objective == pytest.approx(optimum)
    assert result.status == "optimal"
    np.testing.assert_allclose(result.x, [1, 1, 0, 0])
    assert result.dual_bound == pytest.approx(optimum)
    assert metrics.primal_gap(result.trajectory[-1][1], optimum) == 0.0


def test_rows_with_decimal_coefficients_are_scaled_exactly():
    # 0.25 x + 0.5 y <= 1.1  <=>  x + 2 y <= 4 over the integers: max x + y = 4
    result = solve_cpsat(_two_var_problem([0.25, 0.5]), stop=10, num_workers=1)
    assert result.objective == pytest.approx(4.0)
    assert result.feasibility.feasible


@pytest.mark.parametrize(
    "problem, reason, optimum",
    [
        # CP-SAT solves w on a grid: -14 with w = 0, not the optimum -14.25 with w = 0.5
        (mixed_problem(), "continuous variable.*'w'", -14.0),
        (_two_var_problem([1 / 3, 1.0]), "row 'row' has coefficients that are not integral", 3.0),
        (_two_var_problem([1.0, 1.0], upper=(np.inf, 10.0)), "finite integer bounds, var", 1.0),
    ],
)
def test_problems_outside_the_native_model_go_through_the_mip_interface(problem, reason, optimum):
    with pytest.raises(UnsupportedProblemError, match=reason):
        build_cpsat_model(problem)
    result = solve_cpsat(problem, stop=20, num_workers=1)
    assert result.feasibility.feasible
    assert result.objective == pytest.approx(optimum)
    exact = len(result.problem.integer_indices) == result.problem.n_vars
    assert result.stop_reason == ("optimal" if exact else "solver_finished")
    assert result.trajectory[-1][1] == pytest.approx(optimum)


def test_logged_objectives_join_the_trajectory_before_the_checked_solution():
    # lotsize: CP-SAT logs several solutions within seconds; only the last comes back whole.
    result = solve_cpsat(miplib2017("lotsize"), stop=8, num_workers=2)
    assert result.feasibility.feasible and len(result.trajectory) >= 2
    values = [value for _, value in result.trajectory]
    assert all(a > b for a, b in itertools.pairwise(values)) and values[-1] == result.objective
    times = [t for t, _ in result.trajectory]
    assert times == sorted(times) and times[-1] <= result.runtime


def test_infeasible_problem_is_reported():
    problem = _two_var_problem([1.0, 1.0], rhs=-1.0)
    with pytest.raises(InfeasibleProblemError, match="two"):
        solve_cpsat(problem, stop=5)


def test_bad_option_is_rejected():
    with pytest.raises(ValueError, match="num_workers"):
        solve_cpsat(knapsack(), stop=5, num_workers=0)


def test_out_and_initial_solution_go_through_the_common_path(tmp_path):
    start = np.array([1.0, 0.0, 0.0, 0.0])  # value 10 of the knapsack, feasible
    result = solve_cpsat(
        knapsack(), stop=10, num_workers=1, initial_solution=start, out=tmp_path / "best.sol"
    )
    assert result.trajectory[0][1] == pytest.approx(10.0)  # the user's start is the first incumbent
    assert result.objective == pytest.approx(23.0)
    assert (tmp_path / "best.sol").exists()


class InterruptAtFirstLogged:
    """Stands for the MIP interface's solution-line pattern: matches as it does, and sends this
    process SIGINT when the first solution is logged."""

    def __init__(self, pattern):
        self.pattern, self.sent = pattern, False

    def match(self, line):
        matched = self.pattern.match(line)
        if matched and not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
        return matched


def test_interrupt_stops_the_mip_interface_and_keeps_its_best_solution(monkeypatch):
    # neos-911970 has continuous variables: CP-SAT runs behind OR-Tools' MIP interface.
    pattern = InterruptAtFirstLogged(lns.core.baselines.cpsat_mip.SOLUTION_LINE)
    monkeypatch.setattr(lns.core.baselines.cpsat_mip, "SOLUTION_LINE", pattern)
    result = solve_cpsat(miplib2017("neos-911970"), stop=60, num_workers=1)
    assert pattern.sent and result.stop_reason == "interrupted"
    assert result.feasibility.feasible and result.objective == result.trajectory[-1][1]


def test_the_mip_interface_log_gives_solutions_and_a_refusal_with_its_reason():
    script = (
        "print('#1       0.50s best:12 next:[0,11] default_lp');"
        "print('#Bound   0.60s best:12 next:[1,11] default_lp');"
        "print('#2       0.70s best:10 next:[1,9] rnd_lns');"
        "print('Invalid model: Invalid domain in constraint');"
        "print('LNS-STATUS MODEL_INVALID')"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    reported, status = _follow(child, time_limit=30)
    assert [objective for _, objective in reported] == [12.0, 10.0]
    assert status == "MODEL_INVALID: Invalid model: Invalid domain in constraint"
