"""The sub-MIP of the free variables: the same optimum as the whole model with the fixings."""

from __future__ import annotations

import time

import numpy as np
import psutil
import pytest
import scipy.sparse as sp

from helpers import knapsack, miplib, mixed_problem
from instances.generators import ca, cfl, mis, mvc, sc
from lns.core.errors import UnknownNameError
from lns.core.problem.mip import Problem, read_problem
from lns.core.problem.reduced import Reducer, _rows_held
from lns.core.search.incumbent import Incumbent
from lns.core.solvers.protocol import SolveStatus
from lns.core.solvers.scip.subsolver import REDUCED_MIN_NONZEROS, ScipSubSolver, prefers_reduced


def unusual_rows() -> Problem:
    """Equality, ranged and free rows, a general integer, a continuous variable, and a variable
    in no row; max x0 + x1 + 2 x2 + 3 z + x3 + y + 0.5 (binaries first, as SCIP orders them).

    Rows: x0 + x1 + x2 = 2 (equality), 1 <= x1 + 2 x3 <= 3 (ranged), x0 - x3 free (no side),
    x2 + y <= 2.5; x3 in {0..3}, y in [0, 4], z binary in no row. Optimum 9, e.g. x0 = x2 = 1,
    x1 = 0, z = 1, x3 = 1, y = 1.5.
    """
    A = np.array(
        [[1, 1, 1, 0, 0, 0], [0, 1, 0, 0, 2, 0], [1, 0, 0, 0, -1, 0], [0, 0, 1, 0, 0, 1]],
        dtype=float,
    )
    return Problem(
        name="unusual",
        var_names=("x0", "x1", "x2", "z", "x3", "y"),
        var_types=np.array(["B", "B", "B", "B", "I", "C"]),
        lower=np.zeros(6),
        upper=np.array([1, 1, 1, 1, 3, 4], dtype=float),
        objective=np.array([1, 1, 2, 3, 1, 1], dtype=float),
        objective_offset=0.5,
        sense="maximize",
        matrix=sp.csr_matrix(A),
        row_lower=np.array([2.0, 1.0, -np.inf, -np.inf]),
        row_upper=np.array([2.0, 3.0, np.inf, 2.5]),
        row_names=("eq", "ranged", "free", "cap"),
    )


def generated(module, params):
    return lambda: module.generate(params, np.random.default_rng(3))


PROBLEMS = {
    "knapsack": knapsack,
    "mixed": mixed_problem,
    "unusual": unusual_rows,
    "mis": generated(mis, mis.MISParams(n_nodes=40)),
    "mvc": generated(mvc, mvc.MVCParams(n_nodes=40, affinity=3)),
    "sc": generated(sc, sc.SCParams(n_rows=60, n_cols=40, density=0.1)),
    "ca": generated(ca, ca.CAParams(n_items=20, n_bids=40)),
    "cfl": generated(cfl, cfl.CFLParams(n_customers=12, n_facilities=6)),
    "bell5": lambda: read_problem(miplib("bell5")),  # general integers, continuous
    "markshare_4_0": lambda: read_problem(miplib("markshare_4_0")),  # equality rows
    "misc07": lambda: read_problem(miplib("misc07")),
}


def first_solution(problem: Problem) -> np.ndarray:
    outcome = ScipSubSolver(problem).solve(time_limit=20, seed=0, solution_limit=1)
    assert outcome.best is not None
    return outcome.best.x


def best_objective(outcome, start_objective: float) -> float:
    return outcome.best.objective if outcome.best is not None else start_objective


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_reduced_sub_mip_has_the_optimum_of_the_whole_model(name):
    problem = PROBLEMS[name]()
    start = first_solution(problem)
    whole = ScipSubSolver(problem)
    reduced = ScipSubSolver(problem, sub_problem="reduced")
    rng = np.random.default_rng(0)
    integers = problem.integer_indices
    for _ in range(3):
        free = rng.choice(integers, size=max(1, len(integers) // 3), replace=False)
        fixed = np.setdiff1d(integers, free)
        kwargs = dict(time_limit=30, seed=1, free=free, start=start)
        a, b = whole.solve(**kwargs), reduced.solve(**kwargs)
        assert a.status.proven and b.status.proven, (a.status, b.status)
        start_objective = problem.objective_value(start)
        assert best_objective(b, start_objective) == pytest.approx(
            best_objective(a, start_objective), rel=1e-6, abs=1e-6
        )
        for found in b.found:
            assert problem.check(found.x).feasible
            assert np.array_equal(found.x[fixed], start[fixed])
        if b.best is not None:
            start = b.best.x
    assert reduced.reduced_solves == 3 and whole.reduced_solves == 0


def test_the_reduction_folds_fixings_into_rows_and_bounds():
    problem = unusual_rows()
    start = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 2.0])  # objective 5.5
    assert problem.check(start).feasible
    reducer = Reducer(problem)
    columns = reducer.free_columns(np.array([1, 2, 3]))  # x0 = 1, x3 = 1 fixed
    assert columns.tolist() == [1, 2, 3, 5]
    reduced = reducer.reduce(columns, start)
    sub = reduced.problem
    assert sub.var_names == ("x1", "x2", "z", "y")
    # eq: x1 + x2 = 1; ranged: 1 <= x1 + 2 <= 3 -> x1 in [-1, 1], a bound; free row dropped.
    assert sub.row_names == ("eq", "cap")
    assert sub.row_lower.tolist() == [1.0, -np.inf] and sub.row_upper.tolist() == [1.0, 2.5]
    assert sub.lower.tolist() == [0.0, 0.0, 0.0, 0.0] and sub.upper.tolist() == [1, 1, 1, 4]
    assert sub.objective_value(reduced.start) == problem.objective_value(start)
    assert np.array_equal(reduced.lift(reduced.start), start)


@pytest.mark.parametrize("n_rows", [10, 100_000])  # a count over the rows; a sort of the entries
def test_the_rows_of_the_entries_are_those_of_a_sort(n_rows):
    row = np.random.default_rng(0).integers(0, 10, size=200) * (n_rows // 10)
    rows, inverse, per_row = _rows_held(row, n_rows)
    expected = np.unique(row, return_inverse=True, return_counts=True)
    for got, want in zip((rows, inverse, per_row), expected, strict=True):
        assert np.array_equal(got, want)


def test_the_tightest_of_several_one_variable_rows_bounds_a_variable():
    # x0 + x1 >= 1, x0 + 2 x2 >= 2.5 and -x0 + x3 >= -3 hold one free variable each once x1,
    # x2 and x3 are fixed at 0: x0 >= 1, x0 >= 2.5 (an integer: 3) and x0 <= 3.
    problem = Problem(
        name="bounds",
        var_names=("x0", "x1", "x2", "x3"),
        var_types=np.array(["I", "B", "B", "B"]),
        lower=np.zeros(4),
        upper=np.array([10.0, 1.0, 1.0, 1.0]),
        objective=np.ones(4),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(np.array([[1.0, 1, 0, 0], [1, 0, 2, 0], [-1, 0, 0, 1]])),
        row_lower=np.array([1.0, 2.5, -3.0]),
        row_upper=np.full(3, np.inf),
        row_names=("a", "b", "c"),
    )
    start = np.array([3.0, 0.0, 0.0, 0.0])
    reducer = Reducer(problem)
    sub = reducer.reduce(reducer.free_columns(np.array([0])), start).problem
    assert sub.lower.tolist() == [3.0] and sub.upper.tolist() == [3.0] and sub.n_rows == 0


def test_rows_that_the_free_variables_cannot_violate_are_left_out():
    # r0: x0 + x1 + x2 >= 1 (covered by the fixed x0), r1: x1 + x2 + x3 >= 1 (free columns
    # only), r2: x1 + x3 <= 2 (at most 2 within the bounds); min x0 + x1 + x2 + x3.
    A = np.array([[1, 1, 1, 0], [0, 1, 1, 1], [0, 1, 0, 1]], dtype=float)
    problem = Problem(
        name="cover",
        var_names=("x0", "x1", "x2", "x3"),
        var_types=np.array(["B"] * 4),
        lower=np.zeros(4),
        upper=np.ones(4),
        objective=np.ones(4),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(A),
        row_lower=np.array([1.0, 1.0, -np.inf]),
        row_upper=np.array([np.inf, np.inf, 2.0]),
        row_names=("r0", "r1", "r2"),
    )
    start = np.array([1.0, 1.0, 1.0, 0.0])
    reduced = Reducer(problem).reduce(np.array([1, 2, 3]), start)
    assert reduced.problem.row_names == ("r1",)
    assert reduced.problem.row_lower.tolist() == [1.0]
    assert reduced.row_matrix.shape == (3, 3)  # the activities still follow every row
    outcome = ScipSubSolver(problem, sub_problem="reduced").solve(
        time_limit=10, seed=0, free=np.array([1, 2, 3]), start=start
    )
    assert outcome.best is not None and outcome.best.objective == pytest.approx(2.0)
    assert problem.check(outcome.best.x).feasible


def test_a_neighborhood_of_variables_in_no_row_is_solved():
    problem = unusual_rows()
    start = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 2.0])
    solver = ScipSubSolver(problem, sub_problem="reduced")
    free = np.array([3])  # x0, x1, x2 and x3 fixed
    assert solver._reducer is not None
    assert solver._reducer.free_columns(free).tolist() == [3, 5]  # z in no row, and y
    outcome = solver.solve(time_limit=10, seed=0, free=free, start=start)
    assert outcome.status is SolveStatus.OPTIMAL
    assert outcome.best is not None and outcome.best.x[3] == 1.0
    assert outcome.best.objective == pytest.approx(9.0)


def test_auto_solves_small_neighborhoods_reduced_and_large_ones_whole():
    problem = mis.generate(mis.MISParams(n_nodes=2000), np.random.default_rng(0))
    assert problem.matrix.nnz >= REDUCED_MIN_NONZEROS
    start = np.zeros(problem.n_vars)
    solver = ScipSubSolver(problem, sub_problem="auto")
    integers = problem.integer_indices
    solver.solve(time_limit=10, seed=0, free=integers[:50], start=start)
    assert solver.reduced_solves == 1 and not solver.has_model  # the whole model is not built
    solver.solve(time_limit=10, seed=0, free=integers[50:], start=start)
    assert solver.reduced_solves == 1 and solver.has_model
    assert prefers_reduced(1_000, 100_000) and not prefers_reduced(60_000, 100_000)
    assert not prefers_reduced(10, 1_000)  # a small problem: the whole model


def test_the_rule_counts_the_nonzeros_a_reduced_problem_keeps():
    reducer = Reducer(unusual_rows())
    columns = reducer.free_columns(np.array([1, 4]))  # x1, x3 and the continuous y
    # x1 and x3 share the ranged row; x1 alone in eq, x3 alone in free, y alone in cap: bounds
    assert reducer.nonzeros(columns) == 5 and reducer.kept_nonzeros(columns) == 2
    cover = mvc.generate(mvc.MVCParams(n_nodes=300, affinity=20), np.random.default_rng(0))
    assert cover.matrix.nnz >= REDUCED_MIN_NONZEROS
    half = cover.integer_indices[:150]  # the older, busier half of the nodes
    reducer = Reducer(cover)
    assert reducer.nonzeros(half) > 0.6 * cover.matrix.nnz > reducer.kept_nonzeros(half)
    solver = ScipSubSolver(cover, sub_problem="auto")
    solver.solve(time_limit=10, seed=0, free=half, start=np.ones(cover.n_vars))
    assert solver.reduced_solves == 1 and not solver.has_model


def test_an_unknown_rule_is_named():
    with pytest.raises(UnknownNameError, match="sub_problem"):
        ScipSubSolver(knapsack(), sub_problem="small")


def test_memory_stays_flat_over_many_reduced_solves():
    problem = mis.generate(mis.MISParams(n_nodes=2000), np.random.default_rng(0))
    start = np.zeros(problem.n_vars)
    solver = ScipSubSolver(problem, sub_problem="reduced")
    rng = np.random.default_rng(1)
    process = psutil.Process()

    def solve_many(count: int) -> None:
        for _ in range(count):
            free = rng.choice(2000, 50, replace=False)
            solver.solve(time_limit=5, seed=0, free=free, start=start)

    solve_many(200)
    settled = process.memory_info().rss
    solve_many(600)
    assert process.memory_info().rss - settled < 16 * 2**20


@pytest.mark.parametrize("name", ["cfl", "mixed", "bell5"])
def test_a_lifted_solution_knows_what_changed_from_its_base(name):
    problem = PROBLEMS[name]()
    start = first_solution(problem)
    reducer = Reducer(problem)
    integers = problem.integer_indices
    reduced = reducer.reduce(reducer.free_columns(integers[1::2]), start)
    values = reduced.start + np.random.default_rng(0).integers(-1, 2, len(reduced.scope.columns))
    x, change = reduced.lift(values), reduced.change(values)
    activity = problem.matrix @ x
    np.testing.assert_allclose(change.row_activity, activity[change.rows], atol=1e-9)
    unchanged = np.setdiff1d(np.arange(problem.n_rows), change.rows)
    np.testing.assert_array_equal(activity[unchanged], (problem.matrix @ start)[unchanged])
    assert change.objective == pytest.approx(problem.objective_value(x))
    assert problem.check(x, change=change).feasible == problem.check(x).feasible
    solver = ScipSubSolver(problem, sub_problem="reduced")
    outcome = solver.solve(time_limit=10, seed=0, free=integers[1::2], start=start)
    assert outcome.found
    for found in outcome.found:
        rows = found.change.rows
        np.testing.assert_allclose(
            found.change.row_activity, (problem.matrix @ found.x)[rows], atol=1e-9
        )
        assert problem.check(found.x, change=found.change).feasible


def test_the_next_incumbent_takes_over_its_bases_activities():
    problem = PROBLEMS["cfl"]()
    start = first_solution(problem)
    reducer = Reducer(problem)
    assert reducer.holds(start)
    reduced = reducer.reduce(reducer.free_columns(problem.integer_indices[1::2]), start)
    values = reduced.start.copy()
    values[0] = 1 - values[0]
    x = reduced.lift(values)
    reducer.remember(x, reduced.change(values))
    np.testing.assert_allclose(reducer.activity(x), problem.matrix @ x, atol=1e-9)
    assert reducer.holds(x) == problem.check(x).feasible


def test_building_a_large_reduced_problem_stops_at_its_time_limit():
    problem = mis.generate(mis.MISParams(n_nodes=3000), np.random.default_rng(0))
    start = np.zeros(problem.n_vars)
    solver = ScipSubSolver(problem, sub_problem="reduced")
    integers = problem.integer_indices
    outcome = solver.solve(time_limit=0.001, seed=0, free=integers[10:], start=start)
    assert outcome.status is SolveStatus.TIME_LIMIT and outcome.found == []
    outcome = solver.solve(time_limit=10, seed=0, free=integers[:50], start=start)
    assert outcome.best is not None and problem.check(outcome.best.x).feasible


def test_the_incumbent_checks_a_change_from_itself_on_what_changed():
    problem = knapsack("maximize")  # capacity 10, weights 4, 6, 3, 5
    incumbent = Incumbent(problem, time.perf_counter())
    assert incumbent.offer(np.array([0.0, 0, 1, 0]), found_at=time.perf_counter(), source="user")
    reducer = Reducer(problem)
    reduced = reducer.reduce(np.arange(4), incumbent.x)
    too_heavy, light = np.array([1.0, 1, 1, 0]), np.array([1.0, 0, 1, 0])

    def offer(x, iteration, change):
        return incumbent.offer(
            x,
            found_at=time.perf_counter(),
            source="subsolve",
            iteration=iteration,
            size=4,
            change=change,
        )

    assert not offer(reduced.lift(too_heavy), 0, reduced.change(too_heavy))
    x = reduced.lift(light)
    assert offer(x, 0, reduced.change(light))
    assert incumbent.x is x and incumbent.objective == 17.0
    stale = reduced.change(np.ones(4))  # its base is no longer the incumbent: checked in full
    assert not offer(reduced.lift(np.ones(4)), 1, stale)


def test_a_change_is_checked_once_per_tolerance():
    problem = knapsack("maximize")
    reducer = Reducer(problem)
    reduced = reducer.reduce(np.arange(4), np.zeros(4))
    values = np.array([1.0, 0, 1, 0])
    change = reduced.change(values)
    first = problem.check(reduced.lift(values), change=change)
    assert first.feasible and problem.check(reduced.lift(values), change=change) is first
    assert problem.check(reduced.lift(values), feastol=1e-9, change=change) is not first
    assert change.scope.row_upper.tolist() == [10.0] and change.values is values
