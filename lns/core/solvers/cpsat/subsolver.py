"""CP-SAT on a pure-integer problem, with some variables fixed: a sub-solver of the LNS loop.

One :class:`CpSatSubSolver` holds one CP-SAT model
(:func:`lns.core.solvers.cpsat.model.build_cpsat_model`)
for a run, and each :meth:`CpSatSubSolver.solve` changes it in place, then undoes the change:

- the fixings are domain changes ``[v, v]`` of the model's variables (only of those whose
  domain differs from the model's current one, as consecutive neighborhoods overlap);
- the start is a complete solution hint;
- the cutoff is a domain of the objective: the CP-SAT objective of a pure-integer problem
  is an integer ``z = sum(a_j x_j)`` (scaled by a power of ten), so ``z <= z(start) - 1``
  admits exactly the strictly better solutions, and ``INFEASIBLE`` then proves that nothing
  beats the start (reported as ``OPTIMAL``, as SCIP reports it with the start as solution).
  An objective that stays fractional after scaling gets no cutoff; equal solutions are then
  filtered out of the reports;
- ``node_limit`` becomes a deterministic time limit (:data:`DETERMINISTIC_SECONDS_PER_NODE`),
  so that runs with node limits repeat (with one worker);
- every improving solution is checked against the problem and reported live.

CP-SAT runs in the worker thread of a :class:`lns.core.solvers.watchdog.Watchdog` (its search
releases
the GIL), with its own SIGINT catching off: Ctrl-C reaches :mod:`lns.core.interrupt`, which
calls :meth:`CpSatSubSolver.stop` (``StopSearch``).

References
----------
L. Perron, F. Didier. CP-SAT, OR-Tools (https://developers.google.com/optimization).
"""

from __future__ import annotations

import functools
import logging
import time

import numpy as np

from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Problem
from lns.core.solvers.cpsat.model import build_cpsat_model
from lns.core.solvers.protocol import FoundSolution, SolveOutcome, SolveStatus, fixed_indices
from lns.core.solvers.watchdog import GRACE_SECONDS, WatchedSubSolver

log = logging.getLogger("lns")

#: CP-SAT deterministic seconds per branch-and-bound node of ``node_limit``: a convention, so
#: that one node limit means comparable work for both sub-solvers (one SCIP node of a small
#: sub-problem takes about a millisecond).
DETERMINISTIC_SECONDS_PER_NODE = 1e-3
#: Relative margin by which a reported solution must beat the last one (float objectives only).
REPORT_TOL = 1e-9


@functools.cache
def _reporter_class():
    """The solution callback class (OR-Tools is imported when a CP-SAT sub-solver is built)."""
    from ortools.sat.python import cp_model

    class Reporter(cp_model.CpSolverSolutionCallback):
        """Checks and reports each strictly better solution; stops after ``solution_limit``."""

        def __init__(self, problem: Problem, best: float | None, on_found, solution_limit: int):
            super().__init__()
            self.problem, self.best, self.on_found = problem, best, on_found
            self.solution_limit = solution_limit
            self.found: list = []
            self.limit_hit = False

        def on_solution_callback(self):
            now = time.perf_counter()
            x = np.array(self.Response().solution, dtype=float)
            objective = self.problem.objective_value(x)
            if not self.problem.is_better(objective, self.best, REPORT_TOL):
                return
            check = self.problem.check(x)
            if not check.feasible:
                log.warning(
                    "%s: rejected a CP-SAT solution that violates the problem (%s)",
                    self.problem.name,
                    check,
                )
                return
            self.best = objective
            found = FoundSolution(now, objective, x)
            self.found.append(found)
            on_found = self.on_found
            if on_found is not None:
                on_found(found)
            if 0 < self.solution_limit <= len(self.found):
                self.limit_hit = True
                self.StopSearch()

    return Reporter


class CpSatSubSolver(WatchedSubSolver):
    """A CP-SAT model of a pure-integer ``problem``, built once, re-solved with different fixings.

    Parameters
    ----------
    problem : Problem
        A pure-integer problem with finite bounds (see :func:`build_cpsat_model`).
    params : dict, optional
        CP-SAT parameters (``SatParameters`` field names) for every solve.
    num_workers : int
        CP-SAT search workers (threads). Runs with a node limit repeat only with 1.
    max_scale_exponent : int
        See :func:`build_cpsat_model`.
    grace : float
        Seconds the watchdog allows past a time limit (:class:`lns.core.solvers.watchdog.Watchdog`).

    Raises
    ------
    UnsupportedProblemError
        The problem is not pure integer with finite bounds and scalable rows.
    ValueError
        ``num_workers < 1`` or a parameter CP-SAT does not know or accept.

    Attributes
    ----------
    name : str
        ``"cpsat"``.
    total_solve_time : float
        Seconds spent inside CP-SAT over all solves so far.
    """

    name = "cpsat"

    def __init__(
        self,
        problem: Problem,
        params: dict | None = None,
        num_workers: int = 1,
        max_scale_exponent: int = 6,
        grace: float = GRACE_SECONDS,
    ):
        if num_workers < 1:
            raise InvalidArgumentError(f"num_workers must be >= 1, got {num_workers}")
        super().__init__(f"the CP-SAT sub-solver of {problem.name}", grace)
        self.problem = problem
        self.built = build_cpsat_model(problem, max_scale_exponent)
        self._proto = self.built.model.proto
        self._parameters = _parameters(num_workers, params or {})
        domains = np.array([list(v.domain) for v in self._proto.variables], dtype=np.int64)
        self._lower, self._upper = domains[:, 0], domains[:, 1]
        self._lower_now, self._upper_now = self._lower.copy(), self._upper.copy()
        self._objective_vars, self._objective_coeffs = _integral_objective(self._proto)
        c, vs = self._objective_coeffs, self._objective_vars
        self._objective_floor = int(np.minimum(c * self._lower[vs], c * self._upper[vs]).sum())
        self.total_solve_time = 0.0

    def solve(
        self,
        *,
        time_limit: float,
        seed: int,
        free: np.ndarray | None = None,
        start: np.ndarray | None = None,
        solution_limit: int = -1,
        node_limit: int = -1,
        on_found=None,
    ) -> SolveOutcome:
        """Solve with the integer variables outside ``free`` held at their ``start`` values.

        See :meth:`lns.core.solvers.protocol.SubSolver.solve`. ``seed`` is CP-SAT's ``random_seed``;
        ``node_limit`` becomes ``max_deterministic_time = node_limit *``
        :data:`DETERMINISTIC_SECONDS_PER_NODE`.
        """
        fixed = fixed_indices(self.problem, free, start)
        self._watchdog.arm()
        time_limit = max(0.01, float(time_limit))
        start_int = None if start is None else np.rint(start).astype(np.int64)
        try:
            self._fix(fixed, start_int)
            if (
                start is not None
                and start_int is not None
                and not self._restrict_to_better(start_int)
            ):
                best = self.problem.objective_value(start)
                return SolveOutcome(SolveStatus.OPTIMAL, dual_bound=best)
            return self._search(time_limit, seed, start, solution_limit, node_limit, on_found)
        finally:
            if not self._watchdog.abandoned:
                self._reset()

    def _restore(self) -> None:
        self._set_domains(self._lower, self._upper)

    def _fix(self, fixed: np.ndarray, start: np.ndarray | None) -> None:
        lower, upper = self._lower.copy(), self._upper.copy()
        if len(fixed):
            assert start is not None, "fixed_indices() refuses fixings without a start"
            lower[fixed] = upper[fixed] = start[fixed]
        self._set_domains(lower, upper)

    def _set_domains(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Give the model these domains, changing only those that differ from its current ones."""
        changed = np.flatnonzero((lower != self._lower_now) | (upper != self._upper_now))
        variables = self._proto.variables
        for j, lo, hi in zip(
            changed.tolist(), lower[changed].tolist(), upper[changed].tolist(), strict=True
        ):
            domain = variables[j].domain
            domain[0], domain[1] = lo, hi
        self._lower_now[changed], self._upper_now[changed] = lower[changed], upper[changed]

    def _restrict_to_better(self, start: np.ndarray) -> bool:
        """Hint ``start``; cut off every solution not strictly better (``False``: none can be)."""
        hint = self._proto.solution_hint
        hint.vars.extend(range(len(start)))
        hint.values.extend(start.tolist())
        if not self._proto.has_objective():  # a fractional objective: reports are filtered instead
            return True
        value = int(self._objective_coeffs @ start[self._objective_vars])
        if value - 1 < self._objective_floor:
            return False
        self._proto.objective.domain.extend([self._objective_floor, value - 1])
        return True

    def _search(
        self, time_limit: float, seed: int, start, solution_limit: int, node_limit: int, on_found
    ) -> SolveOutcome:
        """Run CP-SAT under the watchdog and the interrupt guard; read how it ended."""
        solver = self._new_solver(time_limit, seed, node_limit)
        best = None if start is None else self.problem.objective_value(start)
        reporter = _reporter_class()(self.problem, best, on_found, solution_limit)
        ended: dict = {}

        def work():
            ended["code"] = solver.solve(self.built.model, reporter)

        status, solve_time = self._watchdog.run_guarded(self, work, time_limit, solver.stop_search)
        self.total_solve_time += solve_time
        if status is SolveStatus.ABANDONED:
            reporter.on_found = None
            log.warning(
                "%s: CP-SAT ignored its time limit of %.2fs or a stop request; the "
                "solve was abandoned after %.2fs",
                self.problem.name,
                time_limit,
                solve_time,
            )
            return SolveOutcome(status, list(reporter.found), solve_time)
        code = ended.get("code")  # none if Ctrl-C came before the start
        if status is None:
            status = self._status(code, solver, reporter, start, node_limit)
        dual_bound = self._dual_bound(code, solver, best)
        return SolveOutcome(status, list(reporter.found), solve_time, dual_bound)

    def _new_solver(self, time_limit: float, seed: int, node_limit: int):
        from ortools.sat.python import cp_model

        solver = cp_model.CpSolver()
        solver.parameters.copy_from(self._parameters)
        solver.parameters.max_time_in_seconds = time_limit
        solver.parameters.random_seed = int(seed)
        if node_limit >= 0:
            solver.parameters.max_deterministic_time = node_limit * DETERMINISTIC_SECONDS_PER_NODE
        return solver

    def _status(self, code, solver, reporter, start, node_limit: int) -> SolveStatus:
        from ortools.sat.python import cp_model

        if code == cp_model.OPTIMAL:
            return SolveStatus.OPTIMAL
        if code == cp_model.INFEASIBLE:  # under the cutoff: nothing beats a feasible start
            feasible_start = start is not None and self.problem.check(start).feasible
            return SolveStatus.OPTIMAL if feasible_start else SolveStatus.INFEASIBLE
        if code == cp_model.MODEL_INVALID:
            log.warning(
                "%s: CP-SAT rejects the model (%s)", self.problem.name, self.built.model.validate()
            )
            return SolveStatus.ERROR
        if reporter.limit_hit:
            return SolveStatus.SOLUTION_LIMIT
        limit = solver.parameters.max_deterministic_time
        if node_limit >= 0 and solver.deterministic_time >= limit:
            return SolveStatus.NODE_LIMIT
        return SolveStatus.TIME_LIMIT

    def _dual_bound(self, code, solver, best: float | None) -> float:
        """CP-SAT's objective bound in the problem's sense (NaN if none); under the cutoff,
        ``INFEASIBLE`` bounds the sub-problem by the start's objective."""
        from ortools.sat.python import cp_model

        if code == cp_model.INFEASIBLE and best is not None:
            return best
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            bound = solver.best_objective_bound / self.built.objective_scale
            return bound + self.problem.objective_offset
        return float("nan")

    def _reset(self) -> None:
        """Drop the hint and the cutoff; restore the domains unless in a session."""
        self._proto.clear_solution_hint()
        if self._proto.has_objective():
            self._proto.objective.domain.clear()
        if not self._keep_fixings:
            self._set_domains(self._lower, self._upper)


def _integral_objective(proto) -> tuple[np.ndarray, np.ndarray]:
    """The variables and coefficients of ``proto``'s integral objective (empty without one).

    Reading ``proto.objective`` creates the field, which CP-SAT then refuses beside a
    floating-point objective: only an integral objective is read.
    """
    if not proto.has_objective():
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    objective = proto.objective
    return (
        np.array(list(objective.vars), dtype=np.int64),
        np.array(list(objective.coeffs), dtype=np.int64),
    )


def _parameters(num_workers: int, params: dict):
    """CP-SAT parameters shared by every solve: ``params`` over quiet, single-run defaults."""
    from ortools.sat.python import cp_model

    parameters = cp_model.CpSolver().parameters
    parameters.num_workers = num_workers
    parameters.catch_sigint_signal = False  # lns.core.interrupt handles Ctrl-C
    parameters.log_search_progress = False
    for name, value in params.items():
        try:
            setattr(parameters, name, value)
        except (AttributeError, TypeError, ValueError) as error:
            reason = str(error).splitlines()[0]
            raise InvalidArgumentError(f"CP-SAT parameter {name}={value!r}: {reason}") from None
    return parameters
