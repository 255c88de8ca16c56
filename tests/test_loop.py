"""The LNS loop on a scripted fake sub-solver: what it keeps, when it stops, how the size adapts."""

import contextlib
import time

import numpy as np
import pytest

from helpers import FakeSubSolver, knapsack
from lns import SolveParams, solve
from lns.core.search.incumbent import Incumbent
from lns.core.search.loop import run_lns
from lns.core.search.neighborhood_size import AdaptiveSize
from lns.core.search.params import LoopParams, SubSolveParams
from lns.core.search.selection import Neighborhood, Selector
from lns.core.search.stop import MaxIterations, StopReason, budget
from lns.core.solvers.protocol import SolveStatus

START = np.array([1.0, 0.0, 0.0, 0.0])  # knapsack value 10 (optimum 23: a and b)
BETTER = np.array([1.0, 0.0, 1.0, 0.0])  # value 17, weight 7
INFEASIBLE = np.ones(4)  # value 38, weight 18 > 10


class FirstK(Selector):
    """Frees the first ``size`` integer variables."""

    name = "first_k"

    def __call__(self, state, size, rng):
        return Neighborhood(state.problem.integer_indices[:size])


def _run(
    script,
    iterations=3,
    size_rule=None,
    start=START,
    max_failures=5,
    renew=None,
    selector=None,
    sub_solve=None,
):
    problem = knapsack()
    incumbent = Incumbent(problem, time.perf_counter())
    assert incumbent.offer(start, found_at=time.perf_counter(), source="user")
    solver = script if isinstance(script, FakeSubSolver) else FakeSubSolver(script)
    records, reason = run_lns(
        problem,
        selector or FirstK(),
        solver,
        incumbent,
        rng=np.random.default_rng(0),
        stop=MaxIterations(iterations),
        callbacks=[],
        size_rule=size_rule or AdaptiveSize(4, 0.5, max_fraction=0.5),
        sub_solve=sub_solve,
        loop=LoopParams(max_failures=max_failures),
        renew=renew,
    )
    return records, reason, incumbent, solver


def test_only_a_checked_feasible_improvement_is_accepted():
    records, reason, incumbent, _ = _run(
        [(SolveStatus.TIME_LIMIT, [INFEASIBLE]), (SolveStatus.TIME_LIMIT, [BETTER])]
    )
    assert [r.improved for r in records] == [False, True, False]
    np.testing.assert_array_equal(incumbent.x, BETTER)
    assert [objective for _, objective in incumbent.trajectory] == [10.0, 17.0]


def test_the_sub_solver_gets_the_incumbent_and_the_fixings():
    _, _, _, solver = _run([(SolveStatus.TIME_LIMIT, [BETTER])], iterations=2)
    np.testing.assert_array_equal(solver.calls[0]["start"], START)
    np.testing.assert_array_equal(solver.calls[1]["start"], BETTER)
    np.testing.assert_array_equal(solver.calls[0]["free"], [0, 1])  # FirstK frees a and b


def test_a_failing_sub_solve_keeps_the_incumbent():
    records, reason, incumbent, _ = _run([RuntimeError("boom"), (SolveStatus.NODE_LIMIT, [BETTER])])
    assert [r.status for r in records] == ["error", "nodelimit", "nodelimit"]
    assert records[0].objective_after == 10.0 and not records[0].improved
    np.testing.assert_array_equal(incumbent.x, BETTER)
    assert reason is StopReason.ITERATION_LIMIT


def test_repeated_failures_stop_the_run():
    records, reason, incumbent, _ = _run([RuntimeError("boom")], iterations=50, max_failures=3)
    assert reason is StopReason.FAILURES and len(records) == 2
    np.testing.assert_array_equal(incumbent.x, START)


def test_an_abandoned_sub_solve_ends_the_run_with_the_incumbent():
    records, reason, incumbent, solver = _run([(SolveStatus.ABANDONED, [BETTER])], iterations=10)
    assert reason is StopReason.SUB_SOLVER_ABANDONED
    assert len(records) == 1 and len(solver.calls) == 1
    np.testing.assert_array_equal(incumbent.x, BETTER)


class SessionSubSolver(FakeSubSolver):
    """Records when its sessions begin and end."""

    def __init__(self, script, events, label):
        super().__init__(script)
        self.events, self.label = events, label

    @contextlib.contextmanager
    def session(self):
        self.events.append(f"{self.label} begins")
        yield
        self.events.append(f"{self.label} ends")


def test_the_loop_goes_on_with_the_sub_solver_that_renew_gives():
    events: list = []
    first = SessionSubSolver([(SolveStatus.ABANDONED, [BETTER])], events, "first")
    second = SessionSubSolver([(SolveStatus.NODE_LIMIT, [])], events, "second")
    records, reason, incumbent, _ = _run(first, iterations=4, renew=lambda: second)
    assert reason is StopReason.ITERATION_LIMIT
    assert [r.iteration for r in records] == [0, 1, 2, 3]  # counted on, not from 0 again
    assert [r.status for r in records] == ["abandoned", "nodelimit", "nodelimit", "nodelimit"]
    assert len(first.calls) == 1 and len(second.calls) == 3
    np.testing.assert_array_equal(second.calls[0]["start"], BETTER)  # from the incumbent
    np.testing.assert_array_equal(incumbent.x, BETTER)
    assert events == ["first begins", "second begins", "second ends", "first ends"]


def test_the_loop_ends_when_renew_gives_no_sub_solver():
    records, reason, _, _ = _run([(SolveStatus.ABANDONED, [])], iterations=10, renew=lambda: None)
    assert reason is StopReason.SUB_SOLVER_ABANDONED and len(records) == 1


def test_a_complete_solve_of_the_whole_problem_ends_the_run_optimal():
    records, reason, _, _ = _run(
        [(SolveStatus.OPTIMAL, [])], iterations=10, size_rule=AdaptiveSize(4, 0.5, max_fraction=1.0)
    )
    # 2 variables free: optimal in the neighborhood only; then 4 (growth +1 to 3, then 4) ...
    assert reason is StopReason.OPTIMAL
    assert records[-1].neighborhood_size == 4 and all(r.neighborhood_size < 4 for r in records[:-1])


def test_at_the_cap_a_complete_solve_without_improvement_tries_the_whole_problem():
    records, reason, _, solver = _run(
        [
            (SolveStatus.OPTIMAL, []),
            (SolveStatus.NODE_LIMIT, []),
            (SolveStatus.OPTIMAL, []),
            (SolveStatus.NODE_LIMIT, [BETTER]),
            (SolveStatus.OPTIMAL, []),
        ],
        iterations=7,
    )
    # whole, back to the cap; neither the same incumbent nor a better one tries it again until
    # the attempts' share of the run allows (whole_problem), which these instant solves do not
    assert [r.target_size for r in records] == [2, 4, 2, 2, 2, 2, 2]
    assert reason is StopReason.ITERATION_LIMIT
    assert [len(call["free"]) for call in solver.calls] == [2, 4, 2, 2, 2, 2, 2]


@pytest.mark.parametrize(
    ("node_limit", "attempt_limit"), [(-1, 0.05 * 5.0), (100, 5.0)], ids=["timed", "node_limit"]
)
def test_the_first_attempt_on_the_whole_problem_is_short_unless_runs_must_repeat(
    node_limit, attempt_limit
):
    _, _, _, solver = _run(
        [(SolveStatus.OPTIMAL, []), (SolveStatus.NODE_LIMIT, [])],
        iterations=3,
        sub_solve=SubSolveParams(time_limit=5.0, node_limit=node_limit),
    )
    assert [len(call["free"]) for call in solver.calls] == [2, 4, 2]
    limits = [call["time_limit"] for call in solver.calls]
    assert limits[1] == pytest.approx(attempt_limit, rel=1e-3) and limits[2] > 4.9


def test_iteration_limit():
    records, reason, _, _ = _run([(SolveStatus.NODE_LIMIT, [])], iterations=3)
    assert reason is StopReason.ITERATION_LIMIT and [r.iteration for r in records] == [0, 1, 2]


def test_the_size_shrinks_after_a_time_limit_and_grows_otherwise():
    rule = AdaptiveSize(100, 0.4, growth=1.5, max_fraction=1.0, shrink=0.5)
    problem_size = 4  # FirstK frees at most the knapsack's 4 variables; the targets show the rule
    records, _, _, _ = _run(
        [(SolveStatus.TIME_LIMIT, []), (SolveStatus.TIME_LIMIT, []), (SolveStatus.NODE_LIMIT, [])],
        iterations=4,
        size_rule=rule,
    )
    assert [r.target_size for r in records] == [40, 20, 10, 15]
    assert all(r.neighborhood_size == problem_size for r in records)


def test_a_sub_solve_left_running_past_its_limit_shrinks_the_size_as_a_time_out_does():
    events: list = []
    first = SessionSubSolver([(SolveStatus.ABANDONED, [])], events, "first")
    second = SessionSubSolver([(SolveStatus.NODE_LIMIT, [])], events, "second")
    rule = AdaptiveSize(100, 0.4, growth=1.5, max_fraction=1.0, shrink=0.5)
    records, _, _, _ = _run(first, iterations=3, size_rule=rule, renew=lambda: second)
    assert [r.target_size for r in records] == [40, 20, 30]


class CappedFirstK(FirstK):
    """Frees the first ``size`` integer variables, allowing the sub-solve 0.25 s on even
    iterations and the loop's limit on odd ones."""

    def __call__(self, state, size, rng):
        neighborhood = super().__call__(state, size, rng)
        neighborhood.time_limit = 0.25 if state.iteration % 2 == 0 else None
        return neighborhood


def test_a_neighborhood_s_time_limit_caps_its_sub_solve_below_the_loop_s():
    *_, solver = _run(
        [(SolveStatus.NODE_LIMIT, [])],
        selector=CappedFirstK(),
        sub_solve=SubSolveParams(time_limit=2.0),
    )
    assert [call["time_limit"] for call in solver.calls] == [0.25, 2.0, 0.25]


def test_a_growth_of_one_keeps_the_size_and_a_small_growth_adds_at_least_one():
    fixed = AdaptiveSize(1000, 0.1, growth=1.0, shrink=None)
    slow = AdaptiveSize(1000, 0.01, growth=1.02, shrink=None)
    for _ in range(3):
        fixed.update(improved=False, timed_out=False)
        slow.update(improved=False, timed_out=False)
    assert fixed.size == 100 and slow.size == 13


def test_solve_uses_a_sub_solver_object_and_records_its_name():
    fake = FakeSubSolver([RuntimeError("boom"), (SolveStatus.NODE_LIMIT, [BETTER])])
    result = solve(
        knapsack(),
        stop=budget(60, 8),
        initial_solution=START,
        seed=1,
        params=SolveParams.from_dict({"sub_solve.solver": fake}),
    )
    assert result.sub_solver == "fake" and len(fake.calls) == 8
    assert [r.status for r in result.iterations].count("error") == 1
    assert result.objective == 17.0 and result.feasibility.feasible


def test_solve_stops_on_repeated_failures():
    result = solve(
        knapsack(),
        stop=budget(60, 50),
        initial_solution=START,
        params=SolveParams.from_dict(
            {"sub_solve.solver": FakeSubSolver([RuntimeError("boom")]), "loop.max_failures": 3}
        ),
    )
    assert result.stop_reason == "failures" and len(result.iterations) == 2
    assert result.objective == 10.0


def test_solve_with_the_cpsat_sub_solver():
    pytest.importorskip("ortools")  # the optional dependency; the project's module must import
    result = solve(
        knapsack(),
        stop=budget(20, 20),
        params=SolveParams.from_dict({"sub_solve.solver": "cpsat", "size.max_fraction": 1.0}),
    )
    assert result.sub_solver == "cpsat" and result.objective == pytest.approx(23.0)
    assert result.feasibility.feasible


def test_an_unknown_sub_solver_is_named():
    with pytest.raises(
        ValueError, match=r"sub_solve.solver 'gurobi' among choices \['cpsat', 'scip'\]"
    ):
        solve(knapsack(), params=SolveParams.from_dict({"sub_solve.solver": "gurobi"}))


def test_the_incumbent_refuses_worse_solutions_whatever_the_acceptance():
    incumbent = Incumbent(
        knapsack(), time.perf_counter(), acceptance=lambda problem, new, old: True
    )
    assert incumbent.offer(
        BETTER, found_at=time.perf_counter(), source="subsolve", iteration=0, size=2
    )
    assert not incumbent.offer(
        START, found_at=time.perf_counter(), source="subsolve", iteration=1, size=2
    )  # 10 < 17
    assert not incumbent.offer(
        INFEASIBLE, found_at=time.perf_counter(), source="subsolve", iteration=2, size=2
    )
    np.testing.assert_array_equal(incumbent.x, BETTER)
    assert incumbent.trajectory[-1][1] == 17.0 and incumbent.improved_iteration == 0


def test_the_trajectory_stays_in_time_order_when_solutions_arrive_out_of_order():
    """A portfolio's main process may take a solution found a little before the last one."""
    started = time.perf_counter()
    incumbent = Incumbent(knapsack(), started)
    assert incumbent.offer(START, found_at=started + 2.0, source="initial")
    assert incumbent.offer(
        BETTER, found_at=started + 1.5, source="subsolve", iteration=0, size=2
    )  # found earlier, came later
    times = [t for t, _ in incumbent.trajectory]
    assert times == sorted(times) and times[-1] == pytest.approx(2.0)


def test_a_solve_goes_on_with_a_new_named_sub_solver_after_one_gave_up(monkeypatch):
    made = []

    def named_sub_solver(problem, sub_solve, model=None):
        status = SolveStatus.ABANDONED if not made else SolveStatus.NODE_LIMIT
        made.append(FakeSubSolver([(status, [BETTER] if not made else [])]))
        made[-1].total_solve_time = 2.0 if len(made) == 1 else 0.5
        return made[-1]

    monkeypatch.setattr("lns.api.named_sub_solver", named_sub_solver)
    result = solve(knapsack(), stop=budget(30, 4), initial_solution=START)
    assert result.stop_reason == StopReason.ITERATION_LIMIT and result.objective == 17.0
    assert len(made) == 2 and [len(solver.calls) for solver in made] == [1, 3]
    assert [r.iteration for r in result.iterations] == [0, 1, 2, 3]
    assert result.solver_time == 2.5  # the replaced sub-solver's seconds count
