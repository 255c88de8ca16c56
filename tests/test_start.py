"""Start strategies: the stall rule ends a start solve, the LNS starts from its best solution,
``solve()`` uses the default, and a stop signal during the start keeps what it found."""

import math
import multiprocessing
import os
import signal
import threading
import time

import numpy as np
import pytest

import lns.api
import lns.core.search.start
import lns.core.solvers.cpsat.racer
from helpers import KNAPSACK_VALUES, FakeSubSolver, knapsack, miplib, mixed_problem
from lns import SolveParams, solve
from lns.core.errors import UnknownNameError
from lns.core.interrupt import InterruptGuard, active_guard
from lns.core.problem.mip import read_problem
from lns.core.search.params import StartParams
from lns.core.search.result import Callback
from lns.core.search.start import (
    StallRule,
    StartTask,
    make_start,
    race_until_stall,
    solve_until_stall,
)
from lns.core.search.stop import StopReason, budget
from lns.core.solvers.cpsat.racer import CpSatProcess
from lns.core.solvers.protocol import FoundSolution, SolveOutcome, SolveStatus, no_session
from lns.core.solvers.scip.subsolver import ScipSubSolver

#: Improving knapsack solutions (values 7, 17, 23) and when the fake whole-problem solve finds
#: them: three quick ones, then a long silence (until the solve is stopped).
SCHEDULE = [
    (0.02, np.array([0.0, 0.0, 1.0, 0.0])),
    (0.05, np.array([1.0, 0.0, 1.0, 0.0])),
    (0.08, np.array([1.0, 1.0, 0.0, 0.0])),
]


def test_stall_rule_window_and_share():
    rule = StallRule(floor=1.0, factor=2.0, share=0.2)
    assert rule.end(10.0, None, None, 60.0) == math.inf
    assert rule.end(10.0, 13.0, 14.0, 60.0) == 20.0  # 6 s window (twice the 3 s to the first)
    assert rule.end(10.0, 10.1, 10.2, 60.0) == 11.2  # the 1 s floor
    assert rule.end(10.0, 13.0, 14.0, 20.0) == 14.0  # 20% of 20 s


def test_stall_window_opens_at_the_first_lp():
    rule = StallRule(floor=1.0, factor=2.0, share=0.2)
    assert rule.end(10.0, 10.1, 10.2, 60.0, first_lp=None) == 22.0  # only the share, 20% of 60
    assert rule.end(10.0, 10.1, 10.2, 60.0, first_lp=15.0) == 16.0  # 1 s after the first LP
    assert rule.end(10.0, 10.1, 17.0, 60.0, first_lp=15.0) == 18.0  # 1 s after the last
    assert rule.end(10.0, None, None, 60.0, first_lp=15.0) == math.inf


def test_scip_reports_its_first_lp_once_per_solve():
    solver, lps = ScipSubSolver(read_problem(miplib("p0201"))), []
    for seed in (0, 1):
        began = time.perf_counter()
        solver.solve(time_limit=30, seed=seed, node_limit=1, on_first_lp=lps.append)
        assert len(lps) == seed + 1 and began < lps[-1] < time.perf_counter()
    solver.solve(time_limit=30, seed=2, node_limit=1)  # without a callback: none called
    assert len(lps) == 2


QUICK_STALL = StallRule(floor=0.3, factor=2.0)


def stalling_start(solver, rule=QUICK_STALL):
    """A start strategy: ``solver`` on the whole problem under ``rule``."""
    return lambda task: solve_until_stall(solver, task, rule)


def test_start_ends_by_the_stall_rule_with_every_quick_solution():
    solver, offered = FakeSubSolver(schedule=SCHEDULE), []
    task = StartTask(knapsack(), solver, time_limit=30.0, seed=0, on_found=offered.append)
    outcome = stalling_start(solver)(task)
    assert solver.endings == ["stopped"]  # by the stall rule, not at the 30 s time limit
    assert outcome.status is SolveStatus.TIME_LIMIT
    assert [found.objective for found in offered] == [7.0, 17.0, 23.0]


def test_start_ends_at_its_share_of_the_time_limit():
    solver = FakeSubSolver(schedule=SCHEDULE[:1])
    task = StartTask(knapsack(), solver, time_limit=2.0, seed=0, on_found=lambda found: None)
    outcome = stalling_start(solver, StallRule(floor=10.0, share=0.25))(task)
    assert solver.endings == ["stopped"]  # at 25% of 2 s, not at the time limit (nor 10 s)
    assert outcome.status is SolveStatus.TIME_LIMIT


def test_lns_starts_from_the_best_start_solution():
    start, lns_solver = FakeSubSolver(schedule=SCHEDULE), FakeSubSolver(schedule=[])
    result = solve(
        knapsack(),
        stop=budget(30, 2),
        params=SolveParams.from_dict(
            {"sub_solve.solver": lns_solver, "start.strategy": stalling_start(start)}
        ),
    )
    np.testing.assert_array_equal(lns_solver.starts[0], SCHEDULE[-1][1])
    assert result.objective == 23.0


def test_solve_uses_the_feasibility_start_by_default(monkeypatch):
    made = []

    def spy(name, problem, **options):
        made.append(make_start(name, problem, **options))
        return made[-1]

    monkeypatch.setattr(lns.api, "make_start", spy)
    result = solve(knapsack(), stop=budget(30, 1))
    assert StartParams().strategy == "feasibility" and [m.name for m in made] == ["feasibility"]
    assert result.x is not None


def test_first_start_keeps_the_first_solution():
    solver = FakeSubSolver(schedule=SCHEDULE)
    result = solve(
        knapsack(),
        stop=budget(30, 1),
        params=SolveParams.from_dict(
            {"sub_solve.solver": solver, "start.strategy": "first", "start.greedy": False}
        ),
    )
    np.testing.assert_array_equal(solver.starts[0], SCHEDULE[0][1])
    assert result.objective == 7.0


def test_runs_that_repeat_start_from_the_first_solution():
    start = make_start("improving", knapsack(), stall=StallRule())
    assert start.name == "improving"
    solver = FakeSubSolver(schedule=SCHEDULE)
    solve(
        knapsack(),
        stop=budget(30, 1),
        params=SolveParams.from_dict(
            {"sub_solve.solver": solver, "sub_solve.node_limit": 100, "start.greedy": False}
        ),
    )
    assert solver.solution_limits == [1]


def test_an_unknown_start_names_the_choices():
    with pytest.raises(UnknownNameError, match=r"strategy 'fastest' among choices \['cpsat', "):
        StartParams(strategy="fastest")


def test_cpsat_start_falls_back_on_a_mixed_problem():
    from helpers import mixed_problem

    assert make_start("cpsat", mixed_problem(), stall=StallRule()).name == "improving"


class InterruptAtFirst(Callback):
    """Sends this process SIGINT at the first improvement (the start solve's first solution)."""

    def on_improvement(self, improvement):
        if improvement.source == "initial":
            os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.parametrize("start", ["improving", "feasibility", "race"])
def test_interrupt_during_the_start_keeps_its_solution(start):
    result = solve(
        miplib("air05"),
        stop=60,
        callbacks=[InterruptAtFirst()],
        params=SolveParams.from_dict({"start.strategy": start}),
    )
    assert result.stop_reason == StopReason.INTERRUPTED
    assert result.x is not None and result.objective == result.trajectory[-1][1]
    assert len(result.iterations) == 0
    assert not multiprocessing.active_children()  # the race's CP-SAT process


def test_feasibility_start_restores_the_run_models_parameters():
    solver = ScipSubSolver(knapsack())
    before = solver.model.getParams()
    task = StartTask(knapsack(), solver, time_limit=10.0, seed=0, on_found=lambda found: None)
    outcome = make_start("feasibility", knapsack(), stall=StallRule())(task)
    assert outcome.best is not None and outcome.best.objective == 23.0
    assert solver.model.getParams() == before


def abandoning_start(task):
    """Offers the knapsack's solution of value 7, then reports its solver abandoned."""
    x = SCHEDULE[0][1]
    task.on_found(FoundSolution(time.perf_counter(), float(x @ KNAPSACK_VALUES), x))
    return SolveOutcome(SolveStatus.ABANDONED, [])


def test_lns_goes_on_with_a_new_sub_solver_after_an_abandoned_start():
    result = solve(
        knapsack(),
        stop=budget(30, 3),
        params=SolveParams.from_dict({"start.strategy": abandoning_start}),
    )
    assert result.stop_reason != StopReason.SUB_SOLVER_ABANDONED
    assert len(result.iterations) == 3 and result.objective == 23.0


class ProvingSubSolver(FakeSubSolver):
    """Reports its schedule's solutions, then ends with a proof of optimality."""

    def solve(self, **arguments):
        outcome = super().solve(**{**arguments, "time_limit": 0.0})
        return SolveOutcome(SolveStatus.OPTIMAL, outcome.found)


def test_a_race_offers_every_racers_solutions_and_stops_all_by_one_rule():
    late = [(0.15, np.array([1.0, 1.0, 0.0, 0.0]))]  # the best (23), from the second racer
    racers = [FakeSubSolver(schedule=SCHEDULE[:2]), FakeSubSolver(schedule=late)]
    offered = []
    task = StartTask(knapsack(), racers[0], time_limit=30.0, seed=0, on_found=offered.append)
    outcome = race_until_stall(racers, task, QUICK_STALL)
    assert [racer.endings for racer in racers] == [["stopped"], ["stopped"]]  # by one rule
    assert outcome.status is SolveStatus.TIME_LIMIT
    assert sorted(found.objective for found in offered) == [7.0, 17.0, 23.0]
    assert [found.objective for found in outcome.found] == [7.0, 17.0, 23.0]  # in time order


def test_a_racer_that_proves_optimality_ends_the_race():
    racers = [FakeSubSolver(schedule=[]), ProvingSubSolver(schedule=SCHEDULE[2:])]
    task = StartTask(knapsack(), racers[0], time_limit=30.0, seed=0, on_found=lambda f: None)
    outcome = race_until_stall(racers, task, StallRule(floor=20.0))
    assert racers[0].endings == ["stopped"]  # by the proof, not by the 20 s window
    assert outcome.status is SolveStatus.OPTIMAL and outcome.best.objective == 23.0


def test_a_racer_that_cannot_take_the_problem_leaves_the_race_to_the_others():
    # CP-SAT refuses the problem's continuous variables.
    racers = [FakeSubSolver(schedule=SCHEDULE), CpSatProcess(mixed_problem())]
    offered = []
    task = StartTask(knapsack(), racers[0], time_limit=30.0, seed=0, on_found=offered.append)
    outcome = race_until_stall(racers, task, QUICK_STALL)
    assert outcome.status is SolveStatus.TIME_LIMIT and len(offered) == 3


def test_cpsat_in_a_child_process_passes_on_its_solutions_and_proof():
    offered = []
    began = time.perf_counter()
    outcome = CpSatProcess(knapsack()).solve(time_limit=20, seed=0, on_found=offered.append)
    assert outcome.status is SolveStatus.OPTIMAL and outcome.best.objective == 23.0
    assert offered == outcome.found and all(began < f.time < time.perf_counter() for f in offered)
    assert knapsack().check(outcome.best.x).feasible
    assert not multiprocessing.active_children()


def test_cpsat_in_a_child_process_stops_when_asked():
    racer = CpSatProcess(read_problem(miplib("seymour")))  # found at once, open for minutes
    found = threading.Event()
    asking = threading.Thread(target=lambda: found.wait(60) and racer.stop())
    asking.start()
    outcome = racer.solve(time_limit=60, seed=0, on_found=lambda solution: found.set())
    asking.join()
    assert outcome.status is SolveStatus.INTERRUPTED and outcome.found
    assert not multiprocessing.active_children()


def test_a_stop_after_the_cpsat_child_ended_returns_at_once():
    racer = CpSatProcess(knapsack())
    assert racer.solve(time_limit=20, seed=0).status is SolveStatus.OPTIMAL
    stopping = threading.Thread(target=racer.stop)
    stopping.start()
    stopping.join(timeout=2.0)
    assert not stopping.is_alive()


def hang_forever(*args, **kwargs):
    threading.Event().wait()


def test_a_cpsat_child_that_does_not_report_is_killed_after_its_deadline(monkeypatch):
    # A child that neither reports nor ends: the solve returns only if the child is killed.
    monkeypatch.setattr(lns.core.solvers.cpsat.racer, "_child_main", hang_forever)
    outcome = CpSatProcess(knapsack()).solve(time_limit=0.5, seed=0)
    assert outcome.status is SolveStatus.TIME_LIMIT and not outcome.found
    assert not multiprocessing.active_children()


@pytest.mark.parametrize(
    "problem, kinds", [(knapsack, ["scip", "cpsat-process"]), (mixed_problem, ["scip"])]
)
def test_race_start_races_cpsat_on_pure_integer_problems(monkeypatch, problem, kinds):
    raced = []

    def spy(racers, task, rule):
        outcome = real_race(racers, task, rule)
        raced.extend(racer.name for racer in racers)
        return outcome

    real_race = lns.core.search.start.race_until_stall
    monkeypatch.setattr(lns.core.search.start, "race_until_stall", spy)
    params = SolveParams.from_dict({"start.strategy": "race", "start.greedy": False})
    result = solve(problem(), stop=budget(20, 1), params=params)
    assert raced == kinds
    assert result.feasibility.feasible and result.stop_reason == "optimal"


class GuardedSolver:
    """A racer that marks itself to the run's interrupt guard while it solves, as the real
    sub-solvers do."""

    name, total_solve_time = "guarded", 0.0

    def __init__(self, inner):
        self.inner = inner

    def solve(self, **arguments):
        with active_guard().solving(self.inner):
            return self.inner.solve(**arguments)

    def stop(self):
        self.inner.stop()

    def session(self):
        return no_session()


def test_stop_signal_stops_every_racer():
    racers = [FakeSubSolver(schedule=[]), FakeSubSolver(schedule=[])]
    task = StartTask(knapsack(), racers[0], time_limit=20.0, seed=0, on_found=lambda f: None)
    racing = threading.Thread(
        target=lambda: (
            all(racer.solving.wait(30) for racer in racers) and os.kill(os.getpid(), signal.SIGINT)
        )
    )
    with InterruptGuard():
        racing.start()
        outcome = race_until_stall([GuardedSolver(racer) for racer in racers], task, QUICK_STALL)
    racing.join()
    assert [racer.endings for racer in racers] == [["stopped"], ["stopped"]]
    assert outcome.status is SolveStatus.INTERRUPTED


def test_scip_ends_by_its_deadline_once_it_has_a_solution():
    """SCIP's own time limit is lowered at its first solution (seymour: found at once, open for
    minutes), so that it ends there even inside an LP."""
    solver = ScipSubSolver(read_problem(miplib("seymour")))
    began = time.perf_counter()
    outcome = solver.solve(time_limit=60, seed=0, deadline_once_found=began + 1.0)
    assert outcome.found and outcome.status is SolveStatus.TIME_LIMIT
    assert time.perf_counter() - began < 10  # not the 60 s limit
    again = solver.solve(time_limit=1.5, seed=1)  # the next solve has its own limit again
    assert again.status is SolveStatus.TIME_LIMIT and again.solve_time > 1.0


def test_a_start_ends_at_its_cap_when_scip_does_not_heed_a_stop(monkeypatch):
    """Inside a long LP SCIP heeds no stop request (monkeypatched here: none reaches it); its own
    time limit, lowered to the stall rule's cap at the first solution, still ends the start
    there instead of the watchdog abandoning it."""
    solver = ScipSubSolver(read_problem(miplib("seymour")))
    monkeypatch.setattr(solver, "_interrupt", lambda: None)
    task = StartTask(solver.problem, solver, time_limit=10.0, seed=0, on_found=lambda f: None)
    began = time.perf_counter()
    outcome = solve_until_stall(solver, task, StallRule(floor=30.0, share=0.1))
    assert outcome.status is SolveStatus.TIME_LIMIT and outcome.found
    assert time.perf_counter() - began < 3.0  # the cap is 1 s; abandoning takes 5 s more
