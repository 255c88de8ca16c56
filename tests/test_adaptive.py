import functools
import time

import numpy as np
import pytest

from helpers import miplib
from heuristics.adaptive import AdaptiveSelector
from heuristics.graph import GraphInduced
from heuristics.lb_relax import LBRelax
from heuristics.random_selector import RandomSelector
from lns.core.selection import SearchState
from lns.api import solve
from lns.core.problem import read_problem
from lns.core.result import IterationRecord
from lns.registry import make_selector


def record(improved, seconds=0.1):
    return IterationRecord(0, "adaptive", 5, 5, "optimal", 0.0, seconds, 1.0, 0.0 if improved else 1.0, improved, 0.0)


def test_weights_move_towards_the_arm_that_improves():
    selector = AdaptiveSelector([RandomSelector(), GraphInduced()], decay=0.5)
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
    selector = make_selector("adaptive", selectors=["random", "graph"])
    problem = read_problem(miplib("p0201"))
    state = SearchState(problem, np.zeros(problem.n_vars), 0.0, deadline=time.perf_counter() + 60)
    rng = np.random.default_rng(1)
    selector.setup(problem)
    selector.seconds = np.array([10.0, 0.1])
    arms = [selector(state, 10, rng).info["arm"] for _ in range(100)]
    assert arms.count("graph") > 90


def test_arms_by_name_or_object_and_the_default_arms():
    mixed = make_selector("adaptive", selectors=["random", LBRelax(variant="topk")],
                            options={"random": {}}, decay=0.5)
    assert mixed.arm_names == ["random", "lb_relax"] and mixed.arms[1].variant == "topk"
    assert mixed.decay == 0.5
    assert AdaptiveSelector().arm_names == ["random", "lb_relax", "rins", "graph"]
    twins = AdaptiveSelector([LBRelax(variant="topk"), LBRelax(variant="sample")])
    assert twins.arm_names == ["lb_relax[0]", "lb_relax[1]"]


adaptive_by_name = functools.partial(make_selector, "adaptive")
arm = RandomSelector()


@pytest.mark.parametrize("build, kwargs, message", [
    (AdaptiveSelector, {"selectors": []}, "distinct selector objects"),
    (AdaptiveSelector, {"selectors": [arm, arm]}, "distinct selector objects"),
    (AdaptiveSelector, {"selectors": [AdaptiveSelector()]}, "other than 'adaptive'"),
    (AdaptiveSelector, {"selectors": ["random"]}, "an arm must be a selector"),
    (AdaptiveSelector, {"decay": 1.0}, "decay must be in"),
    (AdaptiveSelector, {"reward": 0.0}, "reward > penalty"),
    (adaptive_by_name, {"selectors": ["adaptive"]}, "cannot be one of its own arms"),
    (adaptive_by_name, {"options": {"rins": {}}, "selectors": ["random"]},
     r"options given for \['rins'\]"),
    (adaptive_by_name, {"selectors": ["random"], "decy": 0.5}, "selector 'adaptive': .*'decy'"),
])
def test_bad_settings_are_named(build, kwargs, message):
    with pytest.raises(ValueError, match=message):
        build(**kwargs)


def test_solve_with_adaptive_repeats_under_the_seed():
    runs = [solve(miplib("p0201"), "adaptive", iteration_limit=12, seed=4, iteration_node_limit=200,
                  selector_options={"selectors": ["random", "graph", "rins"], "per_second": False})
            for _ in range(2)]
    assert [r.objective_after for r in runs[0].iterations] == [r.objective_after for r in runs[1].iterations]
    assert runs[0].feasibility.feasible
