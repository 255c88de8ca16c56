"""``solve()``: the one call that reads a problem and improves it within a budget."""
from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

import numpy as np

from lns.core.selection import Selector
from lns.registry import make_selector
from lns.core.errors import InfeasibleProblemError, SolutionFileError, UnboundedProblemError, UnknownNameError
from lns.core.interrupt import InterruptGuard
from lns.core.config import DEADLINE_MARGIN, LNSConfig
from lns.core.loop import Incumbent, run_lns
from lns.core.subsolver import SEED_BOUND
from lns.core.problem import Problem, instance_name, problem_from_scip, read_scip_model
from lns.core.progress import ImprovementLogger
from lns.core.result import Callback, Result, Status
from lns.core.scip_subsolver import ScipSubSolver
from lns.core.solu import known_objective
from lns.core.solution_file import read_sol

log = logging.getLogger("lns")

METHODS = ("lns", "scip", "cpsat")


def solve(instance: str | Path | Problem, selector: str | Selector = "random", *, method: str = "lns",
          time_limit: float | None = 60.0, iteration_limit: int | None = None, seed: int = 0,
          initial_solution: str | Path | np.ndarray | None = None, out: str | Path | None = None,
          optimum: float | None = None, selector_options: dict | None = None,
          callbacks: list[Callback] | None = None, **options) -> Result:
    """Find a good solution of a MIP within a time (or iteration) budget.

    Parameters
    ----------
    instance : str, pathlib.Path or Problem
        A file SCIP reads (``.mps``, ``.mps.gz``, ``.lp``, ...) or a problem built in code.
    selector : str or Selector
        Neighborhood selector, by registry name (see :data:`heuristics.SELECTORS`) or as an object.
    method : {"lns", "scip", "cpsat"}
        ``"lns"``: large neighborhood search with ``selector``; ``"scip"``: plain SCIP on the
        whole problem under the same budget, for like-for-like comparisons; ``"cpsat"``:
        OR-Tools CP-SAT on the whole (pure-integer) problem, see :func:`lns.core.cpsat.solve_cpsat`
        (``**options`` are its ``num_workers`` and ``max_scale_exponent``).
    time_limit : float or None
        Wall-clock seconds for everything, reading the file included.
    iteration_limit : int or None
        Stop after this many LNS iterations. With a node limit per sub-solve
        (``iteration_node_limit``) instead of a time limit, runs repeat exactly.
    seed : int
        Drives every random choice: the selector's and SCIP's per solve.
    initial_solution : path or array, optional
        A ``.sol`` file or a value vector to start from instead of SCIP's first solution.
    out : path, optional
        Where to write the best solution (``.sol``), also after a time limit or Ctrl-C.
    optimum : float, optional
        Known optimal value, for the gap in progress lines; read from a ``.solu`` file next to
        the instance when not given.
    selector_options : dict, optional
        Constructor arguments of the selector when it is given by name.
    callbacks : list of Callback, optional
        Hooks called on each improvement and iteration.
    **options
        Fields of :class:`lns.core.loop.LNSConfig` (``initial_fraction``, ``iteration_time_limit``, ...).

    Returns
    -------
    Result
        Best solution (checked feasible against the original problem), trajectory, iterations.

    Raises
    ------
    ProblemReadError, UnsupportedProblemError
        The file cannot be read, or holds constraints the loop does not handle.
    InfeasibleProblemError, UnboundedProblemError
        SCIP proved the problem infeasible or unbounded.
    SolutionFileError
        ``initial_solution`` is unreadable or infeasible.
    """
    started = time.perf_counter()
    if method not in METHODS:
        raise UnknownNameError("method", method, METHODS)
    if method == "cpsat":
        from lns.core.cpsat import solve_cpsat

        return solve_cpsat(instance, time_limit=time_limit, seed=seed, optimum=optimum, callbacks=callbacks,
                           started=started, **options)
    config = _config(options)
    if isinstance(selector, str):
        selector = make_selector(selector, **(selector_options or {}))
    deadline = started + time_limit if time_limit is not None else float("inf")
    problem, solver = _load(instance, config)
    if optimum is None and problem.source is not None:
        optimum = known_objective(problem.source)
    callbacks = [ImprovementLogger(problem.name, optimum), *(callbacks or [])]
    incumbent = Incumbent(problem, started, config.improvement_tol, config.history_length, callbacks)
    rng = np.random.default_rng(seed)
    records, dual_bound = [], None
    used_method = method if len(problem.integer_indices) else "scip"
    if used_method == "lns":
        selector.check(problem)
    try:
        with InterruptGuard():
            if used_method == "scip":
                if method == "lns":
                    log.info("%s has no integer variables: solved directly by SCIP", problem.name)
                stop_reason, dual_bound = _solve_whole(problem, solver, incumbent, deadline, rng, config)
                if stop_reason == "optimal" and method == "lns":
                    stop_reason = "no_integer_variables"
            else:
                stop_reason = _initial_solution(problem, solver, incumbent, initial_solution, deadline, rng, config)
                if stop_reason is None:
                    records, stop_reason = run_lns(problem, selector, solver, incumbent, config=config, rng=rng,
                                                   deadline=deadline, iteration_limit=iteration_limit,
                                                   callbacks=callbacks)
    except KeyboardInterrupt:
        stop_reason = "interrupted"
    if incumbent.x is None:
        status = Status.NO_SOLUTION
    elif stop_reason in ("optimal", "no_integer_variables"):
        status = Status.OPTIMAL
    else:
        status = Status.FEASIBLE
    result = Result(
        instance=problem.name, method=used_method, selector=selector.name if used_method == "lns" else None,
        status=status, stop_reason=stop_reason, objective=incumbent.objective, x=incumbent.x,
        trajectory=incumbent.trajectory, iterations=records, runtime=time.perf_counter() - started,
        feasibility=problem.check(incumbent.x) if incumbent.x is not None else None, seed=seed,
        time_limit=time_limit, dual_bound=dual_bound, solver_time=solver.total_solve_time + solver.total_reset_time,
        problem=problem)
    if out is not None and result.x is not None:
        result.write_sol(out)
    log.info("%s: %s, objective %s after %.2fs (%s, %d iterations)", problem.name, status, result.objective,
             result.runtime, stop_reason, len(records))
    return result


def _config(options: dict) -> LNSConfig:
    names = {f.name for f in dataclasses.fields(LNSConfig)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise TypeError(f"solve() got unknown options {unknown}; valid ones are {sorted(names)}")
    return LNSConfig(**options)


def _load(instance, config: LNSConfig) -> tuple[Problem, ScipSubSolver]:
    if isinstance(instance, Problem):
        return instance, ScipSubSolver(instance, config.scip_params)
    path = Path(instance)
    model = read_scip_model(path)
    problem = problem_from_scip(model, instance_name(path), source=path)
    return problem, ScipSubSolver(problem, config.scip_params, model=model)


def _raise_if_proven_empty(problem: Problem, status: str) -> None:
    where = problem.source or problem.name
    if status == "infeasible":
        raise InfeasibleProblemError(f"{where}: SCIP proved the problem infeasible")
    if status in ("unbounded", "inforunbd"):
        raise UnboundedProblemError(f"{where}: SCIP found the problem unbounded (or infeasible)"
                                    if status == "inforunbd" else f"{where}: SCIP proved the problem unbounded")


def _solve_whole(problem, solver, incumbent, deadline, rng, config) -> tuple[str, float | None]:
    """Plain SCIP on the whole problem until the deadline; returns the stop reason and dual bound."""
    outcome = solver.solve(time_limit=deadline - time.perf_counter() - DEADLINE_MARGIN,
                           seed=int(rng.integers(SEED_BOUND)), on_found=incumbent.initial_offer)
    _raise_if_proven_empty(problem, outcome.status)
    reasons = {"optimal": "optimal", "userinterrupt": "interrupted"}
    return reasons.get(outcome.status, "time_limit"), outcome.dual_bound


def _initial_solution(problem, solver, incumbent, initial_solution, deadline, rng, config) -> str | None:
    """Find the first incumbent; returns a stop reason if the run is already over, else ``None``.

    SCIP searches for ``initial_time_limit`` seconds first; with no solution by then, it goes on for
    the rest of the budget (a restart would only repeat its work).
    """
    if initial_solution is not None:
        from_file = isinstance(initial_solution, (str, Path))
        x = read_sol(initial_solution, problem) if from_file else np.asarray(initial_solution, dtype=float)
        check = problem.check(x)
        if not check.feasible:
            where = initial_solution if from_file else "initial_solution"
            raise SolutionFileError(f"{where}: not feasible for {problem.name} ({check})")
        incumbent.offer(x, time.perf_counter(), -1, 0, "user")
        return None
    limits = (None,) if config.initial_time_limit is None else (config.initial_time_limit, None)
    for limit in limits:
        time_left = deadline - time.perf_counter() - DEADLINE_MARGIN
        outcome = solver.solve(time_limit=time_left if limit is None else min(time_left, limit),
                               seed=int(rng.integers(SEED_BOUND)), solution_limit=config.initial_solution_limit,
                               on_found=incumbent.initial_offer)
        _raise_if_proven_empty(problem, outcome.status)
        if outcome.status == "optimal":
            return "optimal"
        if outcome.interrupted:
            return "interrupted"
        if incumbent.x is not None:
            return None
    return "time_limit"
