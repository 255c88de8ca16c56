"""The portfolio's worker kinds: each finds solutions and takes the shared one (the contract,
run in-process for every kind), the main process checks what they send, a missing Local-MIP
leaves the others working, and the allocation moves cores to what improves."""

import contextlib
import logging
import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import lns.core.parallel.allocation as allocation
import lns.core.parallel.kinds.local_search as local_search
from helpers import FirstHalf, knapsack, miplib, mixed_problem
from lns import SolveParams, solve, solve_localmip
from lns.api import named_sub_solver
from lns.bench import expand_methods
from lns.core.parallel.allocation import Allocation, RateRule, StayRule
from lns.core.parallel.kinds import KINDS, worker_class
from lns.core.parallel.kinds.protocol import KindUnavailable, KindWorker, WorkerSpec
from lns.core.parallel.params import PortfolioParams
from lns.core.parallel.portfolio import Portfolio
from lns.core.problem.mip import read_problem
from lns.core.search.incumbent import Incumbent
from lns.core.search.selection import Neighborhood, Selector
from lns.core.search.stop import MaxRuntime, StopReason, budget
from lns.core.solvers.protocol import SolveOutcome, SolveStatus
from test_signals import assert_best_solution_written, start, stop, wait_for

OPTIMUM = np.array([1.0, 1.0, 0.0, 0.0])  # the knapsack's, objective 23


class FreesNothing(Selector):
    name = "frees_nothing"

    def __call__(self, state, size, rng):
        return Neighborhood(free=state.problem.integer_indices[:0])


def in_process(kind: str, seconds: float, problem=None):
    """A worker of ``kind`` in this process (its queues plain ones), and its queues."""
    problem = problem or knapsack()
    spec = WorkerSpec(
        worker=0,
        problem=problem,
        seed=np.random.SeedSequence(0),
        stop=MaxRuntime(seconds),
        started=time.perf_counter(),
        parent=os.getppid(),
        kind=kind,
        selector=FirstHalf() if kind == "lns" else None,
        make_sub_solver=named_sub_solver if kind == "lns" else None,
    )
    inbox, outbox = queue.Queue(), queue.Queue()
    return worker_class(kind)(spec, inbox, outbox), inbox, outbox


def run_in_thread(worker):
    ended: dict = {}
    thread = threading.Thread(target=lambda: ended.update(result=worker.run()), daemon=True)
    thread.start()
    return thread, ended


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_finds_a_solution_and_sends_it(kind):
    worker, inbox, outbox = in_process(kind, seconds=20)
    problem = worker.spec.problem
    inbox.put(("start", np.zeros(4), 0.0, True))
    thread, _ = run_in_thread(worker)
    message = outbox.get(timeout=20)
    assert message[0] == "found" and message[3] > 0
    assert problem.check(message[2]).feasible
    inbox.put(("stop", StopReason.TIME_LIMIT))
    thread.join(10)
    assert not thread.is_alive() and worker.found >= 1


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_takes_the_shared_incumbent(kind):
    worker, inbox, _ = in_process(kind, seconds=2)
    inbox.put(("start", np.zeros(4), 0.0, True))
    inbox.put(("incumbent", OPTIMUM, 23.0))  # waiting before the search's first step
    thread, ended = run_in_thread(worker)
    thread.join(20)
    assert not thread.is_alive()
    assert worker.received == 1 and worker.incumbent.objective == 23
    assert ended["result"][1] in (StopReason.TIME_LIMIT, StopReason.OPTIMAL)


def test_a_paused_worker_waits_and_a_stop_ends_it():
    worker, inbox, outbox = in_process("local_search", seconds=30)
    inbox.put(("start", np.zeros(4), 0.0, False))  # paused from the start
    thread, ended = run_in_thread(worker)
    with pytest.raises(queue.Empty):
        outbox.get(timeout=1.0)  # paused: it searches nothing
    inbox.put(("resume",))
    assert outbox.get(timeout=20)[0] == "found"
    inbox.put(("pause",))
    inbox.put(("stop", StopReason.TIME_LIMIT))
    thread.join(10)
    assert not thread.is_alive() and ended["result"][1] is StopReason.TIME_LIMIT


def test_a_paused_scip_worker_goes_on_with_its_search():
    worker, inbox, _ = in_process("scip", seconds=60, problem=read_problem(miplib("air05")))
    inbox.put(("start", np.zeros(worker.spec.problem.n_vars), 0.0, True))
    thread, ended = run_in_thread(worker)
    clock = []
    for seconds in (1.5, 1.0):
        time.sleep(seconds)
        inbox.put(("pause",))
        time.sleep(0.5)  # the solve has ended: SCIP is idle
        clock.append(worker.solver.model.getSolvingTime())
        inbox.put(("resume",))
    inbox.put(("stop", StopReason.TIME_LIMIT))
    thread.join(10)
    assert not thread.is_alive() and ended["result"][1] is StopReason.TIME_LIMIT
    assert worker.solves >= 2 and clock[1] > clock[0] + 0.7  # one search: SCIP's clock went on


class Liar(KindWorker):
    """Sends the all-ones knapsack (objective 38, over capacity) as its solution."""

    kind = "liar"

    def search(self, rng):
        self.incumbent.adopt(np.ones(4), 38.0, -1)
        self.share(-1)
        return [], StopReason.TIME_LIMIT


def test_a_better_but_infeasible_solution_of_a_kind_is_refused():
    problem = knapsack()
    incumbent = Incumbent(problem, time.perf_counter())
    assert incumbent.offer(np.zeros(4), found_at=time.perf_counter(), source="initial")
    with Portfolio(
        problem,
        [FreesNothing()],
        named_sub_solver,
        seed=0,
        stop=MaxRuntime(5),
        started=incumbent.started,
        kinds=[Liar],
    ) as portfolio:
        portfolio.run(incumbent)
    assert incumbent.objective == 0 and problem.check(incumbent.x).feasible
    liar = portfolio.workers[1]
    assert liar.kind == "liar" and liar.found == 1 and liar.improvements == 0


def test_a_cpsat_solution_is_checked_in_the_original_problem(caplog):
    from lns.core.solvers.cpsat.subsolver import CpSatSubSolver

    problem = knapsack()
    solver = CpSatSubSolver(problem)
    # CP-SAT's model, loosened: the capacity row admits everything.
    domain = solver.built.model.proto.constraints[0].linear.domain
    domain[0], domain[1] = -(2**40), 2**40
    found = []
    outcome = solver.solve(time_limit=10, seed=0, start=np.zeros(4), on_found=found.append)
    assert all(problem.check(f.x).feasible for f in found)
    assert outcome.best is None or problem.objective_value(outcome.best.x) <= 23
    assert "rejected a CP-SAT solution that violates the problem" in caplog.text


def test_a_missing_localmip_leaves_the_other_kinds_working(monkeypatch, caplog):
    monkeypatch.setattr(local_search, "MODULE", "localmip_py_not_installed")
    with pytest.raises(KindUnavailable, match="localmip package is not installed"):
        in_process("local_search", seconds=1)
    with caplog.at_level(logging.WARNING, logger="lns"):
        result = solve(
            knapsack(),
            FreesNothing(),
            stop=budget(30, 3),
            params=SolveParams.from_dict(
                {"portfolio.mix": {"lns": 1, "local_search": 1}, "start.strategy": "first"}
            ),
        )
    assert result.feasibility.feasible and [w.kind for w in result.workers] == ["lns", "lns"]
    assert "local_search: the localmip package is not installed" in caplog.text
    with pytest.raises(KindUnavailable, match="not installed"):
        solve_localmip(knapsack(), stop=5)


def test_kill_9_of_a_worker_of_each_kind_loses_nothing_and_leaves_no_process():
    problem = read_problem(miplib("p0201"))
    incumbent = Incumbent(problem, time.perf_counter())
    start = solve(
        problem,
        stop=budget(60, 1),
        seed=0,
        params=SolveParams.from_dict({"start.strategy": "first"}),
    ).x
    assert incumbent.offer(start, found_at=time.perf_counter(), source="initial")
    with Portfolio(
        problem,
        [FirstHalf()],
        named_sub_solver,
        seed=0,
        stop=MaxRuntime(6),
        started=incumbent.started,
        kinds=["scip", "cpsat", "local_search"],
    ) as portfolio:
        victims = [process.pid for process in portfolio.processes[1:]]
        killers = [threading.Timer(1.5, os.kill, (pid, signal.SIGKILL)) for pid in victims]
        for killer in killers:
            killer.start()
        portfolio.run(incumbent)
        for killer in killers:
            killer.join()
    reasons = [w.stop_reason for w in portfolio.workers]
    assert reasons[1:] == ["crashed"] * 3 or StopReason.OPTIMAL.value in reasons
    assert problem.check(incumbent.x).feasible
    assert problem.objective_value(incumbent.x) <= problem.objective_value(start)
    assert not multiprocessing.active_children()


def _slot_order(slices, gain, rule=None):
    """The slot's holder in each of ``slices`` slices on 2 cores (``rule``: default
    :class:`RateRule`), when the holder of slice ``i`` brings the relative improvement
    ``gain(i, worker)``."""
    allocation = Allocation([1, 2, 3, 4], slots=1, rule=rule or RateRule(), slice_seconds=1.0)
    order, now = [], 0.0  # whole seconds from 0, so that each step ends a slice exactly
    allocation.begin(now)
    for i in range(slices):
        (worker,) = allocation.holding
        order.append(worker)
        allocation.credit(worker, gain(i, worker))
        now += 1.0
        allocation.step(now)
    return order


@pytest.mark.parametrize("rule", [StayRule(), RateRule()], ids=lambda r: r.name)
def test_the_allocation_moves_time_to_the_only_kind_that_improves(rule):
    # only worker 3 improves, a little in every slice it holds the core
    order = _slot_order(40, lambda i, worker: 0.01 if worker == 3 else 0.0, rule)
    held = {worker: order.count(worker) for worker in (1, 2, 3, 4)}
    assert held[3] >= 24, held  # a uniform rotation gives it 10 (RateRule explores 1 in 4)


def test_a_kind_that_never_improves_gets_ever_fewer_exploration_turns():
    order = _slot_order(120, lambda i, worker: 0.01 if worker == 1 else 0.0)
    first, last = order[:60], order[60:]
    for kind in (2, 3, 4):
        # explored every 4th decision without the back-off: 15 or so of 60 slices for the three
        assert 1 <= last.count(kind) < first.count(kind) <= 4, order

    # a kind that begins to improve late is found at its next turn and gets the core
    def late_gain(i, worker):
        return 0.01 if worker == 1 else 0.05 * (worker == 4 and i >= 60)

    late = _slot_order(150, late_gain)
    assert late[-30:].count(4) >= 20, late  # all but the exploration turns


def _early_portfolio():
    return Portfolio(
        knapsack(),
        [FirstHalf(), FirstHalf()],
        named_sub_solver,
        seed=0,
        stop=MaxRuntime(5),
        started=time.perf_counter(),
        kinds=["cpsat", "local_search", "scip"],
        rule="rate",
        cores=2,
        background_start=True,
        early=True,
    )


def test_only_the_early_workers_with_a_slot_search_beside_the_start_search():
    portfolio = _early_portfolio()
    assert portfolio.allocation.holding == [2]  # CP-SAT, not the LNS worker waiting for a start
    assert portfolio.early.held == {3, 4} and portfolio.early.paused == {3, 4}
    since = portfolio.allocation.since
    portfolio.early.begin()
    started = [portfolio.inboxes[w].get(timeout=5) for w in (2, 3, 4)]
    assert [message[3] for message in started] == [True, False, False]
    portfolio.settle()  # the first solution: the held-back workers no longer join
    assert portfolio.allocation.holding == [2] and portfolio.allocation.since == since
    assert portfolio.early.held == set() and portfolio.early.paused == {3, 4}
    portfolio.allocation.holding = [3]
    portfolio.settle()  # once only
    assert portfolio.allocation.holding == [3] and portfolio.early.paused == {3, 4}
    portfolio.early.pause({2})
    assert portfolio.inboxes[2].get(timeout=5) == ("pause",)


@pytest.mark.parametrize("found", [False, True], ids=["no solution", "a solution"])
def test_the_held_back_early_workers_join_after_a_slice_without_a_solution(monkeypatch, found):
    monkeypatch.setattr(allocation, "SLICE", 0.3)
    portfolio = _early_portfolio()
    closing = threading.Event()
    portfolio.early.begin()
    collector = threading.Thread(target=portfolio.early.collect, args=(closing,))
    collector.start()
    if found:
        portfolio.outbox.put(("found", 2, OPTIMUM, 23.0, time.perf_counter(), 0, 0, None))
    time.sleep(1.0)
    closing.set()
    collector.join()
    sent = {w: [] for w in (3, 4)}
    for worker, messages in sent.items():
        with contextlib.suppress(queue.Empty):
            while True:
                messages.append(portfolio.inboxes[worker].get(timeout=0.5)[0])
    joined = ["start", "resume"] if not found else ["start"]
    assert sent == {3: joined, 4: joined}
    assert portfolio.early.paused == (set() if not found else {3, 4})


def test_an_early_workers_improvement_counts_for_its_kind_in_the_allocation():
    problem = knapsack()
    portfolio = Portfolio(
        problem,
        [FirstHalf(), FirstHalf()],
        named_sub_solver,
        seed=0,
        stop=MaxRuntime(5),
        started=time.perf_counter(),
        kinds=["cpsat", "local_search"],
        rule="rate",
        cores=2,
        background_start=True,
        early=True,
    )
    incumbent = Incumbent(problem, time.perf_counter())
    incumbent.offer(np.array([0.0, 0.0, 1.0, 1.0]), found_at=time.perf_counter(), source="initial")
    threading.Thread(target=portfolio.early.collect, args=(threading.Event(),)).start()
    portfolio.outbox.put(("found", 3, OPTIMUM, 23.0, time.perf_counter(), 0, 0, None))
    portfolio.early.wait_found(5.0)
    portfolio.take_early(incumbent)
    assert incumbent.objective == 23 and portfolio.early_improvements[3] == 1
    assert portfolio.allocation.slice_gain == {1: 0.0, 2: 0.0, 3: pytest.approx(8 / 23)}


def test_an_auto_portfolio_pauses_and_stops_every_worker_at_the_time_limit(monkeypatch):
    monkeypatch.setattr(allocation, "SLICE", 1.0)  # several decisions within the run
    result = solve(
        miplib("air05"),
        stop=8,
        seed=0,
        params=SolveParams.from_dict({"portfolio.workers": 2, "portfolio.mix": "auto"}),
    )
    assert [w.kind for w in result.workers] == ["lns", "lns", "cpsat", "local_search", "scip"]
    assert result.feasibility.feasible and result.stop_reason == "time_limit"
    # every worker, paused or not, took the stop and reported (none was killed)
    assert all(w.stop_reason == "time_limit" for w in result.workers), result.workers
    assert not multiprocessing.active_children()


@pytest.mark.parametrize(
    "arguments",
    [
        dict(workers=2, mix={"lns": 1, "cpsat": 2}),
        dict(mix={"cpsat": 1}),
        dict(mix={"lns": 1, "gurobi": 1}),
        dict(mix="everything"),
        dict(workers=2, mix="auto", deterministic=True),
        dict(mix=["lns", "cpsat"]),
    ],
)
def test_invalid_portfolios_are_refused(arguments):
    with pytest.raises(ValueError, match="mix"):
        PortfolioParams(**arguments)


def test_lns_bench_names_the_new_methods():
    assert expand_methods(["localmip", "auto@2", "auto_rate@2"]) == [
        "localmip",
        "auto@2",
        "auto_rate@2",
    ]
    assert "localmip" in expand_methods("all") and "auto" not in expand_methods("all")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_stop_signal_to_a_portfolio_of_every_kind_writes_the_solution(signum, tmp_path):
    mix = "portfolio.mix={lns: 1, scip: 1, cpsat: 1, local_search: 1}"
    process = start(tmp_path, "instance=air05", "time_limit=60", mix, "out=best.sol")
    seen = wait_for(process, "(worker ")
    output = stop(process, signum, seen)
    assert process.returncode == 128 + signum
    assert "(interrupted)" in output
    assert "4 workers (1 lns, 1 scip, 1 cpsat, 1 local_search)" in output
    assert_best_solution_written(tmp_path / "best.sol", output, "air05")
    assert not multiprocessing.active_children()


def finds_nothing(task):
    """A start strategy that finds no solution."""
    return SolveOutcome(SolveStatus.TIME_LIMIT)


def test_the_other_kinds_search_before_the_first_solution_and_give_it():
    result = solve(
        knapsack(),
        FreesNothing(),
        params=SolveParams.from_dict(
            {"portfolio.mix": {"lns": 1, "cpsat": 1}, "start.strategy": finds_nothing}
        ),
    )
    assert result.objective == 23 and result.feasibility.feasible
    assert result.found_by == "cpsat" and result.workers[1].improvements >= 1


def test_cpsat_solves_a_mip_with_continuous_variables_through_the_mip_interface():
    worker, inbox, outbox = in_process("cpsat", seconds=20, problem=mixed_problem())
    problem = worker.spec.problem
    assert type(worker.solver).__name__ == "MipInterface"
    inbox.put(("start", np.zeros(5), 0.0, True))
    thread, ended = run_in_thread(worker)
    message = outbox.get(timeout=20)
    assert message[0] == "found" and message[3] < 0 and problem.check(message[2]).feasible
    thread.join(20)
    assert not thread.is_alive() and ended["result"][1] is StopReason.SOLVER_FINISHED


CTRL_C_AFTER_A_MIP_INTERFACE_SOLVE = """
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
signal.signal(signal.SIGINT, signal.default_int_handler)  # also where the parent ignores it
from helpers import mixed_problem
from lns.core.parallel.kinds.cpsat import MipInterface
MipInterface(mixed_problem()).solve(time_limit=5, seed=0)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
except KeyboardInterrupt:
    print("KeyboardInterrupt")
"""


def test_the_mip_interface_leaves_ctrl_c_to_python():
    """CP-SAT's own Ctrl-C catching, once its solve ends, leaves the default action behind:
    the next Ctrl-C would end the process instead of stopping the run."""
    tests = os.path.dirname(os.path.abspath(__file__))
    code = CTRL_C_AFTER_A_MIP_INTERFACE_SOLVE
    child = subprocess.run([sys.executable, "-c", code, tests], capture_output=True, timeout=60)
    assert child.returncode == 0 and child.stdout.decode().strip() == "KeyboardInterrupt"
