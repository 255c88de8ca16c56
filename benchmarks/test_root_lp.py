"""The root LP relaxation: which solver, and what a busy Python thread beside it costs.

``root LP``: the LP relaxation of each instance solved cold, model building included, single
thread, by SCIP's LP solver (all variables made continuous, presolving and heuristics off) and
by HiGHS through :class:`lns.core.solvers.lp.WarmLP`: its automatic choice (what the library
uses), dual simplex, interior point with crossover (the ``method`` names of ``solve_lp``),
interior point without crossover and PDLP. ``extra_info`` holds the objective, HiGHS's
iterations and ``max |x - x_simplex|``, how far the solution is from HiGHS's default one (a
degenerate LP has many optimal points, and the CL-LNS features of another one are not those the
models were trained on: ``test_cl_lns_cost.py`` compares the models' choices).

``root LP beside Python``: HiGHS solves without Python's lock, but its Python interrupt callback
needs it. With the callback started for the whole solve, every simplex iteration waits for the
lock while another thread holds it; started only when a stop is asked for (what the library
does), an uninterrupted solve never calls it. Each setting is timed alone and beside a thread
that counts in a Python loop (the stand-in for the loop's own work, or the CL-LNS graph cache
built beside the root LP).
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

from lns.core.problem.mip import Problem
from lns.core.solvers.lp import _INTERRUPT_CALLBACKS, WarmLP, _StoppableHighs

INSTANCES = [
    "p0201",
    pytest.param("air05", marks=pytest.mark.full),
    pytest.param("seymour", marks=pytest.mark.full),
    pytest.param("mis-6000", marks=pytest.mark.full),
    pytest.param("mvc-1000", marks=pytest.mark.full),
]

#: HiGHS settings, as HiGHS options; the first three are ``solve_lp``'s methods ``highs``,
#: ``highs-ds`` and ``highs-ipm``.
HIGHS: dict[str, dict] = {
    "highs (used)": {},
    "highs-ds": {"solver": "simplex", "simplex_strategy": 1},
    "highs-ipm": {"solver": "ipm", "run_crossover": "on"},
    "ipm, no crossover": {"solver": "ipm", "run_crossover": "off"},
    "pdlp": {"solver": "pdlp"},
}


class SettingLP(WarmLP):
    """A :class:`WarmLP` with HiGHS ``options`` set before its first solve.

    Parameters
    ----------
    problem : Problem
    options : dict
        HiGHS options, set after those of :class:`WarmLP`.
    **kwargs
        :class:`WarmLP`'s.
    """

    def __init__(self, problem: Problem, *, options: dict, **kwargs):
        super().__init__(problem, **kwargs)
        for name, value in options.items():
            self._highs.setOptionValue(name, value)

    def iterations(self) -> int:
        """HiGHS's iterations of the last solve, whichever algorithm ran."""
        info = self._highs.getInfo()
        counts = (info.simplex_iteration_count, info.ipm_iteration_count)
        return max(*counts, info.pdlp_iteration_count, 0)


def scip_root_lp(problem: Problem) -> float:
    """The root LP's objective by SCIP's LP solver, model building included."""
    model = problem.to_scip()
    for var in model.getVars():
        model.chgVarType(var, "C")
    model.setPresolve(3)  # SCIP_PARAMSETTING.OFF
    model.setHeuristics(3)
    model.setIntParam("parallel/maxnthreads", 1)
    model.optimize()
    return model.getObjVal()


@pytest.fixture(scope="module")
def simplex_solutions(problem_of):
    """``simplex_solutions(name)``: HiGHS's default solution of the root LP of ``name``."""
    solutions: dict = {}

    def of(name: str):
        if name not in solutions:
            solutions[name] = WarmLP(problem_of(name)).solve()
        return solutions[name]

    return of


@pytest.mark.parametrize("name", INSTANCES)
@pytest.mark.parametrize("solver", ["scip", *HIGHS])
def test_root_lp(benchmark, measure, problem_of, simplex_solutions, name, solver):
    benchmark.group = f"root LP: {name}"
    problem, reference = problem_of(name), simplex_solutions(name)
    if solver == "scip":
        objective = measure(lambda: scip_root_lp(problem))
    else:

        def solve():
            lp = SettingLP(problem, options=HIGHS[solver])
            return lp, lp.solve()

        lp, solution = measure(solve)
        assert solution.status == "optimal"
        objective = solution.objective
        benchmark.extra_info["iterations"] = lp.iterations()
        benchmark.extra_info["max |x - x_simplex|"] = float(np.abs(solution.x - reference.x).max())
    benchmark.extra_info["objective"] = objective
    approximate = solver in ("ipm, no crossover", "pdlp")
    assert objective == pytest.approx(reference.objective, rel=1e-4 if approximate else 1e-6)


class _EveryIterationHighs(_StoppableHighs):
    def run(self):
        for callback_type in _INTERRUPT_CALLBACKS:
            self.startCallback(callback_type)
        return super().run()


class EveryIterationLP(WarmLP):
    """A :class:`WarmLP` whose interrupt callback is started for the whole solve (what the
    library did before it started it on request only)."""

    def __init__(self, problem: Problem):
        super().__init__(problem)
        self._highs.__class__ = _EveryIterationHighs


@contextlib.contextmanager
def busy_python_thread(busy: bool):
    """For the block, a thread that holds Python's lock as a pure-Python loop does."""
    if not busy:
        yield
        return
    done = threading.Event()

    def count() -> None:
        n = 0
        while not done.is_set():
            n += 1

    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


CALLBACKS = {"callback at every iteration": EveryIterationLP, "callback on request (used)": WarmLP}


@pytest.mark.parametrize(
    "name",
    [
        "p0201",
        pytest.param("mis-6000", marks=pytest.mark.full),
        pytest.param("mvc-1000", marks=pytest.mark.full),
        pytest.param("roll3000", marks=pytest.mark.full),
    ],
)
@pytest.mark.parametrize("beside", ["alone", "beside a Python thread"])
@pytest.mark.parametrize("callback", list(CALLBACKS))
def test_root_lp_beside_python(
    benchmark, measure, problem_of, simplex_solutions, name, beside, callback
):
    benchmark.group = f"root LP beside Python: {name}"
    problem = problem_of(name)

    def solve(lp):
        with busy_python_thread(beside != "alone"):
            return lp.solve()

    solution = measure(solve, setup=lambda: ((CALLBACKS[callback](problem),), {}))
    assert solution.status == "optimal"
    assert solution.objective == pytest.approx(simplex_solutions(name).objective, rel=1e-6)
