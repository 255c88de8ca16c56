"""SCIP on a problem, with some integer variables fixed: the sub-solver of the LNS loop.

One :class:`ScipSubSolver` holds one SCIP model for a whole run. Each call to
:meth:`ScipSubSolver.solve` fixes the variables outside the neighborhood at their
incumbent values, hands SCIP the incumbent as a start (so SCIP only accepts
strictly better solutions: the objective cutoff), solves, and restores the
original bounds in ``finally``. The same object solves the whole problem for
the initial solution and the plain-SCIP baseline.
"""
from __future__ import annotations

import contextlib
import time

import numpy as np
from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

from lns.core.interrupt import active_guard
from lns.core.problem import Problem
from lns.core.scip_memory import MemoryRelease
from lns.core.subsolver import FoundSolution, SolveOutcome

class _SolutionRecorder(Eventhdlr):
    """Captures every new best solution with the time SCIP found it."""

    def __init__(self, solver: "ScipSubSolver"):
        super().__init__()
        self.solver = solver
        self.found: list = []
        self.on_found = None

    def eventinit(self):
        self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexit(self):
        self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexec(self, event):
        now = time.perf_counter()
        sol = self.model.getBestSol()
        if sol.getOrigin() == 3:  # SCIP_SOLORIGIN_ORIGINAL: the start solution we handed in
            return
        x = np.array([self.model.getSolVal(sol, v) for v in self.solver.variables], dtype=float)
        x = self.solver.problem.round_integers(x)
        found = FoundSolution(now, self.solver.problem.objective_value(x), x)
        self.found.append(found)
        if self.on_found is not None:
            self.on_found(found)


class ScipSubSolver:
    """A SCIP model of ``problem``, built once and re-solved with different fixings.

    Parameters
    ----------
    problem : Problem
        The problem; the model's variables are in the same order.
    params : dict, optional
        SCIP parameters set once (e.g. ``{"heuristics/emphasis": ...}`` is not a parameter;
        use names like ``"presolving/maxrounds"``).
    threads : int
        SCIP's ``parallel/maxnthreads`` (1: sequential, as the LNS loop expects).
    model : pyscipopt.Model, optional
        A model of ``problem`` to use instead of building one (its variables must be in the
        problem's order).

    Attributes
    ----------
    total_solve_time : float
        Seconds spent inside SCIP's ``optimize()`` over all solves so far.
    total_reset_time : float
        Seconds SCIP spent freeing each solve's transformed problem (``freeTransform``) and, every
        few solves, the memory it no longer uses (:class:`lns.core.scip_memory.MemoryRelease`), the
        price of re-solving one model; the rest of a run's wall time is the loop's own
        (Python) overhead.
    """

    def __init__(self, problem: Problem, params: dict | None = None, threads: int = 1, model=None):
        self.problem = problem
        self.model = model if model is not None else problem.to_scip()
        self.model.hideOutput()
        self.variables = self.model.getVars()
        if [v.name for v in self.variables] != list(problem.var_names):
            raise ValueError(f"the SCIP model of {problem.name} does not list the problem's variables in order")
        self._lower = np.array([v.getLbOriginal() for v in self.variables])
        self._upper = np.array([v.getUbOriginal() for v in self.variables])
        self._lower_now, self._upper_now = self._lower.copy(), self._upper.copy()
        self._keep_fixings = False
        self.model.setIntParam("parallel/maxnthreads", threads)
        self.model.setBoolParam("misc/catchctrlc", False)  # lns.core.interrupt handles Ctrl-C
        # Each solve starts fresh: SCIP would otherwise carry the last solve's solutions into the next one.
        self.model.setBoolParam("misc/transsolsorig", False)
        for name, value in (params or {}).items():
            self.model.setParam(name, value)
        self.total_solve_time = 0.0
        self.total_reset_time = 0.0
        self._memory = MemoryRelease()  # keeps repeated solves from growing the process
        self._recorder = _SolutionRecorder(self)
        self.model.includeEventhdlr(self._recorder, "lns_recorder", "records every new best solution")

    def solve(self, *, time_limit: float, seed: int, fixed: np.ndarray | None = None,
              start: np.ndarray | None = None, solution_limit: int = -1, node_limit: int = -1,
              on_found=None) -> SolveOutcome:
        """Solve with ``fixed`` variables held at their ``start`` values.

        Parameters
        ----------
        time_limit : float
            Seconds for SCIP (clipped at 0.01 from below).
        seed : int
            SCIP's ``randomization/randomseedshift`` for this solve.
        fixed : numpy.ndarray of int, optional
            Indices of the variables fixed at ``start``; none if omitted.
        start : numpy.ndarray, optional
            A feasible solution handed to SCIP as a start. Required when ``fixed`` is given.
            SCIP then only reports strictly better solutions.
        solution_limit : int
            Stop after this many solutions were found (-1: no limit).
        node_limit : int
            Stop after this many branch-and-bound nodes (-1: no limit), for runs that repeat exactly.
        on_found : callable, optional
            Called with each :class:`FoundSolution` as SCIP finds it, so that progress shows live.
        """
        model = self.model
        fixed = np.empty(0, dtype=np.int64) if fixed is None else np.asarray(fixed, dtype=np.int64)
        if len(fixed) and start is None:
            raise ValueError("fixing variables needs a start solution to fix them at")
        model.freeTransform()
        self._recorder.found = []
        self._recorder.on_found = on_found
        try:
            lower, upper = self._lower.copy(), self._upper.copy()
            if len(fixed):
                lower[fixed] = upper[fixed] = start[fixed]
            self._set_bounds(lower, upper)
            model.setRealParam("limits/time", min(1e20, max(0.01, float(time_limit))))
            model.setIntParam("limits/solutions", solution_limit)
            model.setLongintParam("limits/nodes", node_limit)
            model.setIntParam("randomization/randomseedshift", int(seed))
            if start is not None:
                self._add_start(start)
            guard = active_guard()
            if guard is not None and guard.requested:
                return SolveOutcome("userinterrupt")
            began = time.perf_counter()
            if guard is None:
                model.optimize()
            else:
                with guard.solving(model):
                    model.optimizeNogil()
            solve_time = time.perf_counter() - began
            self.total_solve_time += solve_time
            status = "userinterrupt" if guard is not None and guard.requested else model.getStatus()
            dual_bound = model.getDualbound() if model.getStage() >= 3 else float("nan")
            return SolveOutcome(status, list(self._recorder.found), solve_time, dual_bound)
        finally:
            began = time.perf_counter()
            model.freeTransform()
            self._memory.after_free_transform(model)
            self.total_reset_time += time.perf_counter() - began
            if not self._keep_fixings:
                self._set_bounds(self._lower, self._upper)

    @contextlib.contextmanager
    def keeping_fixings(self):
        """Within the block, each solve leaves its fixings in the model for the next one.

        The next :meth:`solve` then changes only the bounds that differ (consecutive LNS
        neighborhoods overlap, so that is a fraction of the fixed variables), and the end of the
        block restores every original bound, also after an exception.
        """
        self._keep_fixings = True
        try:
            yield self
        finally:
            self._keep_fixings = False
            self.model.freeTransform()
            self._set_bounds(self._lower, self._upper)

    def _set_bounds(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Give the model these bounds, calling SCIP only for those that differ from its current ones.

        Bounds are widened before they are tightened, so that ``lb <= ub`` holds after every call.
        """
        model, variables = self.model, self.variables
        steps = ((np.greater, model.chgVarUb, upper, self._upper_now),  # widen
                 (np.less, model.chgVarLb, lower, self._lower_now),
                 (np.greater, model.chgVarLb, lower, self._lower_now),  # tighten
                 (np.less, model.chgVarUb, upper, self._upper_now))
        for differs, change, target, now in steps:
            for j in np.flatnonzero(differs(target, now)).tolist():
                change(variables[j], float(target[j]))
                now[j] = target[j]

    def _add_start(self, start: np.ndarray) -> None:
        sol = self.model.createSol()  # all zeros
        for j in np.flatnonzero(start).tolist():
            self.model.setSolVal(sol, self.variables[j], float(start[j]))
        self.model.addSol(sol, free=True)
