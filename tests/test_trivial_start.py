"""Trivial points start a large problem whose SCIP model would overrun the start's share of the
budget; elsewhere the configured start runs as before."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import RecordedStart, knapsack
from instances.generators import mis, sc
from lns import SizeParams, SolveParams, StartParams, solve
from lns.core.problem.mip import Problem
from lns.core.search.start import StartTask
from lns.core.search.trivial_start import (
    START_SECONDS_PER_NONZERO,
    TrivialFirst,
    best_trivial_point,
    trivial_points,
)
from lns.core.solvers.protocol import SolveStatus
from lns.core.solvers.scip.subsolver import ScipSubSolver


def _independent_set(nodes: int = 300):
    return mis.generate(mis.MISParams(n_nodes=nodes), np.random.default_rng(0))


def test_the_trivial_points_of_a_packing_and_a_covering_problem():
    assert np.array_equal(best_trivial_point(_independent_set()), np.zeros(300))
    cover = sc.generate(sc.SCParams(n_rows=50, n_cols=80, density=0.1), np.random.default_rng(0))
    assert np.array_equal(best_trivial_point(cover), np.ones(80))
    points = trivial_points(knapsack("maximize"))
    assert points.shape == (4, 4) and np.array_equal(points[:, 3], np.ones(4))
    assert np.array_equal(best_trivial_point(knapsack("maximize")), np.zeros(4))


def _assignment() -> Problem:
    """Exactly one of three binaries, each costing 1: no trivial point is feasible."""
    return Problem(
        name="assignment",
        var_names=("a", "b", "c"),
        var_types=np.array(["B"] * 3),
        lower=np.zeros(3),
        upper=np.ones(3),
        objective=np.ones(3),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(np.ones((1, 3))),
        row_lower=np.array([1.0]),
        row_upper=np.array([1.0]),
        row_names=("one",),
    )


def test_a_problem_without_a_feasible_trivial_point_has_none():
    problem = _assignment()
    points = trivial_points(problem)
    assert not any(problem.check(points[:, k]).feasible for k in range(points.shape[1]))
    assert best_trivial_point(problem) is None


def _task(problem, solver, time_limit, found):
    return StartTask(problem, solver, time_limit, 0, found.append)


@pytest.mark.parametrize("built", [False, True])
def test_a_start_that_would_overrun_the_share_gives_way_to_the_trivial_point(built):
    problem = _independent_set()
    estimate = problem.matrix.nnz * START_SECONDS_PER_NONZERO
    then, found = RecordedStart(), []
    solver = ScipSubSolver(problem, sub_problem="auto")
    if built:
        assert solver.model is not None
    outcome = TrivialFirst(then, 0.2)(_task(problem, solver, estimate, found))
    assert then.calls == 0 and outcome.status is SolveStatus.TIME_LIMIT
    assert [f.objective for f in found] == [0.0] and solver.has_model is built


@pytest.mark.parametrize("case", ["enough time", "no trivial point"])
def test_the_configured_start_runs_where_the_trivial_rule_does_not_apply(case):
    problem = _assignment() if case == "no trivial point" else _independent_set()
    solver = ScipSubSolver(problem)
    then, found = RecordedStart(), []
    time_limit = math.inf if case == "enough time" else 1e-3
    TrivialFirst(then, 0.2)(_task(problem, solver, time_limit, found))
    assert then.calls == 1 and found == []


def test_a_large_problem_on_a_short_budget_starts_trivially_and_improves():
    problem = _independent_set(3000)
    assert problem.matrix.nnz * START_SECONDS_PER_NONZERO > 0.2 * 1.0
    params = SolveParams(size=SizeParams(initial_fraction=0.05), start=StartParams(greedy=False))
    result = solve(problem, "random", 1.0, seed=0, params=params)
    assert result.trajectory[0][1] == 0.0 and result.objective > 0
    assert problem.check(result.x).feasible
