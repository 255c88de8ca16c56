"""What a sub-solve costs besides SCIP's own work: the watchdog's thread, and memory over time.

``watchdog``: a batch of tiny sub-solves of p0201 (90 % of its integer variables fixed at a
first solution, where a per-solve cost shows most), by the SCIP sub-solver with three runners of
its watchdog: ``inline`` (SCIP in the calling thread, as before the watchdog), the resident
worker thread (what the library uses), and a new thread for each solve. All three find the same
solutions. ``extra_info``: milliseconds per solve.

``memory``: the process's resident size (RSS) over a long run, three loops with a node limit
per sub-solve: ``solve()`` with the random selector, the SCIP sub-solver alone (a new random
half of the integer variables free each time), and a bare ``pyscipopt.Model`` without the
project's code (bounds changed, solved, ``freeTransform``, bounds restored), also with SCIP's
garbage collection and glibc's ``malloc_trim`` every 10 solves
(:mod:`lns.core.solvers.scip.memory`). ``extra_info``: the RSS before and after, its growth per
1000 iterations after the first third of the run, SCIP's allocated memory at the end, and for
the bare model the milliseconds per iteration of each step.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable

import numpy as np
import psutil
import pytest

from lns.api import solve
from lns.core.search.params import SubSolveParams
from lns.core.search.result import Callback
from lns.core.search.stop import MaxIterations
from lns.core.solvers.scip.memory import collect_memory_garbage, trim_heap
from lns.core.solvers.scip.subsolver import ScipSubSolver
from lns.params import SolveParams


def inline(work, time_limit, interrupt) -> bool:
    """A watchdog runner that runs ``work`` in the calling thread."""
    work()
    return True


def thread_per_solve(work, time_limit, interrupt) -> bool:
    """A watchdog runner that starts a thread for each ``work``."""
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join()
    return True


RUNNERS = {"inline": inline, "worker thread (used)": None, "thread per solve": thread_per_solve}


@pytest.fixture(scope="module")
def tiny_solves(problem_of, incumbents, mode):
    """p0201, a first solution, and the free variables of each solve (10 % of the integers)."""
    problem = problem_of("p0201")
    rng, integers = np.random.default_rng(0), problem.integer_indices
    n_fixed = int(0.9 * len(integers))
    frees = [
        np.setdiff1d(integers, rng.choice(integers, n_fixed, replace=False))
        for _ in range(mode.pick(20, 200))
    ]
    return problem, incumbents("p0201", 1)[0], frees


def solve_all(solver: ScipSubSolver, start: np.ndarray, frees: list) -> list:
    """The best objective of a solve from ``start`` freeing each of ``frees`` (seeds 0, 1, ...)."""
    outcomes = [
        solver.solve(time_limit=10, seed=i, free=free, start=start) for i, free in enumerate(frees)
    ]
    return [o.best.objective if o.best is not None else None for o in outcomes]


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_watchdog(benchmark, measure, tiny_solves, runner):
    benchmark.group = "watchdog: tiny sub-solves of p0201"
    problem, start, frees = tiny_solves
    solver, run = ScipSubSolver(problem), RUNNERS[runner]
    if run is not None:
        solver.watchdog.run = run  # type: ignore[method-assign]
    try:
        found = measure(lambda: solve_all(solver, start, frees))
    finally:
        solver.close()
    benchmark.extra_info["solves"] = len(frees)
    reference = ScipSubSolver(problem)
    try:
        assert found == solve_all(reference, start, frees)
    finally:
        reference.close()


class RSSLog(Callback):
    """The process's RSS (MB) at the start and after each iteration."""

    def __init__(self):
        self.process = psutil.Process()
        self.rss = [self.megabytes()]

    def megabytes(self) -> float:
        return self.process.memory_info().rss / 2**20

    def on_iteration(self, record) -> None:
        self.rss.append(self.megabytes())

    def figures(self) -> dict:
        """RSS before and after, and its growth per 1000 iterations after the first third."""
        n = len(self.rss) - 1
        third = n // 3
        growth = (self.rss[-1] - self.rss[third]) / max(1, n - third) * 1000
        return {
            "RSS before (MB)": self.rss[0],
            "RSS after (MB)": self.rss[-1],
            "RSS growth per 1000 iterations (MB)": growth,
        }


def loop_solve(problem, size: dict, log: RSSLog) -> dict:
    """``solve()`` with the random selector for the iterations of ``size``."""
    params = SolveParams(sub_solve=SubSolveParams(node_limit=size["nodes"]))
    solve(
        problem, "random", MaxIterations(size["iterations"]), seed=0, params=params, callbacks=[log]
    )
    return {}


def loop_sub_solver(problem, size: dict, log: RSSLog) -> dict:
    """The SCIP sub-solver alone, a new random half of the integer variables free each time."""
    solver = ScipSubSolver(problem)
    x = solver.solve(time_limit=60, seed=0, solution_limit=1).found[-1].x
    integers, rng = problem.integer_indices, np.random.default_rng(0)
    with solver.session():
        for iteration in range(1, size["iterations"] + 1):
            free = rng.permutation(integers)[len(integers) // 2 :]
            outcome = solver.solve(
                time_limit=60, seed=iteration, free=free, start=x, node_limit=size["nodes"]
            )
            x = outcome.best.x if outcome.best is not None else x
            log.on_iteration(None)
    scip = solver.model.getMemTotal() / 2**20
    solver.close()
    return {"SCIP allocated (MB)": scip}


class BareModel:
    """A bare ``pyscipopt.Model`` of ``problem`` and SCIP's first solution, for sub-solves
    without the project's code.

    Parameters
    ----------
    problem : Problem
    nodes : int
        Node limit of each sub-solve.
    clean_every : int
        Collect SCIP's memory garbage and trim the C heap after every this many sub-solves
        (0: never).
    """

    STEPS = ("optimize", "freeTransform", "garbage collection", "heap trim")

    def __init__(self, problem, nodes: int, clean_every: int):
        self.model = model = problem.to_scip()
        model.hideOutput()
        model.setBoolParam("misc/transsolsorig", False)
        self.variables = model.getVars()
        self.lower = np.array([v.getLbOriginal() for v in self.variables])
        self.upper = np.array([v.getUbOriginal() for v in self.variables])
        model.setIntParam("limits/solutions", 1)
        model.optimize()
        self.x = np.round([model.getSolVal(model.getBestSol(), v) for v in self.variables])
        model.freeTransform()
        model.setIntParam("limits/solutions", -1)
        model.setLongintParam("limits/nodes", nodes)
        self.clean_every = clean_every
        self.seconds = dict.fromkeys(self.STEPS, 0.0)

    def sub_solve(self, iteration: int, fixed: np.ndarray) -> None:
        """Fix ``fixed`` at the first solution, solve, free the transformed problem, clean up
        if it is time to, and restore the bounds."""
        model, variables = self.model, self.variables
        for j in fixed.tolist():
            model.chgVarLb(variables[j], self.x[j])
            model.chgVarUb(variables[j], self.x[j])
        model.setIntParam("randomization/randomseedshift", iteration)
        clean = self.clean_every and iteration % self.clean_every == 0
        steps = (
            model.optimize,
            model.freeTransform,
            lambda: clean and collect_memory_garbage(model),
            lambda: clean and trim_heap(),
        )
        for name, step in zip(self.STEPS, steps, strict=True):
            began = time.perf_counter()
            step()
            self.seconds[name] += time.perf_counter() - began
        for j in fixed.tolist():
            model.chgVarLb(variables[j], self.lower[j])
            model.chgVarUb(variables[j], self.upper[j])


def loop_bare(problem, size: dict, log: RSSLog, clean_every: int = 0) -> dict:
    """A :class:`BareModel`'s sub-solves, a new random half of the integer variables free each
    time."""
    bare = BareModel(problem, size["nodes"], clean_every)
    integers, rng = problem.integer_indices, np.random.default_rng(0)
    for iteration in range(1, size["iterations"] + 1):
        bare.sub_solve(iteration, rng.permutation(integers)[: len(integers) // 2])
        log.on_iteration(None)
    per_iteration = {
        f"{name} (ms per iteration)": 1e3 * seconds / size["iterations"]
        for name, seconds in bare.seconds.items()
    }
    return {"SCIP allocated (MB)": bare.model.getMemTotal() / 2**20, **per_iteration}


LOOPS: dict[str, Callable[..., dict]] = {
    "solve()": loop_solve,
    "SCIP sub-solver": loop_sub_solver,
    "bare pyscipopt model": loop_bare,
    "bare model, garbage collection and heap trim every 10": functools.partial(
        loop_bare, clean_every=10
    ),
}


@pytest.mark.parametrize("loop", list(LOOPS))
def test_memory(benchmark, measure, mode, problem_of, loop):
    benchmark.group = "memory of a long run"
    size = mode.pick(
        {"instance": "p0201", "iterations": 60, "nodes": 20},
        {"instance": "air05", "iterations": 5000, "nodes": 50},
    )
    problem, log = problem_of(size["instance"]), RSSLog()
    figures = measure(lambda: LOOPS[loop](problem, size, log), rounds=1)
    benchmark.extra_info.update(size, **log.figures(), **figures)
    assert len(log.rss) > 1
