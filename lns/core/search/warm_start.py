"""Warm starts: a user's solution, possibly partial, completed by a sub-solve.

A start assigns values to some or all variables: a ``.sol`` file, a dict ``{name: value}``
or a vector with NaN where a variable is unassigned. A complete, feasible start becomes the
first incumbent as it is. Otherwise the start is *completed*: the assigned integer variables
are fixed at their values and SCIP solves for the others (a sub-problem of the kind an LNS
iteration solves), as SCIP's partial solutions (the ``completesol`` heuristic), CP-SAT's
hints and Balans accept partial starts. If no completion is found, the run warns and falls
back to SCIP's own first solution.

In a ``.sol`` file an unlisted variable is zero (SCIP's convention for complete solutions)
when that gives a feasible solution; otherwise the file is a partial start and the unlisted
variables are the unassigned ones.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from lns.core.errors import SolutionFileError
from lns.core.problem.mip import Problem
from lns.core.problem.solution_file import read_sol
from lns.core.solvers.protocol import SolveStatus

log = logging.getLogger("lns")

INTEGRALITY_TOL = 1e-5


def read_start(start, problem: Problem) -> tuple[np.ndarray, str]:
    """The start as a value vector with NaN where unassigned, and the name to use in messages.

    Raises
    ------
    SolutionFileError
        A file is unreadable, a name is not a variable of ``problem``, a value is not a finite
        number, or a vector has the wrong length.
    """
    if isinstance(start, (str, Path)):
        x = read_sol(start, problem, missing=np.nan)
        zeros = np.where(np.isnan(x), 0.0, x)
        return (zeros if problem.check(zeros).feasible else x), str(start)
    where = "initial_solution"
    if isinstance(start, dict):
        index = {name: j for j, name in enumerate(problem.var_names)}
        unknown = sorted(set(start) - set(index))
        if unknown:
            raise SolutionFileError(
                f"{where}: variable '{unknown[0]}' is not in problem {problem.name}"
            )
        x = np.full(problem.n_vars, np.nan)
        for name, value in start.items():
            x[index[name]] = _number(value, name, where)
        return x, where
    try:
        x = np.asarray(start, dtype=float)
    except (TypeError, ValueError):
        raise SolutionFileError(
            f"{where}: expected a vector of numbers, got {type(start).__name__}"
        ) from None
    if x.shape != (problem.n_vars,):
        raise SolutionFileError(
            f"{where}: expected {problem.n_vars} values (one per variable of "
            f"{problem.name}), got shape {x.shape}"
        )
    infinite = np.flatnonzero(np.isinf(x))
    if len(infinite):
        name = problem.var_names[infinite[0]]
        raise SolutionFileError(f"{where}: value {x[infinite[0]]} of '{name}' is not finite")
    return x, where


def _number(value, name: str, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SolutionFileError(f"{where}: value {value!r} of '{name}' is not a number") from None
    if not np.isfinite(number):
        raise SolutionFileError(f"{where}: value {value!r} of '{name}' is not finite")
    return number


def conflict(problem: Problem, x: np.ndarray) -> str | None:
    """Why the assigned integer values of ``x`` cannot be fixed, or ``None``.

    A value that is fractional or out of its variable's bounds would make the completion
    infeasible; naming it says more than SCIP's "infeasible".
    """
    assigned = problem.integer_mask & ~np.isnan(x)
    for j in np.flatnonzero(assigned).tolist():
        name, value = problem.var_names[j], x[j]
        if abs(value - round(value)) > INTEGRALITY_TOL:
            return f"integer variable '{name}' = {value:g} is fractional"
        if not problem.lower[j] - INTEGRALITY_TOL <= value <= problem.upper[j] + INTEGRALITY_TOL:
            bounds = f"[{problem.lower[j]:g}, {problem.upper[j]:g}]"
            return f"'{name}' = {value:g} is outside its bounds {bounds}"
    return None


def warm_start(
    problem: Problem,
    solver,
    incumbent,
    start,
    *,
    time_limit: float,
    seed: int,
    node_limit: int = -1,
) -> bool:
    """Offer ``start`` to ``incumbent``, completed if needed; return whether it holds a solution.

    Parameters
    ----------
    problem : Problem
    solver : lns.core.solvers.protocol.SubSolver or None
        The solver of ``problem``; the completion is one of its solves (``None``: a start that
        needs completing is refused with a warning).
    incumbent : lns.core.search.loop.Incumbent
        Receives the start (source ``"user"``) and any completion SCIP finds.
    start : path, dict or array
        See :func:`read_start`.
    time_limit : float
        Seconds for the completing sub-solve.
    seed : int
        SCIP's random seed shift for that sub-solve.
    node_limit : int
        Its node limit (-1: none).

    Returns
    -------
    bool
        ``False`` (after a warning) when the start is neither feasible nor completable, or
        when an interrupt stopped the completion: the caller then goes on as without a start.
    """
    x, where = read_start(start, problem)
    assigned = ~np.isnan(x)
    if assigned.all() and problem.check(x).feasible:
        return incumbent.offer(x, found_at=time.perf_counter(), source="user")
    reason = conflict(problem, x)
    if reason is None and solver is None:
        reason = "this method takes complete starts only"
    if reason is None:
        fixed = problem.integer_mask & assigned
        values = np.where(assigned, x, np.clip(0.0, problem.lower, problem.upper))
        values[fixed] = np.round(values[fixed])
        outcome = solver.solve(
            time_limit=time_limit,
            seed=seed,
            free=np.flatnonzero(problem.integer_mask & ~assigned),
            start=values,
            node_limit=node_limit,
            on_found=lambda found: incumbent.offer(found.x, found_at=found.time, source="user"),
        )
        if incumbent.x is not None:
            log.info(
                "%s: completed the start (%d of %d integer variables fixed)",
                problem.name,
                int(fixed.sum()),
                len(problem.integer_indices),
            )
            return True
        if outcome.status == SolveStatus.INTERRUPTED:  # a str enum: SCIP's word matches too
            return False  # the caller's next solve answers the interrupt at once
        reason = f"SCIP found no completion: {outcome.status}"
    log.warning(
        "%s: the start is not feasible for %s and cannot be completed (%s); finding a "
        "first solution without it",
        where,
        problem.name,
        reason,
    )
    return False
