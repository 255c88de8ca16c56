"""How a run ends, and what the parallel portfolio's exchange costs.

``stop``: per selector and method, one run of ``solve()`` on seymour with a time limit (what is
timed: the limit, plus how late the run ends, reading the file included), then one run that
this process sends SIGINT once it is under way (after the first LNS iteration, or at the first
solution of plain SCIP and CP-SAT). ``extra_info`` has the seconds from the signal to the return
of ``solve()``, the best solution written to ``out=`` included. The tests check that a run ends
at its limit and on SIGINT (``tests/test_interrupt_every_selector.py``); how long that takes is
measured here. Run alone, on an otherwise quiet machine, for absolute figures.

``portfolio exchange``: for each number of workers, one run of the parallel portfolio
(:mod:`lns.core.parallel.portfolio`) on air05 with the random selector: the first solution is
found once in this process (SCIP's first solution, as ``solve()`` does), then the workers
improve it until the time limit. The portfolio is used even for one worker (``solve()`` with one
worker runs the loop in-process and exchanges nothing). ``auto`` runs the portfolio of worker kinds
instead (``n`` random-LNS workers and one CP-SAT, Local-MIP and SCIP worker, ``n`` of them at once
under the default allocation rule). ``extra_info``: the share of the workers' time spent in the
exchange (sending their new incumbents, taking the shared one), the share of the main process's
wall time spent checking and passing on solutions, iterations, solutions exchanged, the final
objective and, for ``auto``, the seconds each kind held a core. With fewer cores than workers the
workers share the cores: the run measures the exchange's cost, not the speed-up.
"""

from __future__ import annotations

import functools
import math
import os
import signal
import time

import pytest

from lns.api import BASELINES, named_sub_solver, solve
from lns.core.parallel.allocation import DEFAULT_RULE
from lns.core.parallel.plan import AUTO_ORDER
from lns.core.parallel.portfolio import Portfolio
from lns.core.problem.mip import instance_name, problem_from_scip, read_scip_model
from lns.core.search.incumbent import Incumbent
from lns.core.search.params import SubSolveParams
from lns.core.search.result import Callback
from lns.core.search.stop import MaxRuntime
from lns.registry import make_selector


class SignalUnderWay(Callback):
    """Sends SIGINT to this process after the first LNS iteration (or at the first solution of
    a whole-problem method) and notes when."""

    def __init__(self, method: str):
        self.method = method
        self.sent_at: float | None = None

    def send(self) -> None:
        if self.sent_at is None:
            self.sent_at = time.perf_counter()
            os.kill(os.getpid(), signal.SIGINT)

    def on_iteration(self, record) -> None:
        self.send()

    def on_improvement(self, improvement) -> None:
        if self.method != "lns":
            self.send()


@pytest.mark.parametrize(
    "method, selector",
    [
        ("lns", "random"),
        pytest.param("lns", "local_branching", marks=pytest.mark.full),
        pytest.param("lns", "lb_relax", marks=pytest.mark.full),
        pytest.param("lns", "graph", marks=pytest.mark.full),
        pytest.param("lns", "rins", marks=pytest.mark.full),
        pytest.param("lns", "adaptive", marks=pytest.mark.full),
        ("scip", "random"),
        pytest.param("cpsat", "random", marks=pytest.mark.full),
    ],
)
def test_stop(benchmark, measure, mode, path_of, tmp_path, method, selector):
    time_limit = mode.pick(0.5, 2.0)
    benchmark.group = f"stop at a {time_limit:g} s time limit, then on SIGINT: seymour"
    path, out = path_of("seymour"), tmp_path / "best.sol"
    if method == "lns":
        run = functools.partial(solve, path, selector, seed=0, out=out)
    else:
        run = functools.partial(BASELINES[method], path, seed=0, out=out)
    result = measure(lambda: run(time_limit))
    assert result.stop_reason == "time_limit"
    interrupt = SignalUnderWay(method)
    signalled = run(60, callbacks=[interrupt])
    returned = time.perf_counter()
    assert signalled.stop_reason == "interrupted" and interrupt.sent_at is not None
    benchmark.extra_info["signal to return (s)"] = returned - interrupt.sent_at


def run_portfolio(path, workers: int, time_limit: float, kinds: str) -> dict:
    """One portfolio run of ``workers`` workers (``kinds``: ``lns`` or ``auto``); its figures."""
    model = read_scip_model(path)
    problem = problem_from_scip(model, instance_name(path), source=path)
    sub_solve, started = SubSolveParams(), time.perf_counter()
    incumbent = Incumbent(problem, started)
    portfolio = Portfolio(
        problem,
        [make_selector("random")] * workers,
        named_sub_solver,
        seed=0,
        stop=MaxRuntime(time_limit),
        started=started,
        kinds=AUTO_ORDER if kinds == "auto" else (),
        rule=DEFAULT_RULE if kinds == "auto" else None,
        cores=workers,
    )
    with portfolio:
        first = named_sub_solver(problem, sub_solve, model)
        first.solve(time_limit=time_limit, seed=0, solution_limit=1, on_found=incumbent.offer_found)
        began = time.perf_counter()
        records, _ = portfolio.run(incumbent)
        wall = time.perf_counter() - began
    stats = [w for w in portfolio.workers if w is not None]
    held = {w.kind: w.time for w in stats if w.kind != "lns"}
    return {
        "worker share": sum(w.exchange_time for w in stats) / sum(w.time for w in stats),
        "main share": portfolio.exchange_time / wall,
        "iterations": len(records),
        "exchanged": len(incumbent.trajectory) - 1,
        "objective": incumbent.objective,
        "held (s)": {"lns": sum(w.time for w in stats if w.kind == "lns"), **held},
    }


@pytest.mark.parametrize(
    "kinds, workers",
    [
        ("lns", 1),
        ("lns", 2),
        *(pytest.param("lns", n, marks=pytest.mark.full) for n in (4, 8)),
        *(pytest.param("auto", n, marks=pytest.mark.full) for n in (2, 4, 8)),
    ],
)
def test_portfolio_exchange(benchmark, measure, mode, path_of, kinds, workers):
    time_limit = mode.pick(1.0, 20.0)
    benchmark.group = f"portfolio exchange, {time_limit:g} s: air05"
    figures = measure(lambda: run_portfolio(path_of("air05"), workers, time_limit, kinds), rounds=1)
    benchmark.extra_info.update(figures, cores=len(os.sched_getaffinity(0)))
    assert math.isfinite(figures["objective"])
