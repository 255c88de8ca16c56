"""OR-Tools CP-SAT on the whole problem: a baseline for the anytime benchmark.

:func:`run_cpsat` runs CP-SAT (on the model of :mod:`lns.core.solvers.cpsat.model`) within a
time limit and offers every solution it reports to the run's
:class:`lns.core.search.incumbent.Incumbent`, which checks it against the original problem and
keeps the trajectory; :func:`lns.api.solve_cpsat` builds the same
:class:`lns.core.search.result.Result` from it as for LNS and plain SCIP. A problem the native model
does not take (continuous variables, infinite bounds, coefficients that do not scale) is solved
through OR-Tools' MIP interface to CP-SAT instead (:mod:`lns.core.baselines.cpsat_mip`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time

import numpy as np

from lns.core.baselines.cpsat_mip import solve_cpsat_mip
from lns.core.errors import InfeasibleProblemError, InvalidArgumentError, UnsupportedProblemError
from lns.core.interrupt import active_guard
from lns.core.search.incumbent import Incumbent
from lns.core.search.stop import StopReason
from lns.core.solvers.cpsat.model import build_cpsat_model

log = logging.getLogger("lns")


def run_cpsat(
    incumbent: Incumbent,
    *,
    time_limit: float,
    seed: int,
    num_workers: int = 2,
    max_scale_exponent: int = 6,
) -> tuple[StopReason, float | None]:
    """Solve ``incumbent.problem`` with CP-SAT, offering each solution to ``incumbent``.

    Parameters
    ----------
    incumbent : Incumbent
        The run's incumbent; a solution it already holds is CP-SAT's hint.
    time_limit : float
        Seconds for CP-SAT (``math.inf``: none).
    seed : int
        CP-SAT's ``random_seed`` (in ``range(lns.core.solvers.protocol.SEED_BOUND)``).
    num_workers : int
        CP-SAT search workers (threads). With 1 worker and no time limit hit, runs repeat.
    max_scale_exponent : int
        See :func:`lns.core.solvers.cpsat.model.build_cpsat_model`.

    Returns
    -------
    stop_reason : StopReason
        ``OPTIMAL`` when CP-SAT proved the incumbent optimal, ``INTERRUPTED`` on Ctrl-C, else
        ``TIME_LIMIT``.
    dual_bound : float or None
        CP-SAT's objective bound, in the problem's sense, when it has one (not through the
        MIP interface).

    Raises
    ------
    InfeasibleProblemError
        CP-SAT proved the problem infeasible.
    """
    from ortools.sat.python import cp_model

    if num_workers < 1:
        raise InvalidArgumentError(f"num_workers must be >= 1, got {num_workers}")
    problem = incumbent.problem
    try:
        built = build_cpsat_model(problem, max_scale_exponent)
    except UnsupportedProblemError as error:
        log.info("%s; solved through OR-Tools' MIP interface to CP-SAT", error)
        stop_reason = solve_cpsat_mip(
            incumbent, time_limit=time_limit, seed=seed, num_workers=num_workers
        )
        return stop_reason, None
    if incumbent.x is not None:
        for variable, value in zip(built.variables, incumbent.x, strict=True):
            built.model.add_hint(variable, int(round(value)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = num_workers
    solver.parameters.catch_sigint_signal = False  # the interrupt guard stops the search
    solver.parameters.random_seed = int(seed)
    if math.isfinite(time_limit):
        solver.parameters.max_time_in_seconds = max(0.0, time_limit)
    guard = active_guard()
    try:
        with guard.solving(_CpSatStop(solver)) if guard else contextlib.nullcontext():
            status = solver.solve(built.model, _recorder(cp_model, built.variables, incumbent))
    except KeyboardInterrupt:
        return StopReason.INTERRUPTED, None
    if guard is not None and guard.requested:
        return StopReason.INTERRUPTED, None
    where = problem.source or problem.name
    if status == cp_model.INFEASIBLE:
        raise InfeasibleProblemError(f"{where}: CP-SAT proved the problem infeasible")
    if status == cp_model.MODEL_INVALID:
        reason = built.model.validate()
        raise UnsupportedProblemError(f"{where}: CP-SAT rejects the model ({reason})")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return StopReason.TIME_LIMIT, None
    dual_bound = solver.best_objective_bound / built.objective_scale + problem.objective_offset
    proven = status == cp_model.OPTIMAL and incumbent.x is not None
    return (StopReason.OPTIMAL if proven else StopReason.TIME_LIMIT), dual_bound


class _CpSatStop:
    """The stop hook of the interrupt guard for a running CP-SAT solve."""

    def __init__(self, solver):
        self.solver = solver

    def stop(self) -> None:
        self.solver.stop_search()


def _recorder(cp_model, variables: list, incumbent: Incumbent):
    """A CP-SAT solution callback that offers each solution to ``incumbent``."""

    class Recorder(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            found = time.perf_counter()
            x = np.array([self.value(v) for v in variables], dtype=float)
            incumbent.offer(x, found_at=found, source="cpsat")

    return Recorder()
