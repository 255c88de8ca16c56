"""Crossover, DINS and proximity search: what they do on hand-made incumbents."""

import time

import numpy as np

from helpers import knapsack, mixed_problem
from heuristics.crossover import Crossover
from heuristics.dins import DINS
from heuristics.proximity import Proximity
from heuristics.rins import RINS
from lns.core.search.selection import SearchState


def state(x, history=()):
    problem = knapsack("maximize")
    x = np.asarray(x, dtype=float)
    return SearchState(
        problem,
        x,
        problem.objective_value(x),
        history=[np.asarray(h, float) for h in history],
        deadline=time.perf_counter() + 60,
    )


def test_crossover_frees_exactly_where_the_recent_incumbents_differ():
    s = state([1, 1, 0, 0], history=[[1, 0, 0, 0], [0, 0, 1, 0]])
    neighborhood = Crossover()(s, 3, np.random.default_rng(0))
    assert neighborhood.free.tolist() == [0, 1, 2]
    assert neighborhood.info == {"differing": 3, "fallback": False}


def test_crossover_trims_to_the_size_and_falls_back_to_random_without_history():
    s = state([1, 1, 0, 0], history=[[0, 0, 1, 1]])
    trimmed = Crossover()(s, 2, np.random.default_rng(0)).free
    assert len(trimmed) == 2 and set(trimmed) <= {0, 1, 2, 3}
    first = Crossover()(state([1, 1, 0, 0]), 2, np.random.default_rng(1))
    assert first.info["fallback"] and len(first.free) == 2


def test_dins_keeps_small_lp_distances_fixed_where_rins_frees_them():
    s = state([1, 0, 0, 0])
    lp_x = np.array([1.0, 0.3, 0.6, 0.0])
    assert np.flatnonzero(RINS().differing(s, lp_x)).tolist() == [1, 2]
    assert np.flatnonzero(DINS().differing(s, lp_x)).tolist() == [2]


def test_dins_frees_what_changed_among_the_recent_incumbents():
    s = state([1, 0, 0, 0], history=[[1, 0, 0, 1]])
    assert np.flatnonzero(DINS().differing(s, np.array([1.0, 0.3, 0.6, 0.0]))).tolist() == [2, 3]


def test_dins_solves_the_root_lp_and_frees_the_far_variables():
    # LP optimum of the knapsack: a, c whole and half of b (x̄ = 1, 0.5, 1, 0).
    neighborhood = DINS()(state([1, 1, 0, 0]), 2, np.random.default_rng(0))
    assert neighborhood.free.tolist() == [1, 2]
    assert neighborhood.info["differing"] == 2 and not neighborhood.info["fallback"]


def _state_of(problem, x):
    x = np.asarray(x, dtype=float)
    return SearchState(problem, x, problem.objective_value(x), deadline=time.perf_counter() + 60)


def test_proximity_finds_an_improving_solution_and_restores_the_model():
    selector = Proximity(min_improvement=0.0)
    problem = knapsack("maximize")
    selector.setup(problem)
    model = selector._solver.model  # noqa: SLF001 - the model it must restore
    before = (model.getNConss(), model.getNVars(), model.getObjectiveSense())
    neighborhood = selector(_state_of(problem, [0, 0, 1, 0]), 2, np.random.default_rng(0))
    assert not neighborhood.info["fallback"] and neighborhood.solution is not None
    assert problem.check(neighborhood.solution).feasible
    assert problem.objective_value(neighborhood.solution) > 7.0  # better than the incumbent
    assert (model.getNConss(), model.getNVars(), model.getObjectiveSense()) == before
    restored = selector._solver.solve(time_limit=10, seed=0)  # noqa: SLF001
    assert restored.best.objective == 23.0  # the knapsack's own objective again


def test_proximity_with_general_integers_and_an_optimal_incumbent():
    problem = mixed_problem()  # z1, z2 general integers strictly inside their bounds
    x = np.array([1.0, 1.0, 3.0, 3.0, 0.5])  # the optimum, -14.25
    neighborhood = Proximity()(_state_of(problem, x), 2, np.random.default_rng(0))
    assert neighborhood.info["fallback"] and neighborhood.solution is None
    assert len(neighborhood.free) == 2
    worse = np.array([1.0, 0.0, 3.0, 1.0, 0.5])  # -10.25
    neighborhood = Proximity()(_state_of(problem, worse), 2, np.random.default_rng(0))
    assert problem.objective_value(neighborhood.solution) <= -10.25 - 0.02 * 10.25
