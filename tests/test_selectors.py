"""Neighborhood selectors: one contract for all of them, then what is special to each."""

import itertools
import time

import numpy as np
import pytest
import scipy.sparse as sp

import lns.registry
from helpers import knapsack, miplib, mixed_problem
from heuristics.graph_induced import GraphInduced
from heuristics.lb_relax import DistanceLP, LBRelax
from heuristics.local_branching import Distance, LocalBranching
from heuristics.rins import RINS
from lns import SolveParams
from lns.api import solve
from lns.core.errors import InvalidArgumentError, UnknownNameError, UnsupportedProblemError
from lns.core.problem.mip import Problem, read_problem
from lns.core.search.selection import SearchState
from lns.core.search.stop import budget
from lns.core.solvers.lp import solve_lp
from lns.core.solvers.scip.subsolver import ScipSubSolver
from lns.registry import SELECTORS, make_selector

#: Selectors that need a trained model; the learning tests cover them.
NEEDS_MODEL = {"cl_lns"}
CLASSICAL = sorted(set(SELECTORS) - NEEDS_MODEL)


def first_solution(problem: Problem) -> np.ndarray:
    outcome = ScipSubSolver(problem).solve(time_limit=20, seed=0, solution_limit=1)
    return outcome.found[-1].x


def mixed_start():
    problem = mixed_problem()
    return problem, np.zeros(problem.n_vars)  # feasible, objective 0 (optimum -14.25)


def knapsack_start():
    problem = knapsack("maximize")
    return problem, np.zeros(problem.n_vars)  # feasible, objective 0 (optimum 23)


def p0201_start():
    problem = read_problem(miplib("p0201"))
    return problem, first_solution(problem)


PROBLEMS = {
    "mixed": (mixed_start, 2),
    "knapsack_max": (knapsack_start, 2),
    "p0201": (p0201_start, 40),
}


@pytest.fixture(scope="module", params=sorted(PROBLEMS))
def start(request):
    build, size = PROBLEMS[request.param]
    problem, x = build()
    assert problem.check(x).feasible
    return problem, x, size


def state_of(problem, x, iteration=0):
    return SearchState(
        problem,
        x,
        problem.objective_value(x),
        iteration=iteration,
        deadline=time.perf_counter() + 60,
    )


#: Options that keep each selection to about a second and exactly repeatable.
FAST = {
    "local_branching": {"time_limit": 30.0, "node_limit": 20},
    # arms at the loop's size only: the default arms also free half and twice as many
    "adaptive": {"selectors": ["random", "lb_relax", "rins", "graph", "dins", "crossover"]},
}


def select(name, problem, x, size, seed):
    selector = make_selector(name, **FAST.get(name, {}))
    selector.setup(problem)
    return selector(state_of(problem, x), size, np.random.default_rng(seed))


# --- the contract ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLASSICAL)
def test_contract(name, start):
    problem, x, size = start
    neighborhood = select(name, problem, x, size, seed=3)
    free = neighborhood.free
    assert free.dtype.kind == "i"
    assert len(np.unique(free)) == len(free)
    assert set(free.tolist()) <= set(problem.integer_indices.tolist())
    assert len(free) == min(size, len(problem.integer_indices))
    if neighborhood.solution is not None:
        assert problem.check(neighborhood.solution).feasible
        assert problem.is_better(
            problem.objective_value(neighborhood.solution), problem.objective_value(x)
        )
    again = select(name, problem, x, size, seed=3)
    np.testing.assert_array_equal(again.free, free)


@pytest.mark.parametrize("name", CLASSICAL)
def test_short_lns_run_returns_a_feasible_solution(name):
    result = solve(
        miplib("p0201"),
        make_selector(name, **FAST.get(name, {})),
        stop=budget(30, 3),
        seed=0,
        params=SolveParams.from_dict({"sub_solve.time_limit": 2.0, "start.strategy": "first"}),
    )
    assert result.x is not None and result.feasibility.feasible
    assert len(result.iterations) == 3 and result.stop_reason == "iteration_limit"
    assert all(record.selector == name for record in result.iterations)


def test_unknown_selector_name_lists_the_valid_names():
    with pytest.raises(UnknownNameError) as error:
        make_selector("lb_relaxed")
    for name in SELECTORS:
        assert name in str(error.value)


class BuggyConstructor:
    """A class whose constructor raises a ``TypeError`` of its own (a bug, not a bad argument)."""

    def __init__(self, k=1):
        len(k)


@pytest.mark.parametrize("name", ["random", "adaptive"])
def test_a_bug_in_a_selector_constructor_is_not_taken_for_bad_arguments(monkeypatch, name):
    monkeypatch.setattr(lns.registry, "selector_class", lambda _: BuggyConstructor)
    with pytest.raises(TypeError, match="has no len"):
        make_selector(name)
    with pytest.raises(InvalidArgumentError, match=f"selector '{name}': .*'kk'"):
        make_selector(name, kk=2)


# --- Local Branching ------------------------------------------------------------------------------


def test_distance_rows_are_the_l1_distance_over_integer_variables():
    problem = mixed_problem()
    incumbent = np.array(
        [1.0, 0.0, 4.0, 1.0, 2.5]
    )  # y1 at upper, y2 at lower, z1 at upper, z2 interior
    distance = Distance.to(problem, incumbent)
    np.testing.assert_array_equal(distance.interior, [3])
    np.testing.assert_array_equal(distance.coefficients, [-1, 1, -1, 0, 0])
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = np.round(rng.uniform(problem.lower, np.minimum(problem.upper, 5)))
        linear = distance.coefficients @ x + distance.constant + abs(x[3] - incumbent[3])
        assert distance(x) == pytest.approx(linear)
        assert distance(x) == pytest.approx(np.abs(x[:4] - incumbent[:4]).sum())


def best_within_distance(k: int) -> float:
    """Brute force over the integer points of :func:`mixed_problem` at L1 distance ``<= k`` of 0."""
    best = 0.0
    for y1, y2, z1, z2 in itertools.product((0, 1), (0, 1), range(5), range(-2, 4)):
        w = min(
            2.5 - y1 - y2, 7 - 2 * z1, 10.0
        )  # the objective rewards w, so w is as large as allowed
        if (
            abs(y1) + abs(y2) + abs(z1) + abs(z2) <= k
            and w >= 0
            and z1 - 3 * y1 <= 1
            and z1 + z2 >= 0
        ):
            best = min(best, -3 * y1 - 2 * y2 - z1 - 2 * z2 - 0.5 * w)
    return best


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_local_branching_distance_is_exact_with_general_integers(k):
    # From 0, the optimum (y = (1, 1), z = (3, 3)) is at L1 distance 8 but differs in only
    # 4 variables: counting differing variables instead of |x - x*| would let LB reach it.
    problem, x = mixed_start()
    selector = LocalBranching(time_limit=10)
    selector.setup(problem)
    neighborhood = selector(state_of(problem, x), k, np.random.default_rng(0))
    solutions = neighborhood.info["solutions"]
    assert solutions, "every k >= 1 allows an improving move from 0"
    distance = Distance.to(problem, x)
    assert all(distance(s) <= k + 1e-9 for s in solutions)
    assert problem.objective_value(neighborhood.solution) == pytest.approx(best_within_distance(k))
    assert best_within_distance(k) > -14.25


def test_local_branching_reports_every_improving_solution_and_restores_its_model():
    problem, x = p0201_start()
    selector = LocalBranching(time_limit=20)
    selector.setup(problem)
    model = selector._solver.model
    counts = (model.getNVars(), model.getNConss())
    neighborhood = selector(state_of(problem, x), 40, np.random.default_rng(1))
    solutions = neighborhood.info["solutions"]
    objectives = [problem.objective_value(s) for s in solutions]
    assert solutions and not neighborhood.info["fallback"]
    assert all(problem.check(s).feasible for s in solutions)
    assert all(
        problem.is_better(b, a)
        for a, b in itertools.pairwise([problem.objective_value(x), *objectives])
    )
    np.testing.assert_array_equal(neighborhood.solution, solutions[-1])
    changed = np.flatnonzero(np.round(neighborhood.solution) != np.round(x))
    assert set(changed.tolist()) <= set(neighborhood.free.tolist())
    assert (model.getNVars(), model.getNConss()) == counts


def test_local_branching_falls_back_to_random_at_an_optimal_incumbent():
    problem = knapsack("maximize")
    optimum = np.array([1.0, 1.0, 0.0, 0.0])
    selector = LocalBranching(time_limit=5)
    selector.setup(problem)
    neighborhood = selector(state_of(problem, optimum), 3, np.random.default_rng(0))
    assert neighborhood.info["fallback"] and neighborhood.solution is None
    assert neighborhood.info["solutions"] == []
    assert len(neighborhood.free) == 3


def test_local_branching_without_completion_frees_only_changed_variables():
    problem, x = mixed_start()
    selector = LocalBranching(time_limit=5, complete=False)
    selector.setup(problem)
    neighborhood = selector(state_of(problem, x), 3, np.random.default_rng(0))
    changed = np.flatnonzero(np.round(neighborhood.solution[:4]) != x[:4])
    np.testing.assert_array_equal(neighborhood.free, changed)


def continuous_only() -> Problem:
    return Problem(
        name="lp_only",
        var_names=("u", "v"),
        var_types=np.array(["C", "C"]),
        lower=np.zeros(2),
        upper=np.ones(2),
        objective=np.array([1.0, 1.0]),
        objective_offset=0.0,
        sense="maximize",
        matrix=sp.csr_matrix(np.array([[1.0, 1.0]])),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([1.5]),
        row_names=("r",),
    )


@pytest.mark.parametrize(
    "selector", [LocalBranching(), LBRelax()], ids=["local_branching", "lb_relax"]
)
def test_distance_selectors_need_integer_variables(selector):
    with pytest.raises(
        UnsupportedProblemError, match="needs binary or integer variables.*has none"
    ):
        selector.setup(continuous_only())


def test_local_branching_rejects_a_non_positive_time_limit():
    with pytest.raises(ValueError, match="time_limit"):
        LocalBranching(time_limit=0)


# --- LB-RELAX -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def p0201():
    return p0201_start()


def test_lb_relax_deltas_come_from_the_lp_within_distance_k(p0201):
    problem, x = p0201
    state = state_of(problem, x)
    delta, info = LBRelax().deltas(state, 10)
    assert info["lp_status"] == "optimal"
    assert delta.sum() <= 10 + 1e-6  # all binaries: Σ Δ is the LP's distance
    assert (delta > 1e-6).any()


def test_hot_started_distance_lp_matches_cold_solves_with_general_integers():
    # Incumbents move between bounds and the interior of z1 in {0..4} and z2 in {-2..3}, so the
    # auxiliary columns are switched on and off between solves.
    problem = mixed_problem()
    points = [
        [0, 0, 0, 0, 0],
        [1, 0, 3, -2, 0.5],
        [1, 1, 3, 3, 0.5],
        [0, 1, 1, -1, 0],
        [1, 0, 2, 3, 0],
        [0, 0, 0, 0, 0],
    ]
    hot = DistanceLP(problem)
    for point, k in zip(points, [1, 2, 3, 1, 4, 2], strict=True):
        x = np.array(point, dtype=float)
        assert problem.check(x).feasible
        distance = Distance.to(problem, x)
        columns, rows = distance.lp_rows(k)
        cold = solve_lp(problem, extra_rows=rows, extra_columns=columns)
        warm = hot.solve(distance, k, None)
        assert warm.objective == pytest.approx(cold.objective, abs=1e-9)
        assert distance(warm.x[: problem.n_vars]) <= k + 1e-9


def test_lb_relax_topk_picks_the_largest_deltas(p0201):
    problem, x = p0201
    state = state_of(problem, x)
    selector = LBRelax(variant="topk")
    delta, _ = selector.deltas(state, 10)
    free = selector(state, 10, np.random.default_rng(0)).free
    chosen = np.isin(problem.integer_indices, free)
    assert chosen.sum() == 10
    assert delta[chosen].min() >= delta[~chosen].max() - 1e-9


def test_lb_relax_positive_keeps_the_moved_variables(p0201):
    problem, x = p0201
    state = state_of(problem, x)

    def positive(size):
        delta, _ = LBRelax().deltas(state, size)
        return set(problem.integer_indices[delta > 1e-6].tolist())

    assert len(positive(100)) < 100
    free = set(LBRelax()(state, 100, np.random.default_rng(0)).free.tolist())
    assert len(free) == 100 and positive(100) <= free
    assert len(positive(2)) > 2
    small = set(LBRelax()(state, 2, np.random.default_rng(0)).free.tolist())
    assert len(small) == 2 and small <= positive(2)
    exact = LBRelax(complete=False)(state, 100, np.random.default_rng(0)).free
    assert set(exact.tolist()) == positive(100)


def test_lb_relax_sampling_follows_delta(p0201):
    problem, x = p0201
    state = state_of(problem, x)
    delta, _ = LBRelax().deltas(state, 10)
    free = np.isin(
        problem.integer_indices,
        LBRelax(variant="sample", epsilon=0.0)(state, 10, np.random.default_rng(0)).free,
    )
    assert not free[delta <= 1e-9].any() and free[delta >= 1].all()
    sizes = [
        len(LBRelax(variant="sample")(state, 10, np.random.default_rng(seed)).free)
        for seed in range(5)
    ]
    expected = ((1 - 0.1) * np.clip(delta, 0, 1) + 0.05).sum()
    assert abs(np.mean(sizes) - expected) < 4 * np.sqrt(expected)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"variant": "largest"}, "positive.*topk.*sample"),
        ({"epsilon": 0.7}, "epsilon"),
        ({"lp_method": "simplex"}, "highs"),
    ],
)
def test_lb_relax_rejects_bad_options(options, match):
    with pytest.raises(ValueError, match=match):
        LBRelax(**options)


# --- graph-induced --------------------------------------------------------------------------------


def shared_row_graph(problem: Problem, free: np.ndarray) -> sp.csr_matrix:
    pattern = (problem.matrix[:, free] != 0).astype(int)
    return (pattern.T @ pattern).tocsr()


def test_graph_neighborhoods_are_connected(p0201):
    problem, x = p0201
    for seed in range(5):
        neighborhood = GraphInduced()(state_of(problem, x), 15, np.random.default_rng(seed))
        assert neighborhood.info["restarts"] == 1
        components, _ = sp.csgraph.connected_components(
            shared_row_graph(problem, neighborhood.free)
        )
        assert components == 1


def test_graph_restarts_when_a_component_is_exhausted():
    # Two disconnected rows of three binaries each: five variables need both components.
    matrix = sp.csr_matrix(np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=float))
    problem = Problem(
        name="two",
        var_names=tuple("abcdef"),
        var_types=np.array(["B"] * 6),
        lower=np.zeros(6),
        upper=np.ones(6),
        objective=np.ones(6),
        objective_offset=0.0,
        sense="minimize",
        matrix=matrix,
        row_lower=np.array([1.0, 1.0]),
        row_upper=np.array([np.inf, np.inf]),
        row_names=("r0", "r1"),
    )
    neighborhood = GraphInduced()(
        state_of(problem, np.array([1.0, 0, 0, 1, 0, 0])), 5, np.random.default_rng(0)
    )
    assert len(neighborhood.free) == 5 and neighborhood.info["restarts"] == 2


# --- RINS -----------------------------------------------------------------------------------------


def test_rins_frees_the_variables_where_incumbent_and_lp_differ(p0201):
    problem, x = p0201
    lp = solve_lp(problem)
    ints = problem.integer_indices
    differing = set(ints[np.abs(x[ints] - lp.x[ints]) > 1e-6].tolist())
    assert 0 < len(differing) < len(ints)
    state = state_of(problem, x)
    large = set(RINS()(state, len(differing) + 5, np.random.default_rng(0)).free.tolist())
    assert differing <= large and len(large) == len(differing) + 5
    small = set(RINS()(state, len(differing) - 1, np.random.default_rng(0)).free.tolist())
    assert small <= differing and len(small) == len(differing) - 1
