"""OR-Tools CP-SAT on the whole problem: a baseline for the anytime benchmark.

CP-SAT solves integer programs over bounded integer variables with integer
coefficients. :func:`build_cpsat_model` translates a pure-integer :class:`Problem`
into such a model: every variable must be integer with finite bounds, and every row
must become integral when multiplied by a power of ten up to ``10**max_scale_exponent``
(so rows with coefficients like 0.25 or 1.5 are accepted, 1/3 is not). Since the
activity of a scaled row is then an integer, its bounds are rounded inward without
changing the feasible set. Anything else raises :class:`UnsupportedProblemError` with
the reason, which the benchmark records as a skipped run.

:func:`solve_cpsat` runs CP-SAT under a time limit and records every solution it
reports as a trajectory, after checking the solution against the original problem,
so it returns the same :class:`lns.core.result.Result` as :func:`lns.solve`.

References
----------
L. Perron, F. Didier. CP-SAT, OR-Tools (https://developers.google.com/optimization).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lns.core.errors import InfeasibleProblemError, UnsupportedProblemError
from lns.core.config import DEADLINE_MARGIN
from lns.core.subsolver import SEED_BOUND
from lns.core.problem import Problem, instance_name, problem_from_scip, read_scip_model
from lns.core.progress import ImprovementLogger
from lns.core.result import Callback, Improvement, Result, Status
from lns.core.solu import known_objective

log = logging.getLogger("lns")

#: CP-SAT works on int64; keep every bound and scaled coefficient well inside it.
MAX_ABS_VALUE = 2.0**53
INTEGRALITY_TOL = 1e-9
BOUND_TOL = 1e-6


@dataclass
class CpsatModel:
    """A CP-SAT model of a :class:`Problem` and what maps its solutions back.

    Attributes
    ----------
    model : ortools.sat.python.cp_model.CpModel
    variables : list of IntVar
        One per problem variable, in the problem's order.
    objective_scale : float
        The CP-SAT objective is ``objective_scale * (c x)``; 1.0 when it keeps float coefficients.
    """

    model: object
    variables: list
    objective_scale: float


def _power_of_ten(values: np.ndarray, max_exponent: int) -> int | None:
    """Smallest ``k <= max_exponent`` with ``values * 10**k`` all integral, or ``None``."""
    for k in range(max_exponent + 1):
        scaled = values * 10.0**k
        if np.all(np.abs(scaled - np.round(scaled)) <= INTEGRALITY_TOL * np.maximum(1.0, np.abs(scaled))):
            return k
    return None


def _check_supported(problem: Problem) -> None:
    where = problem.source or problem.name
    continuous = np.flatnonzero(~problem.integer_mask)
    if len(continuous):
        raise UnsupportedProblemError(f"{where}: CP-SAT needs a pure-integer problem, this one has "
                                      f"{len(continuous)} continuous variable(s) (e.g. "
                                      f"'{problem.var_names[continuous[0]]}')")
    unbounded = ~(np.isfinite(problem.lower) & np.isfinite(problem.upper))
    too_large = (np.abs(problem.lower) > MAX_ABS_VALUE) | (np.abs(problem.upper) > MAX_ABS_VALUE)
    if (unbounded | too_large).any():
        j = int(np.flatnonzero(unbounded | too_large)[0])
        raise UnsupportedProblemError(f"{where}: CP-SAT needs finite integer bounds, variable "
                                      f"'{problem.var_names[j]}' has [{problem.lower[j]}, {problem.upper[j]}]")


def build_cpsat_model(problem: Problem, max_scale_exponent: int = 6) -> CpsatModel:
    """Translate a pure-integer problem into a CP-SAT model (same variable order).

    Parameters
    ----------
    problem : Problem
    max_scale_exponent : int
        Rows (and the objective) may be multiplied by up to ``10**max_scale_exponent`` to
        make their coefficients integral. An objective that stays fractional is passed to
        CP-SAT with float coefficients, which it supports.

    Raises
    ------
    UnsupportedProblemError
        A continuous variable, an infinite bound, a row with non-integral coefficients
        after scaling, or a model CP-SAT's validation rejects (e.g. possible overflow).
    """
    from ortools.sat.python import cp_model

    _check_supported(problem)
    where = problem.source or problem.name
    model = cp_model.CpModel()
    model.name = problem.name
    xs = [model.new_int_var(int(np.ceil(lb - BOUND_TOL)), int(np.floor(ub + BOUND_TOL)), name)
          for name, lb, ub in zip(problem.var_names, problem.lower, problem.upper)]
    csr = problem.matrix
    for i in range(problem.n_rows):
        lower, upper = problem.row_lower[i], problem.row_upper[i]
        if not (np.isfinite(lower) or np.isfinite(upper)):
            continue
        start, end = csr.indptr[i], csr.indptr[i + 1]
        coefficients, columns = csr.data[start:end], csr.indices[start:end]
        k = _power_of_ten(coefficients, max_scale_exponent)
        if k is None:
            raise UnsupportedProblemError(
                f"{where}: row '{problem.row_names[i]}' has coefficients that are not integral after scaling by "
                f"10^{max_scale_exponent} (e.g. {coefficients[0]!r})")
        scale = 10.0**k
        expr = cp_model.LinearExpr.weighted_sum([xs[j] for j in columns],
                                                [int(round(a * scale)) for a in coefficients])
        lo = int(np.ceil(lower * scale - BOUND_TOL)) if np.isfinite(lower) else cp_model.INT_MIN
        hi = int(np.floor(upper * scale + BOUND_TOL)) if np.isfinite(upper) else cp_model.INT_MAX
        model.add_linear_constraint(expr, lo, hi)
    nonzero = np.flatnonzero(problem.objective)
    k = _power_of_ten(problem.objective[nonzero], max_scale_exponent)
    scale = 10.0**k if k is not None else 1.0
    coefficients = problem.objective[nonzero]
    weights = [int(round(c * scale)) for c in coefficients] if k is not None else coefficients.tolist()
    objective = cp_model.LinearExpr.weighted_sum([xs[j] for j in nonzero], weights)
    if problem.sense == "minimize":
        model.minimize(objective)
    else:
        model.maximize(objective)
    error = model.validate()
    if error:
        raise UnsupportedProblemError(f"{where}: CP-SAT rejects the model ({error.strip()})")
    return CpsatModel(model, xs, scale)


def _load(instance: str | Path | Problem) -> Problem:
    if isinstance(instance, Problem):
        return instance
    path = Path(instance)
    return problem_from_scip(read_scip_model(path), instance_name(path), source=path)


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
    solver.parameters.random_seed = int(np.random.default_rng(seed).integers(SEED_BOUND))
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, started + time_limit - time.perf_counter() - DEADLINE_MARGIN)
    try:
        status = solver.solve(built.model, Recorder())
        interrupted = False
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
