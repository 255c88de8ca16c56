import dataclasses
import functools
import multiprocessing
import pickle
import time

import numpy as np
import pytest

from helpers import miplib
from heuristics.adaptive import AdaptiveSelector
from heuristics.bandit import (
    POLICIES,
    UCB1,
    ArmStatistics,
    Roulette,
    Thompson,
    make_policy,
    reward_of,
)
from heuristics.graph_induced import GraphInduced
from heuristics.lb_relax import LBRelax
from heuristics.random_selector import RandomSelector
from lns import SolveParams
from lns.api import solve
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import read_problem
from lns.core.search.result import Callback, IterationRecord
from lns.core.search.selection import FunctionSelector, SearchState
from lns.core.search.stop import budget
from lns.registry import make_selector


def record(improved, seconds=0.1):
    return IterationRecord(
        iteration=0,
        selector="adaptive",
        neighborhood_size=5,
        target_size=5,
        status="optimal",
        select_time=0.0,
        solve_time=seconds,
        objective_before=1.0,
        objective_after=0.0 if improved else 1.0,
        improved=improved,
        time=0.0,
    )


def state_of(problem):
    return SearchState(problem, np.zeros(problem.n_vars), 0.0, deadline=time.perf_counter() + 60)


@pytest.mark.parametrize("policy", ["roulette", "ucb", "thompson"])
def test_each_policy_moves_to_the_arm_that_improves(policy):
    selector = AdaptiveSelector([RandomSelector(), GraphInduced()], policy=policy, per_second=False)
    problem = read_problem(miplib("p0201"))
    selector.setup(problem)
    state, rng = state_of(problem), np.random.default_rng(0)
    for _ in range(60):
        neighborhood = selector(state, 10, rng)
        selector.update(record(improved=neighborhood.info["arm"] == "graph"))
    arms = [selector(state, 10, rng).info["arm"] for _ in range(50)]
    assert arms.count("graph") > 40


@pytest.mark.parametrize("policy", [Roulette(), UCB1(), Thompson()])
def test_slow_arms_are_chosen_less_for_the_same_success(policy):
    stats = policy.statistics(2)
    for arm, seconds in ((0, 10.0), (1, 0.1)):
        for improved in (1.0, 0.0) * 5:
            stats.update(arm, improved, seconds)
    rng = np.random.default_rng(1)
    choices = [policy.choose(stats, rng, per_second=True) for _ in range(100)]
    assert choices.count(1) > 90
    assert stats.speed()[1] / stats.speed()[0] == pytest.approx(100)


def test_statistics_merge_adds_the_plays_of_another_worker():
    mine, theirs = ArmStatistics(2), ArmStatistics(2)
    mine.update(0, 1.0, 2.0)
    theirs.update(1, 0.0, 1.0)
    theirs.update(1, 1.0, 3.0)
    mine.merge(theirs)
    assert list(mine.pulls) == [1, 2] and list(mine.rewards) == [1, 1]
    assert list(mine.seconds) == [2, 4] and mine.recent.tolist() == pytest.approx([1.0, 0.84])
    assert mine.copy().pulls.tolist() == [1, 2]
    with pytest.raises(ValueError, match="3 arms into 2"):
        mine.merge(ArmStatistics(3))


def test_rewards_without_measured_time():
    improved = dataclasses.replace(
        record(improved=True, seconds=9.0), objective_before=200.0, objective_after=150.0
    )
    assert reward_of(improved, "improved") == 1.0 and reward_of(improved, "gain") == 0.25
    assert reward_of(record(improved=False), "gain") == 0.0


def test_size_regimes_scale_the_size_given_to_the_arm():
    sizes = []
    spy = FunctionSelector(lambda state, size, rng: sizes.append(size) or [0])
    selector = AdaptiveSelector([spy], sizes=[0.5, 2, 1000], policy="ucb")
    problem = read_problem(miplib("p0201"))
    state, rng = state_of(problem), np.random.default_rng(0)
    played = set()
    for _ in range(3):
        played.add(selector(state, 20, rng).info["arm"])
        selector.update(record(improved=False))
    assert sorted(sizes) == [10, 40, len(problem.integer_indices)]
    assert played == {"<lambda>@0.5", "<lambda>@2", "<lambda>@1000"}


def test_arms_by_name_or_object_and_the_default_arms():
    mixed = make_selector(
        "adaptive",
        selectors=["random", LBRelax(variant="topk")],
        options={"random": {}},
        policy="roulette",
        policy_options={"decay": 0.5},
    )
    assert mixed.arm_names == ["random", "lb_relax"] and mixed.arms[1].variant == "topk"
    assert mixed.policy.decay == 0.5 and mixed.statistics.decay == 0.5
    assert AdaptiveSelector().arm_names == [
        "random@0.5",
        "random",
        "random@2",
        "lb_relax",
        "rins",
        "graph",
        "dins",
        "crossover",
    ]
    twins = AdaptiveSelector([LBRelax(variant="topk"), LBRelax(variant="sample")])
    assert twins.arm_names == ["lb_relax[0]", "lb_relax[1]"]
    paired = AdaptiveSelector([(arm, 0.5), (arm, 3.0)])
    assert paired.arm_names == ["random@0.5", "random@3"] and paired.arms[0] is paired.arms[1]


def test_extra_arms_join_the_default_or_the_given_arms():
    portfolio = make_selector("adaptive", extra_arms=["proximity"])
    assert portfolio.arm_names == [*AdaptiveSelector().arm_names, "proximity"]
    given = make_selector(
        "adaptive",
        selectors=["random", "rins"],
        sizes=[0.5, 1.0],
        extra_arms=["proximity"],
        options={"proximity": {"time_limit": 2.0}},
    )
    assert given.arm_names == ["random@0.5", "random", "rins@0.5", "rins", "proximity"]
    assert given.arms[-1].time_limit == 2.0 and given.multipliers.tolist() == [0.5, 1, 0.5, 1, 1]


adaptive_by_name = functools.partial(make_selector, "adaptive")
arm = RandomSelector()


@pytest.mark.parametrize(
    "build, kwargs, message",
    [
        (AdaptiveSelector, {"selectors": []}, "distinct selector objects"),
        (AdaptiveSelector, {"selectors": [arm, arm]}, "distinct selector objects"),
        (AdaptiveSelector, {"selectors": [AdaptiveSelector()]}, "other than 'adaptive'"),
        (AdaptiveSelector, {"selectors": ["random"]}, "an arm must be a selector"),
        (
            AdaptiveSelector,
            {"policy": "roulette", "policy_options": {"decay": 1.0}},
            "decay must be in",
        ),
        (AdaptiveSelector, {"policy": "ucb", "policy_options": {"c": 1}}, "policy 'ucb': .*'c'"),
        (AdaptiveSelector, {"policy": "greedy"}, r"unknown policy 'greedy', choose among"),
        (AdaptiveSelector, {"reward": "speed"}, "reward must be one of"),
        (AdaptiveSelector, {"sizes": [1, 0]}, "sizes must be positive"),
        (AdaptiveSelector, {"selectors": [(arm, -1.0)]}, "multiplier must be > 0"),
        (adaptive_by_name, {"selectors": ["adaptive"]}, "cannot be one of its own arms"),
        (
            adaptive_by_name,
            {"options": {"rins": {}}, "selectors": ["random"]},
            r"options given for \['rins'\]",
        ),
        (adaptive_by_name, {"selectors": ["random"], "decy": 0.5}, "selector 'adaptive': .*'decy'"),
    ],
)
def test_bad_settings_are_named(build, kwargs, message):
    with pytest.raises(ValueError, match=message):
        build(**kwargs)


class BuggyPolicy(Roulette):
    """A policy whose constructor raises a ``TypeError`` of its own (a bug, not a bad argument)."""

    def __init__(self, decay: float = 0.9):
        len(decay)


def test_a_bug_in_a_policy_constructor_is_not_taken_for_bad_arguments(monkeypatch):
    monkeypatch.setitem(POLICIES, "roulette", BuggyPolicy)
    with pytest.raises(TypeError, match="has no len"):
        make_policy("roulette", {"decay": 0.5})
    with pytest.raises(InvalidArgumentError, match="policy 'roulette': .*'decy'"):
        make_policy("roulette", {"decy": 0.5})


@pytest.mark.parametrize("policy", ["roulette", "ucb", "thompson"])
def test_solve_with_adaptive_repeats_under_the_seed(policy):
    options = {
        "selectors": ["random", "graph", "rins"],
        "sizes": [0.5, 1],
        "per_second": False,
        "policy": policy,
        "reward": "gain",
    }
    runs = [
        solve(
            miplib("p0201"),
            make_selector("adaptive", **options),
            stop=budget(60, 12),
            seed=4,
            params=SolveParams.from_dict({"sub_solve.node_limit": 200}),
        )
        for _ in range(2)
    ]
    trace = [[(r.objective_after, r.neighborhood_size) for r in run.iterations] for run in runs]
    assert trace[0] == trace[1]
    assert runs[0].feasibility.feasible


def test_shared_statistics_see_the_plays_of_another_process():
    stats = Roulette().statistics(3, multiprocessing.get_context("spawn"))
    assert stats.is_shared and list(stats.recent) == [1.0, 1.0, 1.0]
    child = multiprocessing.get_context("spawn").Process(target=stats.update, args=(2, 1.0, 0.5))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert list(stats.pulls) == [0, 0, 1] and stats.rewards[2] == 1.0 and stats.seconds[2] == 0.5
    assert pickle.loads(pickle.dumps(stats.copy())).pulls[2] == 1  # a copy is its own


@pytest.mark.parametrize("deterministic", [False, True])
def test_portfolio_workers_learn_in_shared_statistics(deterministic):
    selector = AdaptiveSelector(per_second=not deterministic)
    result = solve(
        miplib("p0201"),
        selector,
        stop=budget(60, 12),
        seed=1,
        params=SolveParams.from_dict(
            {
                "portfolio.workers": 2,
                "start.strategy": "first",
                "portfolio.deterministic": deterministic,
            }
        ),
    )
    assert [worker.iterations for worker in result.workers] == [12, 12]
    # Outside deterministic mode every worker's plays land in the caller's selector.
    expected = 0 if deterministic else len(result.iterations)
    assert selector.statistics.pulls.sum() == expected


class Sources(Callback):
    def __init__(self):
        self.sources = []

    def on_improvement(self, improvement):
        self.sources.append(improvement.source)


@pytest.mark.parametrize("workers", [1, 2])
def test_improvements_name_the_arm_that_found_them(workers):
    sources = Sources()
    solve(
        miplib("p0201"),
        AdaptiveSelector(),
        stop=budget(60, 20),
        seed=0,
        callbacks=[sources],
        params=SolveParams.from_dict({"portfolio.workers": workers, "start.strategy": "first"}),
    )
    from_loop = [s for s in sources.sources if s != "initial"]
    if workers == 1:
        assert from_loop and all(", arm " in s for s in from_loop), sources.sources
    else:  # a worker's last incumbent, offered as it ends, names no arm
        assert all(s.startswith("worker ") for s in from_loop), sources.sources
        assert any("(lns/adaptive, arm " in s for s in from_loop), sources.sources
