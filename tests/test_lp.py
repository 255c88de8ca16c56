"""The LP relaxation solver: optima, duals and reduced costs of small LPs solved by hand."""

import os
import subprocess
import sys
import time

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

import lns.core.solvers.lp as lp_module
from helpers import knapsack, miplib, mixed_problem
from lns.core.problem.mip import Problem, read_problem
from lns.core.solvers.lp import ExtraColumns, ExtraRows, WarmLP, solve_lp


def lp(objective, matrix, row_lower, row_upper, lower, upper, sense="minimize", types=None):
    n, m = len(objective), len(row_lower)
    return Problem(
        name="lp",
        var_names=tuple(f"x{j}" for j in range(n)),
        var_types=np.array(types or ["C"] * n),
        lower=np.array(lower, dtype=float),
        upper=np.array(upper, dtype=float),
        objective=np.array(objective, dtype=float),
        objective_offset=0.0,
        sense=sense,
        matrix=sp.csr_matrix(np.array(matrix, dtype=float)),
        row_lower=np.array(row_lower, dtype=float),
        row_upper=np.array(row_upper, dtype=float),
        row_names=tuple(f"r{i}" for i in range(m)),
    )


def warm(problem, **extras):
    return WarmLP(problem, **extras).solve()


SOLVERS = [pytest.param(solve_lp, id="cold"), pytest.param(warm, id="warm")]


@pytest.mark.parametrize("solve", SOLVERS)
def test_maximisation_optimum_duals_and_reduced_costs(solve):
    # max 3x + 2y s.t. x + y <= 4, x + 3y <= 9, 0 <= x <= 3, y >= 0: x = 3, y = 1, z = 11.
    # Raising the first side by 1 adds 1 to y (dual 2); the second row is slack (dual 0);
    # x sits at its upper bound with reduced cost 3 - 2 = 1 (raising that bound gains 1).
    problem = lp(
        [3, 2], [[1, 1], [1, 3]], [-np.inf, -np.inf], [4, 9], [0, 0], [3, np.inf], sense="maximize"
    )
    solution = solve(problem)
    assert solution.optimal
    np.testing.assert_allclose(solution.x, [3, 1], atol=1e-9)
    assert solution.objective == pytest.approx(11)
    np.testing.assert_allclose(solution.row_duals, [2, 0], atol=1e-9)
    np.testing.assert_allclose(solution.reduced_costs, [1, 0], atol=1e-9)


@pytest.mark.parametrize("solve", SOLVERS)
def test_ranged_and_equality_rows_in_a_minimisation(solve):
    # min x + y s.t. 2 <= x + y <= 5, x - y = 1: x = 1.5, y = 0.5, z = 2; the range binds at its
    # lower side (dz/dlower = 1), the equality does not change z (dual 0).
    problem = lp([1, 1], [[1, 1], [1, -1]], [2, 1], [5, 1], [0, 0], [10, 10])
    solution = solve(problem)
    np.testing.assert_allclose(solution.x, [1.5, 0.5], atol=1e-9)
    assert solution.objective == pytest.approx(2)
    np.testing.assert_allclose(solution.row_duals, [1, 0], atol=1e-9)
    np.testing.assert_allclose(solution.reduced_costs, [0, 0], atol=1e-9)


@pytest.mark.parametrize("solve", SOLVERS)
def test_extra_columns_and_rows(solve):
    # min -x + 0.5 t s.t. x <= 8 and the extra row x - t <= 5 over the extra column t >= 0:
    # x = 8, t = 3, z = -6.5; both rows have dual -0.5.
    problem = lp([-1], [[1]], [-np.inf], [8], [0], [10])
    solution = solve(
        problem,
        extra_columns=ExtraColumns(np.array([0.5]), np.array([0.0]), np.array([np.inf])),
        extra_rows=ExtraRows(sp.csr_matrix([[1.0, -1.0]]), np.array([-np.inf]), np.array([5.0])),
    )
    np.testing.assert_allclose(solution.x, [8, 3], atol=1e-9)
    assert solution.objective == pytest.approx(-6.5)
    np.testing.assert_allclose(solution.row_duals, [-0.5, -0.5], atol=1e-9)
    np.testing.assert_allclose(solution.reduced_costs, [0, 0], atol=1e-9)


@pytest.mark.parametrize("method", ["highs", "highs-ds", "highs-ipm"])
def test_reduced_costs_are_c_minus_a_transpose_duals_on_miplib(method):
    problem = read_problem(miplib("p0201"))
    solution = solve_lp(problem, method=method)
    assert solution.optimal
    np.testing.assert_allclose(
        solution.reduced_costs, problem.objective - problem.matrix.T @ solution.row_duals, atol=1e-6
    )
    assert problem.check(solution.x).max_row_violation < 1e-6


def test_relaxation_bounds_the_integer_optimum():
    assert solve_lp(mixed_problem()).objective <= -14.25 + 1e-9
    assert solve_lp(knapsack("maximize")).objective >= 23 - 1e-9


def test_infeasible_and_unbounded_statuses():
    assert solve_lp(lp([1], [[1]], [5], [np.inf], [0], [1])).status == "infeasible"
    assert solve_lp(lp([-1], [[1]], [0], [np.inf], [0], [np.inf])).status == "unbounded"


def test_bad_method_and_bad_extra_rows():
    problem = knapsack()
    with pytest.raises(ValueError, match="highs-ipm"):
        solve_lp(problem, method="simplex")
    with pytest.raises(ValueError, match="columns"):
        solve_lp(problem, extra_rows=ExtraRows(sp.csr_matrix((1, 3)), np.zeros(1), np.ones(1)))


def test_warm_lp_changed_in_place_matches_a_cold_solve():
    problem = read_problem(miplib("p0201"))
    extra = ExtraRows(
        sp.csr_matrix(np.ones((1, problem.n_vars))), np.array([-np.inf]), np.array([np.inf])
    )
    model = WarmLP(problem, extra_rows=extra)
    assert model.solve().objective == pytest.approx(solve_lp(problem).objective)
    rng = np.random.default_rng(0)
    for _ in range(3):
        columns = rng.choice(problem.n_vars, size=30, replace=False)
        values = rng.choice([-1.0, 1.0], size=30)
        row = sp.csr_matrix((values, (np.zeros(30, int), columns)), shape=(1, problem.n_vars))
        bound = float(rng.integers(3, 10))
        model.change_coefficients(problem.n_rows, np.arange(problem.n_vars), row.toarray()[0])
        model.change_row_bounds(np.array([problem.n_rows]), -np.inf, bound)
        hot = model.solve()
        cold = solve_lp(problem, extra_rows=ExtraRows(row, np.array([-np.inf]), np.array([bound])))
        assert hot.optimal and hot.objective == pytest.approx(cold.objective, abs=1e-6)
        np.testing.assert_allclose(
            hot.reduced_costs[: problem.n_vars],
            problem.objective
            - problem.matrix.T @ hot.row_duals[: problem.n_rows]
            - row.toarray()[0] * hot.row_duals[-1],
            atol=1e-6,
        )
    model.change_column_bounds(np.array([0]), 1.0, 1.0)
    assert model.solve().x[0] == pytest.approx(1.0)


def test_warm_lp_replacing_a_binding_last_row_reaches_the_optimum():
    # max 3x + 2y s.t. x + 3y <= 9, x + y <= 4, 0 <= x <= 3: the last row binds (x = 3, y = 1).
    # Replaced by x + 2y <= 4 (y = 0.5, z = 10), its slack starts basic: HiGHS repairs the basis,
    # one basic variable too many, and solves to the optimum.
    problem = lp(
        [3, 2], [[1, 3], [1, 1]], [-np.inf, -np.inf], [9, 4], [0, 0], [3, np.inf], sense="maximize"
    )
    model = WarmLP(problem)
    assert model.solve().objective == pytest.approx(11)
    basic = highspy.HighsBasisStatus.kBasic
    assert model._highs.getBasis().row_status[1] != basic
    model.replace_last_row(np.array([0, 1]), np.array([1.0, 2.0]), -np.inf, 4.0)
    assert model._highs.getBasis().row_status[1] == basic
    hot = model.solve()
    assert hot.optimal and hot.objective == pytest.approx(10)
    np.testing.assert_allclose(hot.x, [3, 0.5], atol=1e-9)
    np.testing.assert_allclose(hot.row_duals, [0, 1], atol=1e-9)
    np.testing.assert_allclose(hot.reduced_costs, [2, 0], atol=1e-9)


def test_warm_lp_after_an_interior_point_start_re_solves_by_simplex():
    problem = read_problem(miplib("p0201"))
    model = WarmLP(problem, method="highs-ipm")
    assert model.solve().optimal and model._highs.getInfo().ipm_iteration_count > 0
    model.change_column_bounds(np.array([0]), 1.0, 1.0)
    simplex = WarmLP(problem)
    simplex.change_column_bounds(np.array([0]), 1.0, 1.0)
    hot = model.solve()
    assert hot.optimal and hot.objective == pytest.approx(simplex.solve().objective)
    assert model._highs.getInfo().ipm_iteration_count == 0


def test_a_cold_simplex_past_its_seconds_hands_over_to_the_interior_point(monkeypatch):
    problem = _independent_set_lp()  # a few thousand simplex iterations: more than 10 ms
    reference = solve_lp(problem, method="highs-ds")
    monkeypatch.setattr(lp_module, "SIMPLEX_FIRST", 0.01)
    model = WarmLP(problem)
    cold = model.solve(time_limit=60)
    assert cold.optimal and cold.objective == pytest.approx(reference.objective)
    assert model._highs.getInfo().ipm_iteration_count > 0  # the simplex ran out, the IPM went on
    model.change_column_bounds(np.array([0]), 0.0, 0.0)
    assert model.solve().optimal and model._highs.getInfo().ipm_iteration_count == 0
    # within its limit the simplex alone solves it; "highs-ds" never hands over
    assert WarmLP(problem, method="highs-ds").solve(time_limit=60).optimal
    monkeypatch.setattr(lp_module, "SIMPLEX_FIRST", 60.0)
    model = WarmLP(problem)
    assert model.solve().optimal and model._highs.getInfo().ipm_iteration_count == 0


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_the_hand_over_counts_the_simplex_cpu_time_not_the_wall_clock(monkeypatch):
    """On one core shared with three busy processes, a simplex that needs half of SIMPLEX_FIRST
    in CPU time takes longer than SIMPLEX_FIRST on the wall clock, and still solves alone."""
    problem = _independent_set_lp()
    began = time.thread_time()
    assert solve_lp(problem, method="highs-ds").optimal
    monkeypatch.setattr(lp_module, "SIMPLEX_FIRST", 2 * (time.thread_time() - began) + 0.1)
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)
    ]  # on the same core: children keep the affinity
    try:
        model = WarmLP(problem)
        began = time.perf_counter()
        solution = model.solve(time_limit=60)
        wall = time.perf_counter() - began
    finally:
        for process in busy:
            process.kill()
            process.wait()
        os.sched_setaffinity(0, cores)
    assert solution.optimal and wall > lp_module.SIMPLEX_FIRST
    assert model.interior_point_iterations == 0


def test_each_solve_has_a_time_limit_of_its_own():
    """HiGHS counts the run time of all the runs of one object against its limit: without a
    limit of its own, a warm LP's solves fail once their sum passes the limit of one (as
    LB-RELAX's late in a run, or the interior point after a slow simplex)."""
    model = WarmLP(_independent_set_lp(2000), method="highs-ds")
    began = time.perf_counter()
    assert model.solve(time_limit=60).optimal
    limit = 10 * (time.perf_counter() - began) + 0.05
    for _ in range(15):
        model._highs.clearSolver()  # a cold solve each time
        assert model.solve(time_limit=limit).optimal
    assert model._highs.getRunTime() > limit


def _independent_set_lp(n_nodes=6000):
    """An LP of a few thousand simplex iterations (0.4 s here)."""
    from instances.generators.registry import CLASSES

    mis = CLASSES["mis"]
    return mis.generate(mis.params("small", n_nodes=n_nodes), np.random.default_rng(0), "mis")


def test_a_solve_calls_no_python_callback_unless_stopped(monkeypatch):
    """The interrupt callback, which needs Python's lock at each HiGHS iteration, is only
    started by a stop request: an uninterrupted solve never calls it."""
    import lns.core.solvers.lp as lp_module

    calls = []
    callback = lp_module._interrupt_if_stopped
    monkeypatch.setattr(
        lp_module, "_interrupt_if_stopped", lambda *args: calls.append(1) or callback(*args)
    )
    solution = WarmLP(_independent_set_lp(500)).solve()
    assert solution.status == "optimal" and calls == []


@pytest.mark.parametrize("method", ["highs-ds", "highs-ipm"])
def test_a_cancel_event_set_during_the_solve_ends_it(method):
    import threading

    lp = WarmLP(_independent_set_lp(), method=method)
    began, cancel = threading.Event(), threading.Event()
    run = lp._highs.run
    lp._highs.run = lambda: (began.set(), run())[1]
    outcome = []
    solver = threading.Thread(target=lambda: outcome.append(lp.solve(cancel=cancel)))
    solver.start()
    assert began.wait(10)
    cancel.set()
    solver.join(10)
    assert outcome[0].status == "interrupted"
    assert lp._highs.getModelStatus() == highspy.HighsModelStatus.kInterrupt
