"""The parallel portfolio: workers share one checked incumbent, lose nothing, leave no process."""

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types

import numpy as np
import pytest

import lns.api
from helpers import FirstHalf, first_gives_up, knapsack, miplib, wait_for_exit
from lns import PortfolioParams, SolveParams, solve
from lns.api import named_sub_solver
from lns.core.parallel.portfolio import Portfolio
from lns.core.parallel.spawn_main import refers_to_main
from lns.core.search.incumbent import Incumbent
from lns.core.search.selection import FunctionSelector, Neighborhood, Selector
from lns.core.search.stop import MaxRuntime, StopReason, budget
from test_signals import assert_best_solution_written, start, stop, wait_for


class Follower(Selector):
    """Frees nothing while the incumbent is the run's start, then everything: it can only
    improve from another worker's solution."""

    name = "follower"

    def __init__(self, start_objective: float):
        self.start_objective = start_objective

    def __call__(self, state, size, rng):
        integers = state.problem.integer_indices
        moved = state.objective != self.start_objective
        return Neighborhood(free=integers if moved else integers[:0])


def started_incumbent(problem, x):
    incumbent = Incumbent(problem, time.perf_counter())
    assert incumbent.offer(
        np.asarray(x, dtype=float), found_at=time.perf_counter(), source="initial"
    )
    return incumbent


def test_a_worker_improves_from_the_others_solution():
    problem = knapsack()
    incumbent = started_incumbent(problem, np.zeros(4))
    stop = MaxRuntime(30)
    selectors = [Follower(start_objective=0.0), FirstHalf()]
    with Portfolio(
        problem, selectors, named_sub_solver, seed=0, stop=stop, started=incumbent.started
    ) as portfolio:
        records, reason = portfolio.run(incumbent)
    assert reason is StopReason.OPTIMAL and incumbent.objective == 23
    assert portfolio.workers[0].stop_reason == "optimal"  # it freed everything: it saw a change
    assert portfolio.workers[1].improvements >= 1
    assert [w.selector for w in portfolio.workers] == ["follower", "first_half"]
    # Each solution is checked once, in the main process: one check per new incumbent.
    assert incumbent.checks == len(incumbent.trajectory)
    assert len(records) == sum(w.iterations for w in portfolio.workers)
    assert not multiprocessing.active_children()


def test_kill_9_of_a_worker_loses_nothing_and_leaves_no_process():
    problem = knapsack()
    incumbent = started_incumbent(problem, np.zeros(4))
    stop = MaxRuntime(4)  # FirstHalf frees nothing after its first iteration: no run ends early
    with Portfolio(
        problem,
        [FirstHalf()] * 3,
        named_sub_solver,
        seed=0,
        stop=stop,
        started=incumbent.started,
    ) as portfolio:
        victim = portfolio.processes[2]
        killer = threading.Timer(1.5, os.kill, (victim.pid, signal.SIGKILL))
        killer.start()
        records, reason = portfolio.run(incumbent)
        killer.join()
    assert reason is StopReason.TIME_LIMIT
    assert [w.stop_reason for w in portfolio.workers] == ["time_limit", "time_limit", "crashed"]
    assert incumbent.objective == 23 and problem.check(incumbent.x).feasible
    assert all(not process.is_alive() for process in portfolio.processes)
    assert not multiprocessing.active_children()


def test_solve_with_two_workers_reports_them():
    # start="first": the default start solve proves p0201 optimal before the workers begin.
    result = solve(
        miplib("p0201"),
        stop=budget(60, 15),
        seed=3,
        params=SolveParams.from_dict({"portfolio.workers": 2, "start.strategy": "first"}),
    )
    assert result.feasibility.feasible
    assert [w.worker for w in result.workers] == [0, 1]
    assert sum(w.iterations for w in result.workers) == len(result.iterations)
    assert all(w.iterations <= 15 and w.time > 0 for w in result.workers)
    assert not multiprocessing.active_children()


def comparable(result):
    fields = (
        "iteration",
        "selector",
        "neighborhood_size",
        "target_size",
        "status",
        "objective_before",
        "objective_after",
        "improved",
    )
    records = [tuple(getattr(r, name) for name in fields) for r in result.iterations]
    return [objective for _, objective in result.trajectory], records, result.objective


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_deterministic_runs_repeat(workers):
    def run():
        return solve(
            miplib("p0201"),
            stop=budget(None, 20),
            seed=5,
            params=SolveParams.from_dict(
                {
                    "portfolio.workers": workers,
                    "portfolio.deterministic": True,
                    "sub_solve.node_limit": 50,
                }
            ),
        )

    first, second = run(), run()
    assert comparable(first) == comparable(second)
    assert len(first.iterations) == 20 * workers


@pytest.mark.parametrize("mix, workers", [("lns", "2 workers (2 lns)"), ("auto", "workers (2 lns")])
def test_sigterm_with_two_workers_writes_the_solution(tmp_path, mix, workers):
    process = start(
        tmp_path,
        "instance=air05",
        "time_limit=60",
        "portfolio.workers=2",
        f"portfolio.mix={mix}",  # auto: lns-solve's default, the other kinds beside two LNS
        "out=best.sol",
    )
    seen = wait_for(process, "(worker ")
    output = stop(process, signal.SIGTERM, seen)
    assert process.returncode == 128 + signal.SIGTERM
    assert "(interrupted)" in output and workers in output, output
    assert_best_solution_written(tmp_path / "best.sol", output, "air05")


SCRIPT = textwrap.dedent("""
    import multiprocessing, sys
    from lns import PortfolioParams, SolveParams, solve
    from lns.core.search.result import Callback

    class Pids(Callback):
        def on_improvement(self, improvement):
            if improvement.source.startswith("worker"):
                print(*[p.pid for p in multiprocessing.active_children()], flush=True)

    if __name__ == "__main__":
        params = SolveParams(portfolio=PortfolioParams(workers=2))
        solve(sys.argv[1], stop=60, params=params, callbacks=[Pids()])
""")


def test_no_worker_outlives_a_kill_9_of_the_main_process(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script), str(miplib("air05"))], stdout=subprocess.PIPE, text=True
    )
    pids = [int(pid) for pid in process.stdout.readline().split()]
    assert len(pids) >= 2
    process.kill()
    process.wait()
    assert not wait_for_exit(pids, 10)


UNGUARDED_SCRIPT = textwrap.dedent("""
    import sys
    from lns import PortfolioParams, SolveParams, StartParams, solve
    from lns.core.search.stop import budget

    print("script runs", flush=True)
    params = SolveParams(start=StartParams(strategy="first"), portfolio=PortfolioParams(workers=2))
    result = solve(sys.argv[1], stop=budget(30, 2), params=params)
    print(len(result.workers), "workers", result.status, flush=True)
""")


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED_SCRIPT)
    process = subprocess.run(
        [sys.executable, str(script), str(miplib("p0201"))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert lines[0] == "script runs" and lines[1].startswith("2 workers ") and len(lines) == 2


def defined_in_main(state, size, rng):
    return Neighborhood(free=state.problem.integer_indices)


def test_workers_import_the_main_module_only_for_what_refers_to_it(monkeypatch):
    monkeypatch.setattr(defined_in_main, "__module__", "__main__")
    monkeypatch.setattr(sys.modules["__main__"], "defined_in_main", defined_in_main, raising=False)
    assert refers_to_main([FunctionSelector(defined_in_main)])
    assert not refers_to_main([FunctionSelector(frees_nothing), MaxRuntime(5), named_sub_solver])
    assert refers_to_main(threading.Lock())  # cannot be pickled: import it, to be safe


def frees_nothing(state, size, rng):
    return Neighborhood(free=state.problem.integer_indices[:0])


def test_the_complete_worker_proves_optimality():
    result = solve(
        knapsack(),
        frees_nothing,
        stop=60,
        params=SolveParams.from_dict(
            {"portfolio.workers": 2, "portfolio.complete_worker": True, "start.strategy": "first"}
        ),
    )  # the default start would prove it optimal itself
    assert result.status == "optimal" and result.objective == 23
    assert [w.selector for w in result.workers] == ["frees_nothing", "scip"]
    assert [w.stop_reason for w in result.workers] == ["interrupted", "optimal"]


def test_all_workers_is_one_per_usable_core(monkeypatch):
    monkeypatch.setattr(lns.api, "usable_cores", lambda: 3)
    result = solve(
        miplib("p0201"),
        stop=budget(60, 2),
        seed=0,
        params=SolveParams.from_dict({"portfolio.workers": "all", "start.strategy": "first"}),
    )
    assert len(result.workers) == 3


@pytest.mark.parametrize(
    "arguments",
    [
        dict(workers=1, complete_worker=True),
        dict(workers=2, complete_worker=True, deterministic=True),
        dict(workers=0),
        dict(workers=2.0),
        dict(workers="many"),
    ],
)
def test_invalid_worker_arguments_are_refused(arguments):
    with pytest.raises(ValueError, match="workers"):
        PortfolioParams(**arguments)


def test_a_complete_worker_on_all_of_one_core_is_refused_before_the_run(monkeypatch):
    monkeypatch.setattr(lns.api, "usable_cores", lambda: 1)
    params = SolveParams(portfolio=PortfolioParams(workers="all", complete_worker=True))
    with pytest.raises(ValueError, match="complete_worker=True needs workers >= 2"):
        solve(knapsack(), params=params)


def test_an_early_workers_solution_ends_only_a_start_search_without_one():
    """Once the start search has a solution of its own, its stall rule decides when it ends."""
    stopped: list = []
    solver = types.SimpleNamespace(stop=lambda: stopped.append(True))
    run = types.SimpleNamespace(incumbent=types.SimpleNamespace(x=None))
    lns.api._end_start_without_solution(run, solver)
    assert stopped == [True]
    run.incumbent.x = np.zeros(2)
    lns.api._end_start_without_solution(run, solver)
    assert stopped == [True]


def test_a_worker_whose_sub_solver_gave_up_goes_on_with_a_new_one(caplog):
    problem = knapsack()
    incumbent = started_incumbent(problem, np.zeros(4))
    with Portfolio(
        problem,
        [FirstHalf(every=True)] * 2,  # the abandoned iteration 0 is not repeated
        first_gives_up,
        seed=0,
        stop=MaxRuntime(3),
        started=incumbent.started,
    ) as portfolio:
        records, reason = portfolio.run(incumbent)
    assert reason is StopReason.TIME_LIMIT
    assert [w.stop_reason for w in portfolio.workers] == ["time_limit", "time_limit"]
    assert incumbent.objective == 23 and problem.check(incumbent.x).feasible
    for worker in range(2):
        iterations = [r.iteration for r in portfolio.records[worker]]
        assert iterations == list(range(len(iterations))) and len(iterations) >= 2
