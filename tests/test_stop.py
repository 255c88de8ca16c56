"""Stop rules: each one, their ``|`` combination, and stops that end a solve() early."""

import numpy as np
import pytest
import scipy.sparse as sp

from lns import InvalidArgumentError, Problem, SolveParams, solve, solve_scip
from lns.core.search.stop import (
    AnyOf,
    Callback,
    MaxIterations,
    MaxRuntime,
    NoImprovement,
    StopReason,
    StopState,
    Target,
    TimeLimit,
    budget,
)


def _state(**values):
    defaults = dict(
        elapsed=1.0,
        iterations=5,
        objective=100.0,
        sense="minimize",
        since_improvement=0.5,
        iterations_since_improvement=2,
    )
    return StopState(**{**defaults, **values})


def test_max_runtime_and_its_remaining_time():
    rule = MaxRuntime(10)
    assert not rule(_state(elapsed=9.9)) and rule(_state(elapsed=10.0))
    assert rule.remaining(_state(elapsed=4.0)) == pytest.approx(6.0)
    assert TimeLimit is MaxRuntime and rule.fired(_state(elapsed=11)) is StopReason.TIME_LIMIT


def test_max_iterations():
    assert not MaxIterations(6)(_state(iterations=5)) and MaxIterations(5)(_state(iterations=5))
    assert MaxIterations(5).remaining(_state()) == np.inf


def test_no_improvement_in_seconds_or_iterations():
    assert NoImprovement(seconds=0.5)(_state(since_improvement=0.5))
    assert not NoImprovement(seconds=0.6)(_state(since_improvement=0.5))
    assert NoImprovement(iterations=2)(_state()) and not NoImprovement(iterations=3)(_state())
    assert NoImprovement(seconds=9, iterations=2)(_state())  # either limit stops
    with pytest.raises(ValueError, match="seconds, iterations"):
        NoImprovement()


@pytest.mark.parametrize(
    "sense, objective, stops",
    [
        ("minimize", 100, True),
        ("minimize", 100.5, False),
        ("maximize", 100, True),
        ("maximize", 99.5, False),
    ],
)
def test_target_in_both_senses(sense, objective, stops):
    assert Target(100)(_state(sense=sense, objective=objective)) is stops


def test_target_without_a_solution_goes_on():
    assert not Target(100)(_state(objective=None))


def test_callback_sees_the_state():
    rule = Callback(lambda state: state.iterations >= 5)
    assert rule(_state()) and not rule(_state(iterations=4))
    assert rule.fired(_state()) is StopReason.CALLBACK


def test_or_combines_flat_and_names_the_rule_that_fired():
    rule = MaxRuntime(10) | MaxIterations(50) | Target(90)
    assert isinstance(rule, AnyOf) and len(rule.rules) == 3
    assert rule.fired(_state()) is None and not rule(_state())
    assert rule.fired(_state(iterations=50)) is StopReason.ITERATION_LIMIT
    assert rule.fired(_state(objective=80.0)) is StopReason.TARGET
    assert (
        rule.fired(_state(elapsed=20.0, objective=80.0)) is StopReason.TIME_LIMIT
    )  # the first that fires
    assert rule.remaining(_state(elapsed=4.0)) == pytest.approx(6.0)
    assert (MaxRuntime(5) | MaxRuntime(3)).remaining(_state(elapsed=1.0)) == pytest.approx(2.0)


def test_stop_reasons_keep_the_stored_strings():
    assert StopReason.TIME_LIMIT == "time_limit"
    assert str(StopReason.SUB_SOLVER_ABANDONED) == "sub_solver_abandoned"
    assert StopReason("no_integer_variables") is StopReason.NO_INTEGER_VARIABLES


def knapsack30(seed: int = 0) -> Problem:
    """A 0/1 knapsack of 30 items, weights and values in 10..99, capacity half the total weight."""
    rng = np.random.default_rng(seed)
    values = rng.integers(10, 100, 30).astype(float)
    weights = rng.integers(10, 100, 30).astype(float)
    return Problem(
        name="knapsack30",
        var_names=tuple(f"x{j}" for j in range(30)),
        var_types=np.array(["B"] * 30),
        lower=np.zeros(30),
        upper=np.ones(30),
        objective=values,
        objective_offset=0.0,
        sense="maximize",
        matrix=sp.csr_matrix(weights[None, :]),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([weights.sum() / 2]),
        row_names=("capacity",),
    )


def test_a_30_variable_knapsack_ends_optimal_before_its_time_limit():
    problem = knapsack30()
    optimum = solve_scip(problem, stop=30).objective
    result = solve(problem, stop=30, seed=0)
    assert result.status == "optimal" and result.stop_reason == "optimal"
    assert result.objective == pytest.approx(optimum) and result.feasibility.feasible


def test_solve_stops_at_a_target_and_after_no_improvement():
    problem = knapsack30()
    first = solve(
        problem,
        stop=budget(60, 1),
        seed=0,
        params=SolveParams.from_dict({"start.strategy": "first"}),
    ).trajectory[0][1]
    result = solve(
        problem,
        stop=budget(30) | Target(first),
        seed=0,
        params=SolveParams.from_dict({"start.strategy": "first"}),
    )
    assert result.stop_reason == "target" and result.iterations == []
    result = solve(
        problem,
        stop=budget(30) | NoImprovement(iterations=1),
        seed=0,
        params=SolveParams.from_dict({"size.max_fraction": 0.2, "start.strategy": "first"}),
    )
    assert result.stop_reason in ("no_improvement", "optimal")
    assert all(r.improved for r in result.iterations[:-1]) and not result.iterations[-1].improved


def test_solve_rejects_a_stop_that_is_not_a_rule():
    with pytest.raises(InvalidArgumentError, match="^stop=<function .* expected seconds > 0"):
        solve(knapsack30(), stop=lambda state: True)
