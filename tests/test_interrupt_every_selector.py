"""Every selector and every method ends at its time limit, and ends ``interrupted`` on Ctrl-C,
with its best solution written to ``out=``.

The runs happen in this process; SIGINT is sent to it while ``solve()`` runs (from a callback
once the run is under way, or from a timer where no event marks the moment). How late a run
ends after its time limit or a signal is timing, measured by ``benchmarks/test_run_control.py``.
"""

import contextlib
import os
import signal
import threading

import numpy as np
import pytest

from helpers import miplib
from instances.generators.mis import MISParams, generate
from lns.api import BASELINES, solve
from lns.core.interrupt import InterruptGuard
from lns.core.problem.mip import read_problem
from lns.core.problem.solution_file import read_sol
from lns.core.search.result import Callback
from lns.core.solvers.lp import WarmLP, solve_lp

CLASSICAL = ["random", "local_branching", "lb_relax", "graph", "rins", "adaptive"]


@pytest.fixture(scope="module")
def mis_problem():
    """A small independent set instance for the learned selector (trained on MIS)."""
    return generate(MISParams(n_nodes=300, affinity=4.0), np.random.default_rng(0), name="mis300")


def cases():
    for name in CLASSICAL:
        yield pytest.param("lns", name, id=name)
    yield pytest.param("lns", "cl_lns", id="cl_lns")
    yield pytest.param("scip", None, id="solve_scip")
    yield pytest.param("cpsat", None, id="solve_cpsat")


def instance_for(selector, mis_problem):
    return mis_problem if selector == "cl_lns" else read_problem(miplib("p0201"))


def run(method, selector, problem, stop, **keywords):
    """:func:`lns.solve` with ``selector``, or the baseline named ``method``."""
    if method == "lns":
        return solve(problem, selector, stop, seed=0, **keywords)
    return BASELINES[method](problem, stop, seed=0, **keywords)


@contextlib.contextmanager
def signal_after(delay: float, signum: int = signal.SIGINT):
    """Send ``signum`` to this process after ``delay`` seconds.

    Outside a run's guard the signal is ignored, so a late one cannot end the test session.
    """
    previous = signal.signal(signum, lambda number, frame: None)
    timer = threading.Timer(delay, os.kill, (os.getpid(), signum))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signum, previous)


def assert_feasible_file(path, problem, result):
    x = read_sol(path, problem)
    assert problem.check(x).feasible
    assert np.isclose(problem.objective_value(x), result.objective)


@pytest.mark.parametrize("method, selector", cases())
def test_the_time_limit_ends_the_run(method, selector, mis_problem, tmp_path):
    problem = instance_for(selector, mis_problem)
    result = run(method, selector, problem, 2.0, out=tmp_path / "best.sol")
    assert result.stop_reason in ("time_limit", "optimal")
    assert_feasible_file(tmp_path / "best.sol", problem, result)


class InterruptUnderWay(Callback):
    """Sends this process SIGINT once the run is under way: after the first LNS iteration,
    or at the first solution of a whole-problem method (which has no iterations)."""

    def __init__(self, method: str):
        self.method, self.sent = method, False

    def send(self):
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)

    def on_iteration(self, record):
        self.send()

    def on_improvement(self, improvement):
        if self.method != "lns":
            self.send()


@pytest.mark.parametrize("method, selector", cases())
def test_ctrl_c_ends_the_run_interrupted(method, selector, mis_problem, tmp_path):
    # seymour: no method proves it optimal within seconds (p0201 was solved before the signal)
    problem = mis_problem if selector == "cl_lns" else read_problem(miplib("seymour"))
    interrupt = InterruptUnderWay(method)
    result = run(method, selector, problem, 30.0, out=tmp_path / "best.sol", callbacks=[interrupt])
    if result.stop_reason == "optimal":
        pytest.skip(f"{method} proved optimality before the signal")
    assert interrupt.sent and result.stop_reason == "interrupted"
    assert_feasible_file(tmp_path / "best.sol", problem, result)


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
def test_stop_signal_before_the_first_solution(signum, tmp_path):
    # SCIP's first solution of timtab1 takes seconds (5.9 s measured on a shared machine).
    problem = read_problem(miplib("timtab1"))
    with signal_after(1.0, signum):
        result = solve(problem, stop=30.0, seed=0, out=tmp_path / "best.sol")
    assert result.stop_reason == "interrupted"
    if result.x is None:
        assert not (tmp_path / "best.sol").exists()
    else:  # a fast machine found one in time
        assert_feasible_file(tmp_path / "best.sol", problem, result)


LP_SOLVES = {
    "cold": lambda problem: solve_lp(problem),
    "cold-ipm": lambda problem: solve_lp(problem, method="highs-ipm"),
    "warm": lambda problem: WarmLP(problem).solve(),
}


@pytest.mark.parametrize("solve_one", LP_SOLVES.values(), ids=LP_SOLVES.keys())
def test_ctrl_c_stops_a_long_highs_lp(solve_one):
    # dano3mip's root LP takes HiGHS well over a second: the LPs of lb_relax, rins and the
    # learned selector's features on such an instance are cut short by the same guard.
    problem = read_problem(miplib("dano3mip"))
    with signal_after(0.5), InterruptGuard() as guard:
        solution = solve_one(problem)
    assert guard.requested and solution.status == "interrupted"
    assert np.isnan(solution.objective)


def test_a_stop_requested_before_an_lp_skips_it():
    problem = read_problem(miplib("p0201"))
    with InterruptGuard() as guard:
        guard.requested = True
        assert solve_lp(problem).status == "interrupted"
    assert solve_lp(problem).optimal  # the next run's LPs are not stopped
