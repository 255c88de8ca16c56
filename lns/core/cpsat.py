"""OR-Tools CP-SAT on the whole problem: a baseline for the anytime benchmark.

:func:`solve_cpsat` runs CP-SAT (on the model of :mod:`lns.core.cpsat_model`) under a
time limit and records every solution it reports as a trajectory, after checking the
solution against the original problem, so it returns the same
:class:`lns.core.result.Result` as :func:`lns.solve`.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from lns.core.config import DEADLINE_MARGIN
from lns.core.cpsat_model import build_cpsat_model
from lns.core.errors import InfeasibleProblemError, UnsupportedProblemError
from lns.core.interrupt import InterruptGuard
from lns.core.problem import Problem, instance_name, problem_from_scip, read_scip_model
from lns.core.progress import ImprovementLogger
from lns.core.result import Callback, Improvement, Result, Status
from lns.core.solu import known_objective
from lns.core.subsolver import SEED_BOUND

log = logging.getLogger("lns")


def _load(instance: str | Path | Problem) -> Problem:
    if isinstance(instance, Problem):
        return instance
    path = Path(instance)
    return problem_from_scip(read_scip_model(path), instance_name(path), source=path)


class _CpSatStop:
    """The stop hook of the interrupt guard for a running CP-SAT solve."""

    def __init__(self, solver):
        self.solver = solver

    def stop(self) -> None:
        self.solver.stop_search()


def solve_cpsat(instance: str | Path | Problem, *, time_limit: float | None = 60.0, seed: int = 0,
                num_workers: int = 2, max_scale_exponent: int = 6, optimum: float | None = None,
                callbacks: list[Callback] | None = None, started: float | None = None) -> Result:
    """Solve the whole problem with CP-SAT within a time limit; ``solve(..., method="cpsat")`` calls this.

    Parameters
    ----------
    instance : str, pathlib.Path or Problem
        A file SCIP reads, or a problem built in code (pure integer, see :func:`build_cpsat_model`).
    time_limit : float or None
        Wall-clock seconds for everything, reading the file and building the model included.
    seed : int
        Drives CP-SAT's ``random_seed`` (drawn from ``numpy.random.default_rng(seed)``).
    num_workers : int
        CP-SAT search workers (threads). With 1 worker and no time limit hit, runs repeat.
    max_scale_exponent : int
        See :func:`build_cpsat_model`.
    optimum : float, optional
        Known optimum for the gap in the progress log (read from a ``.solu`` file if not given).
    callbacks : list of Callback, optional
        ``on_improvement`` is called for each new incumbent (source ``"cpsat"``).
    started : float, optional
        ``time.perf_counter()`` at which the run's clock started (default: now).

    Returns
    -------
    Result
        ``method="cpsat"``, no LNS iterations; ``dual_bound`` is CP-SAT's objective bound.

    Raises
    ------
    UnsupportedProblemError
        The problem is not pure integer with finite bounds and scalable rows.
    InfeasibleProblemError
        CP-SAT proved the problem infeasible.
    """
    from ortools.sat.python import cp_model

    started = time.perf_counter() if started is None else started
    if num_workers < 1:
        raise ValueError(f"num_workers must be >= 1, got {num_workers}")
    problem = _load(instance)
    if optimum is None and problem.source is not None:
        optimum = known_objective(problem.source)
    built = build_cpsat_model(problem, max_scale_exponent)
    callbacks = [ImprovementLogger(problem.name, optimum), *(callbacks or [])]
    best: dict = {"x": None, "objective": None}
    trajectory: list = []

    class Recorder(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            found = time.perf_counter() - started
            x = np.array([self.value(v) for v in built.variables], dtype=float)
            objective = problem.objective_value(x)
            if not problem.is_better(objective, best["objective"], 0.0):
                return
            check = problem.check(x)
            if not check.feasible:
                log.warning("%s: rejected a CP-SAT solution that violates the problem (%s)", problem.name, check)
                return
            best["x"], best["objective"] = x, objective
            trajectory.append((found, objective))
            for callback in callbacks:
                callback.on_improvement(Improvement(found, objective, -1, 0, "cpsat"))

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = num_workers
    solver.parameters.catch_sigint_signal = False  # the interrupt guard stops the search
    solver.parameters.random_seed = int(np.random.default_rng(seed).integers(SEED_BOUND))
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, started + time_limit - time.perf_counter() - DEADLINE_MARGIN)
    try:
        with InterruptGuard() as guard, guard.solving(_CpSatStop(solver)):
            status = solver.solve(built.model, Recorder())
        interrupted = guard.requested
    except KeyboardInterrupt:
        status, interrupted = cp_model.UNKNOWN, True
    where = problem.source or problem.name
    if status == cp_model.INFEASIBLE:
        raise InfeasibleProblemError(f"{where}: CP-SAT proved the problem infeasible")
    if status == cp_model.MODEL_INVALID:
        raise UnsupportedProblemError(f"{where}: CP-SAT rejects the model ({built.model.validate()})")
    proven = status == cp_model.OPTIMAL and best["x"] is not None
    stop_reason = "interrupted" if interrupted else "optimal" if proven else "time_limit"
    dual_bound = None
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        dual_bound = solver.best_objective_bound / built.objective_scale + problem.objective_offset
    result = Result(
        instance=problem.name, method="cpsat", selector=None,
        status=Status.OPTIMAL if proven else Status.FEASIBLE if best["x"] is not None else Status.NO_SOLUTION,
        stop_reason=stop_reason, objective=best["objective"], x=best["x"], trajectory=trajectory, iterations=[],
        runtime=time.perf_counter() - started,
        feasibility=problem.check(best["x"]) if best["x"] is not None else None, seed=seed,
        time_limit=time_limit, dual_bound=dual_bound, problem=problem)
    log.info("%s: %s with CP-SAT, objective %s after %.2fs (%s)", problem.name, result.status, result.objective,
             result.runtime, stop_reason)
    return result
