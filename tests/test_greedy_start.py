"""Greedy first solutions: covering and packing problems are recognised on their rows' signs,
the greedy passes pick what a hand check says, and a run starts from them unless told not to."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import RecordedStart, knapsack, mixed_problem
from instances.generators import ca, mis, mvc, sc
from lns import SolveParams, StartParams, solve
from lns.core.problem.mip import Problem
from lns.core.search.greedy_start import GreedyFirst, greedy_point, signed_rows
from lns.core.search.start import StartTask
from lns.core.search.stop import budget
from lns.core.solvers.scip.subsolver import ScipSubSolver


def _binary(matrix, row_lower, row_upper, objective, sense="minimize") -> Problem:
    matrix = np.asarray(matrix, dtype=float)
    rows, cols = matrix.shape
    return Problem(
        name="small",
        var_names=[f"x{j}" for j in range(cols)],
        var_types=np.array(["B"] * cols),
        lower=np.zeros(cols),
        upper=np.ones(cols),
        objective=np.asarray(objective, dtype=float),
        objective_offset=0.0,
        sense=sense,
        matrix=sp.csr_matrix(matrix),
        row_lower=np.asarray(row_lower, dtype=float),
        row_upper=np.asarray(row_upper, dtype=float),
        row_names=[f"r{i}" for i in range(rows)],
    )


def _set_cover() -> Problem:
    """Rows {0,1,2,3} to cover. Column 0 covers all four at cost 5; columns 1 and 2 cover
    {0,1} and {2,3} at cost 2 each; column 3 covers {0} at cost 0.5. The cheapest per row first:
    column 3 (0.5 a row), then 1 and 2 (2 for their remaining rows), and column 3 is then
    redundant: the cover {1, 2} of cost 4."""
    inf = np.inf
    columns = [[1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0]]
    return _binary(np.array(columns).T, [1] * 4, [inf] * 4, [5, 2, 2, 0.5])


def test_the_greedy_cover_takes_the_cheapest_coverage_and_drops_what_became_redundant():
    assert signed_rows(_set_cover()).kind == "covering"
    assert greedy_point(_set_cover()).tolist() == [0, 1, 1, 0]


def test_a_covering_row_written_with_negative_coefficients_is_read_as_covering():
    problem = _set_cover()
    flipped = _binary(-problem.matrix.toarray(), [-np.inf] * 4, [-1] * 4, problem.objective)
    assert signed_rows(flipped).kind == "covering"
    assert greedy_point(flipped).tolist() == [0, 1, 1, 0]


def test_the_greedy_packing_of_a_path_takes_every_other_node():
    """A path of five nodes, one row per edge (x_u + x_v <= 1), each node worth 1: the ends
    have the least contention, and the greedy pass finds the maximum {0, 2, 4}."""
    edges = [(0, 1), (1, 2), (2, 3), (3, 4)]
    matrix = np.zeros((4, 5))
    for row, (u, v) in enumerate(edges):
        matrix[row, [u, v]] = 1
    problem = _binary(matrix, [-np.inf] * 4, [1] * 4, [1] * 5, sense="maximize")
    assert signed_rows(problem).kind == "packing"
    assert greedy_point(problem).tolist() == [1, 0, 1, 0, 1]


def test_a_packing_column_of_no_value_stays_out_and_a_bound_is_kept():
    problem = _binary([[2, 1, 1]], [-np.inf], [2], [3, 2, 0], sense="maximize")
    x = greedy_point(problem)
    assert x.tolist() == [0, 1, 0] or x.tolist() == [1, 0, 0]
    assert problem.check(x).feasible and x[2] == 0


def _general_integers() -> Problem:
    problem = _binary([[1, 1, 1]], [-np.inf], [2], [1, 1, 1], sense="maximize")
    return dataclasses.replace(problem, var_types=np.array(["I"] * 3), upper=np.full(3, 3.0))


def test_a_binary_knapsack_is_a_packing_problem():
    problem = knapsack("maximize")
    x = greedy_point(problem)
    assert signed_rows(problem).kind == "packing" and problem.check(x).feasible
    assert problem.objective_value(x) > 0


@pytest.mark.parametrize(
    "case",
    ["equality", "mixed signs", "covering and packing rows", "general integers", "no binding row"],
)
def test_problems_of_neither_kind_have_no_greedy_point(case):
    inf = np.inf
    problems = {
        "equality": _binary([[1, 1, 1]], [1], [1], [1, 1, 1]),
        "mixed signs": _binary([[1, -1, 1]], [1], [inf], [1, 1, 1]),
        "covering and packing rows": _binary(
            [[1, 1, 0], [0, 1, 1]], [1, -inf], [inf, 1], [1, 1, 1]
        ),
        "general integers": _general_integers(),
        "no binding row": _binary([[1, 1, 1]], [-inf], [3], [-1, -1, -1]),
    }
    assert greedy_point(problems[case]) is None


def test_an_uncoverable_row_has_no_greedy_point():
    problem = _binary([[1, 1, 0], [0, 0, 0]], [1, 1], [np.inf, np.inf], [1, 1, 1])
    assert signed_rows(problem).kind == "covering"
    assert greedy_point(problem) is None


@pytest.mark.parametrize(
    "generate",
    [
        lambda rng: sc.generate(sc.SCParams(n_rows=300, n_cols=200, density=0.05), rng),
        lambda rng: mvc.generate(mvc.MVCParams(n_nodes=200), rng),
        lambda rng: mis.generate(mis.MISParams(n_nodes=300), rng),
        lambda rng: ca.generate(ca.CAParams(n_items=50, n_bids=200), rng),
    ],
    ids=["set cover", "vertex cover", "independent set", "auctions"],
)
def test_the_generated_classes_have_a_feasible_greedy_point_better_than_the_trivial_one(generate):
    problem = generate(np.random.default_rng(0))
    x = greedy_point(problem)
    assert x is not None and problem.check(x).feasible
    trivial = np.ones(problem.n_vars) if problem.sense == "minimize" else np.zeros(problem.n_vars)
    assert problem.is_better(problem.objective_value(x), problem.objective_value(trivial))


def test_the_greedy_start_stands_in_for_the_configured_one_where_it_applies():
    problem = _set_cover()
    then, found = RecordedStart(), []
    GreedyFirst(then)(StartTask(problem, ScipSubSolver(problem), 10.0, 0, found.append))
    assert [f.objective for f in found] == [4.0] and then.calls == 0
    then = RecordedStart()
    mixed = mixed_problem()
    GreedyFirst(then)(StartTask(mixed, ScipSubSolver(mixed), 10.0, 0, found.append))
    assert then.calls == 1


@pytest.mark.parametrize("greedy", [True, False])
def test_a_run_starts_from_the_greedy_point_unless_told_not_to(greedy):
    problem = sc.generate(
        sc.SCParams(n_rows=300, n_cols=200, density=0.05), np.random.default_rng(0)
    )
    params = SolveParams(start=StartParams(greedy=greedy))
    result = solve(problem, "random", budget(30, 2), seed=0, params=params)
    first = result.trajectory[0][1]
    assert (first == problem.objective_value(greedy_point(problem))) == greedy
    assert problem.check(result.x).feasible
