import time

import numpy as np
import pytest

from helpers import miplib
from heuristics.adaptive import AdaptiveSelector
from lns.core.selection import SearchState
from lns.api import solve
from lns.core.problem import read_problem
from lns.core.result import IterationRecord


def record(improved, seconds=0.1):
    return IterationRecord(0, "adaptive", 5, 5, "optimal", 0.0, seconds, 1.0, 0.0 if improved else 1.0, improved, 0.0)


def test_weights_move_towards_the_arm_that_improves():
    selector = AdaptiveSelector(selectors=["random", "graph"], decay=0.5)
    problem = read_problem(miplib("p0201"))
    selector.setup(problem)
    state = SearchState(problem, np.zeros(problem.n_vars), 0.0, deadline=time.perf_counter() + 60)
    rng = np.random.default_rng(0)
    for _ in range(40):
        neighborhood = selector(state, 10, rng)
        selector.update(record(improved=neighborhood.info["arm"] == "graph"))
    assert selector.weights[1] == pytest.approx(1.0)
    assert selector.weights[0] == pytest.approx(selector.min_weight)
    arms = [selector(state, 10, rng).info["arm"] for _ in range(50)]
    assert arms.count("graph") > 40


def test_slow_arms_are_chosen_less_for_the_same_success():
    selector = AdaptiveSelector(selectors=["random", "graph"])
    problem = read_problem(miplib("p0201"))
    state = SearchState(problem, np.zeros(problem.n_vars), 0.0, deadline=time.perf_counter() + 60)
    rng = np.random.default_rng(1)
    selector.setup(problem)
    selector.seconds = np.array([10.0, 0.1])
    arms = [selector(state, 10, rng).info["arm"] for _ in range(100)]
    assert arms.count("graph") > 90


@pytest.mark.parametrize("kwargs, message", [
    ({"selectors": []}, "distinct registry names"),
    ({"selectors": ["random", "random"]}, "distinct registry names"),
    ({"selectors": ["adaptive"]}, "cannot be one of its own arms"),
    ({"decay": 1.0}, "decay must be in"),
    ({"reward": 0.0}, "reward > penalty"),
    ({"options": {"rins": {}}, "selectors": ["random"]}, r"options given for \['rins'\]"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AdaptiveSelector(**kwargs)


def test_solve_with_adaptive_repeats_under_the_seed():
    runs = [solve(miplib("p0201"), "adaptive", iteration_limit=12, seed=4, iteration_node_limit=200,
                  selector_options={"selectors": ["random", "graph", "rins"]}) for _ in range(2)]
    assert [r.objective_after for r in runs[0].iterations] == [r.objective_after for r in runs[1].iterations]
    assert runs[0].feasibility.feasible
