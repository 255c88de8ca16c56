"""SCIP on a problem, with some integer variables fixed: the sub-solver of the LNS loop.

One :class:`ScipSubSolver` holds one SCIP model for a whole run. Each call to
:meth:`ScipSubSolver.solve` fixes the variables outside the neighborhood at their
incumbent values, hands SCIP the incumbent as a start (so SCIP only accepts
strictly better solutions: the objective cutoff), solves, and restores the
original bounds in ``finally``; or, with ``sub_problem="reduced"`` or ``"auto"``, solves
the sub-MIP of the free variables alone (:mod:`lns.core.problem.reduced`) in a second SCIP
instance kept for it. The same object solves the whole problem for
the initial solution and the plain-SCIP baseline. SCIP runs in the worker thread of
a :class:`lns.core.solvers.watchdog.Watchdog`, with the GIL released, so that a solve that
ignores its time limit is stopped, or abandoned, about a second after it.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from pyscipopt import SCIP_EVENTTYPE, Eventhdlr, Model

from lns.core.errors import BuildStoppedError, InvalidArgumentError, UnknownNameError
from lns.core.problem.mip import Problem
from lns.core.problem.reduced import SUB_PROBLEMS, ReducedProblem, Reducer
from lns.core.solvers.protocol import (
    FoundSolution,
    OnFound,
    SolveOutcome,
    SolveStatus,
    fixed_indices,
)
from lns.core.solvers.scip.lp_interrupt import interrupt_lp, resume_lp
from lns.core.solvers.scip.memory import MemoryRelease
from lns.core.solvers.watchdog import GRACE_SECONDS, WatchedSubSolver

log = logging.getLogger("lns")

#: Every status word of ``pyscipopt.Model.getStatus`` (PySCIPOpt 6); others read as ``OTHER``.
SCIP_STATUS = {
    "optimal": SolveStatus.OPTIMAL,
    "infeasible": SolveStatus.INFEASIBLE,
    "unbounded": SolveStatus.UNBOUNDED,
    "inforunbd": SolveStatus.INFEASIBLE_OR_UNBOUNDED,
    "timelimit": SolveStatus.TIME_LIMIT,
    "nodelimit": SolveStatus.NODE_LIMIT,
    "totalnodelimit": SolveStatus.NODE_LIMIT,
    "stallnodelimit": SolveStatus.NODE_LIMIT,
    "sollimit": SolveStatus.SOLUTION_LIMIT,
    "bestsollimit": SolveStatus.SOLUTION_LIMIT,
    "gaplimit": SolveStatus.GAP_LIMIT,
    "memlimit": SolveStatus.MEMORY_LIMIT,
    "userinterrupt": SolveStatus.INTERRUPTED,
    "restartlimit": SolveStatus.OTHER,
    "primallimit": SolveStatus.OTHER,
    "duallimit": SolveStatus.OTHER,
    "unknown": SolveStatus.OTHER,
}


def scip_status(word: str) -> SolveStatus:
    """The :class:`SolveStatus` of a SCIP status word (``OTHER`` for a word it does not know)."""
    return SCIP_STATUS.get(word, SolveStatus.OTHER)


#: The sub-solvers whose SCIP instance is not freed yet (see :func:`_free_at_exit`).
_LIVE: weakref.WeakSet[ScipSubSolver] = weakref.WeakSet()


@atexit.register
def _free_at_exit() -> None:
    """Free the SCIP instances still alive when the interpreter exits.

    A pyscipopt ``Model`` frees SCIP in ``__del__``; at interpreter exit that may not run
    before the garbage collector clears the model's event handler, and ``SCIPfree`` then
    calls into the cleared handler (a segmentation fault after all tests had passed, in about
    one pytest run of two). ``atexit`` hooks run while every object is still intact.
    """
    for solver in list(_LIVE):
        solver.close()


class _SolutionRecorder(Eventhdlr):
    """Captures every new best solution with the time SCIP found it, and tells ``on_first_lp``
    when SCIP solved its first LP.

    pyscipopt makes a model and its event handlers refer to each other. The handler refers to
    its model only during a solve (:attr:`model` is ``None`` between solves), so that a model
    is freed by reference counting as soon as its sub-solver is dropped.
    """

    def __init__(self, problem: Problem, variables: list):
        super().__init__()
        self.problem = problem
        self.variables = variables
        #: The reduced problem the model holds, if any: its values are lifted to the original.
        self.reduced: ReducedProblem | None = None
        self.found: list = []
        self.on_found: OnFound | None = None
        self.on_first_lp: Callable[[float], None] | None = None
        #: A ``time.perf_counter()`` to which SCIP's time limit is lowered at the first solution.
        self.deadline_once_found: float | None = None

    def eventinit(self):
        self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)
        self.model.catchEvent(SCIP_EVENTTYPE.FIRSTLPSOLVED, self)

    def eventexit(self):
        self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)
        self.model.dropEvent(SCIP_EVENTTYPE.FIRSTLPSOLVED, self)

    def eventexec(self, event):
        now = time.perf_counter()
        if event.getType() == SCIP_EVENTTYPE.FIRSTLPSOLVED:
            on_first_lp = self.on_first_lp
            if on_first_lp is not None:
                on_first_lp(now)
            return
        sol = self.model.getBestSol()
        if sol.getOrigin() == 3:  # SCIP_SOLORIGIN_ORIGINAL: the start solution we handed in
            return
        x = np.array([self.model.getSolVal(sol, v) for v in self.variables], dtype=float)
        reduced = self.reduced
        if reduced is None:
            x = self.problem.round_integers(x)
            found = FoundSolution(now, self.problem.objective_value(x), x)
        else:
            values = reduced.problem.round_integers(x)
            change = reduced.change(values)
            found = FoundSolution(now, change.objective, reduced.lift(values), change)
        self.found.append(found)
        deadline = self.deadline_once_found
        if deadline is not None:
            self.deadline_once_found = None
            self._end_by(deadline - now)
        on_found = self.on_found
        if on_found is not None:
            on_found(found)

    def _end_by(self, seconds: float) -> None:
        """Lower SCIP's time limit so that it ends ``seconds`` from now (never raise it): SCIP
        gives the LP it starts what is left of its limit, and stops the LP there."""
        model = self.model
        limit = model.getSolvingTime() + max(0.0, seconds)
        if limit < model.getParam("limits/time"):
            model.setRealParam("limits/time", limit)


class ScipSubSolver(WatchedSubSolver):
    """A SCIP model of ``problem``, built on first use and re-solved with different fixings.

    Parameters
    ----------
    problem : Problem
        The problem.
    params : dict, optional
        SCIP parameters set once (e.g. ``{"presolving/maxrounds": 0}``).
    threads : int
        SCIP's ``parallel/maxnthreads`` (1: sequential, as the LNS loop expects).
    model : pyscipopt.Model or callable, optional
        A model of ``problem`` to use instead of building one from its arrays, or a function
        that reads one, called when the model is first needed (SCIP reads a file faster than
        the arrays become a model); its variables are matched to the problem's by name.
    grace : float
        Seconds the watchdog allows past a time limit before it stops the solve, and again
        before it abandons it (:class:`lns.core.solvers.watchdog.Watchdog`).
    sub_problem : {"whole", "reduced", "auto"}
        What a solve with fixed variables solves: the whole model with the fixed variables'
        bounds changed, a :class:`lns.core.problem.reduced.ReducedProblem` of the free
        variables and their rows, built anew in a second SCIP instance kept for it, or either,
        chosen per solve by :func:`prefers_reduced`. A caller that changes :attr:`model` itself
        (Local Branching adds a row) needs ``"whole"``, the default.
    resume : bool
        Keep the search of a solve of the whole problem (no fixings, no solution or node limit)
        that a stop request or its time limit ended: the next such solve continues it, SCIP's
        tree and LP as they were, its start handed to SCIP where it is better than SCIP's best,
        its time limit counted from there (its seed is not used: SCIP draws its random numbers
        from the first). A paused ``scip`` worker of a portfolio resumes so, where a new search
        would solve the root LP again (:mod:`lns.core.parallel.kinds.scip`).

    Attributes
    ----------
    name : str
        ``"scip"``.
    total_solve_time : float
        Seconds spent inside SCIP's ``optimize()`` over all solves so far.
    total_reset_time : float
        Seconds SCIP spent freeing each solve's transformed problem (``freeTransform``) and, every
        few solves, the memory it no longer uses
        (:class:`lns.core.solvers.scip.memory.MemoryRelease`), the
        price of re-solving one model; the rest of a run's wall time is the loop's own
        (Python) overhead.
    reduced_solves : int
        Solves that solved a reduced problem.
    """

    name = "scip"

    def __init__(
        self,
        problem: Problem,
        params: dict | None = None,
        threads: int = 1,
        model=None,
        grace: float = GRACE_SECONDS,
        sub_problem: str = "whole",
        resume: bool = False,
    ):
        super().__init__(f"the SCIP sub-solver of {problem.name}", grace)
        if sub_problem not in SUB_PROBLEMS:
            raise UnknownNameError("sub_problem", sub_problem, SUB_PROBLEMS)
        self.problem = problem
        self.params = {
            "parallel/maxnthreads": threads,
            "misc/catchctrlc": False,  # lns.core.interrupt handles Ctrl-C
            # Each solve starts fresh: SCIP would otherwise carry a solve's solutions into the next.
            "misc/transsolsorig": False,
            **(params or {}),
        }
        self._model: Any = None  # a pyscipopt.Model, untyped
        self._variables: list = []
        self._closed = False
        self._read_model = model if callable(model) else None
        if model is not None and self._read_model is None:
            self._adopt(model)
        self.sub_problem = sub_problem
        self.resume = resume
        self._kept = False  # the whole model holds a search that the next solve may continue
        self._reducer = Reducer(problem) if sub_problem != "whole" else None
        self._small: tuple | None = None  # the SCIP model of reduced problems and its recorder
        self._active: Any = None  # the pyscipopt.Model solving now
        self.total_solve_time = 0.0
        self.total_reset_time = 0.0
        self.reduced_solves = 0
        self._memory = MemoryRelease()  # keeps repeated solves from growing the process
        self._optimizing = False
        self._optimizing_lock = threading.Lock()  # no interrupt of a model that SCIP frees
        _LIVE.add(self)

    @property
    def model(self):
        """SCIP's model of the whole problem (``pyscipopt.Model``), built on first use: a run
        that solves reduced problems only never builds it. ``None`` once closed."""
        if self._model is None and not self._closed:
            read = self._read_model if self._read_model is not None else self.problem.to_scip
            self._adopt(read())
        return self._model

    @property
    def variables(self) -> list:
        """The variables of :attr:`model`, in the problem's order."""
        return self._variables if self.model is not None else []

    @property
    def has_model(self) -> bool:
        """Whether the whole problem's model is built (or was given)."""
        return self._model is not None

    def _adopt(self, model) -> None:
        """Use ``model`` as the whole problem's model: its bounds, parameters and recorder.

        Its variables are matched to the problem's by name (``getVars()`` lists binaries first,
        then integers, then continuous ones).
        """
        names, variables = list(self.problem.var_names), model.getVars()
        if [v.name for v in variables] != names:
            by_name = {v.name: v for v in variables}
            if not len(by_name) == len(variables) == len(names) or by_name.keys() != set(names):
                raise InvalidArgumentError(
                    f"the SCIP model of {self.problem.name} does not hold the problem's variables"
                )
            variables = [by_name[name] for name in names]
        self._lower = np.array([v.getLbOriginal() for v in variables])
        self._upper = np.array([v.getUbOriginal() for v in variables])
        self._lower_now, self._upper_now = self._lower.copy(), self._upper.copy()
        self._recorder = _prepared(model, self.params, _SolutionRecorder(self.problem, variables))
        self._model, self._variables = model, variables

    def close(self) -> None:
        """Free the SCIP instances now; the sub-solver must not be used after it. A no-op once
        done, and while an abandoned solve still runs in SCIP."""
        if self._closed or self._watchdog.busy:
            return
        _LIVE.discard(self)
        self._closed = True
        models: list[tuple] = [(self._model, self._recorder)] if self._model is not None else []
        for model, recorder in models + ([self._small] if self._small else []):
            recorder.model = model  # for SCIP's callbacks while it frees the model
            free = getattr(model, "free", None)  # in PySCIPOpt 6.3, not in every older one
            if free is not None:
                free()
        self._model = self._small = None

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
        on_first_lp: Callable[[float], None] | None = None,
        deadline_once_found: float | None = None,
    ) -> SolveOutcome:
        """Solve with the integer variables outside ``free`` held at their ``start`` values.

        See :meth:`lns.core.solvers.protocol.SubSolver.solve`. ``time_limit`` is clipped at 0.01
        from below; ``seed`` is SCIP's ``randomization/randomseedshift``. ``on_first_lp`` is
        called with the ``time.perf_counter()`` at which SCIP solved the first LP of this solve
        (not at all when presolving ends the solve, or the limits come first). Building a
        reduced problem counts in the time limit. ``deadline_once_found``: a ``perf_counter()``
        to which SCIP's own time limit is lowered at its first solution. A stop request
        (:meth:`stop`) also ends the LP that SCIP may be in
        (:mod:`lns.core.solvers.scip.lp_interrupt`).
        """
        if free is not None and start is None:
            fixed_indices(self.problem, free, start)  # raises: fixings need a start
        self._watchdog.arm()
        limits = (min(1e20, max(0.01, float(time_limit))), seed, solution_limit, node_limit)
        columns = self._reduced_columns(free, start)
        resumable = self.resume and free is None and solution_limit == node_limit == -1
        continues, self._kept = resumable and self._kept, False
        reduced: ReducedProblem | None = None
        model, recorder = self._solving_model(columns, continues)
        recorder.model, recorder.found, recorder.on_found = model, [], on_found
        recorder.on_first_lp, recorder.deadline_once_found = on_first_lp, deadline_once_found
        self._active = model
        began = time.perf_counter()

        def prepare():
            nonlocal reduced
            if continues:
                self._continue(model, limits[0], start)
            elif columns is None:
                self._prepare(model, self.variables, limits, start)
                self._fix(fixed_indices(self.problem, free, start), start)
            else:
                deadline = began + limits[0]
                assert self._reducer is not None and start is not None, "_reduced_columns"
                reduced = self._reducer.reduce(columns, start)
                recorder.variables = _load(model, reduced, lambda: self._stops(deadline))
                recorder.reduced = reduced
                left = max(0.01, deadline - time.perf_counter())
                self._prepare(model, recorder.variables, (left, *limits[1:]), reduced.start)

        try:
            return self._optimize(limits[0], prepare, model, recorder, resumable)
        except BuildStoppedError:
            status = SolveStatus.INTERRUPTED if self._watchdog.stop_requested else None
            return SolveOutcome(status or SolveStatus.TIME_LIMIT, [], time.perf_counter() - began)
        finally:
            # An abandoned solve must not reach the caller any more.
            recorder.on_found = recorder.on_first_lp = recorder.deadline_once_found = None
            if not self._watchdog.abandoned and not self._kept:
                self._reset(model)
                recorder.model = None
                if reduced is not None:
                    recorder.variables, recorder.reduced = [], None  # of a problem that is freed
                    if recorder.found and self._reducer is not None:
                        best = recorder.found[-1]
                        self._reducer.remember(best.x, best.change)

    def _stops(self, deadline: float) -> bool:
        """Whether building a reduced problem must stop: its solve's deadline came, or a stop
        was requested."""
        return self._watchdog.stop_requested or time.perf_counter() >= deadline

    def _reduced_columns(
        self, free: np.ndarray | None, start: np.ndarray | None
    ) -> np.ndarray | None:
        """The variables of this solve's reduced problem, or ``None`` where it solves the whole
        model."""
        if self._reducer is None or start is None or free is None:
            return None
        columns = self._reducer.free_columns(free)
        if len(columns) == self.problem.n_vars or not self._reducer.holds(start):
            return None  # nothing fixed, or a start to complete: only the whole model knows
        total = self.problem.matrix.nnz
        # The kept nonzeros are at most the free columns' (a sum over their pointers): counted,
        # at the cost of the free columns' entries, only where that sum alone does not decide.
        if self.sub_problem == "auto" and not (
            prefers_reduced(self._reducer.nonzeros(columns), total)
            or prefers_reduced(self._reducer.kept_nonzeros(columns), total)
        ):
            return None
        return columns

    def _solving_model(self, columns: np.ndarray | None, continues: bool) -> tuple:
        """The model of a solve and its recorder: the whole problem's (its last search freed,
        unless this solve continues it), or, for a reduced problem, :meth:`_small_model`."""
        if columns is not None:
            self.reduced_solves += 1
            return self._small_model()
        if not continues:
            self.model.freeTransform()
        return self.model, self._recorder

    def _small_model(self) -> tuple:
        """The SCIP instance that solves reduced problems, and its recorder; made on first use."""
        if self._small is None:
            model = Model(f"{self.problem.name}_neighborhood")
            recorder = _SolutionRecorder(self.problem, [])
            self._small = (model, _prepared(model, self.params, recorder))
        return self._small

    def _restore(self) -> None:
        self._kept = False
        if self._model is not None:
            self._model.freeTransform()
            self._set_bounds(self._lower, self._upper)

    def _prepare(self, model, variables: list, limits: tuple, start: np.ndarray | None) -> None:
        """Limits, seed and start of one solve."""
        time_limit, seed, solution_limit, node_limit = limits
        model.setRealParam("limits/time", time_limit)
        model.setIntParam("limits/solutions", solution_limit)
        model.setLongintParam("limits/nodes", node_limit)
        model.setIntParam("randomization/randomseedshift", int(seed))
        if start is not None:
            _add_start(model, variables, start)

    def _continue(self, model, time_limit: float, start: np.ndarray | None) -> None:
        """Limit and start of a solve that continues the kept search (:attr:`resume`)."""
        model.setRealParam("limits/time", model.getSolvingTime() + time_limit)
        resume_lp(model)
        if start is not None:
            objective = self.problem.objective_value(start)
            if self.problem.is_better(objective, model.getPrimalbound(), 0.0):
                _add_start(model, self.variables, start, solving=True)

    def _fix(self, fixed: np.ndarray, start: np.ndarray | None) -> None:
        lower, upper = self._lower.copy(), self._upper.copy()
        if len(fixed):
            assert start is not None, "fixed_indices refuses fixings without a start"
            lower[fixed] = upper[fixed] = start[fixed]
        self._set_bounds(lower, upper)

    def _optimize(
        self, time_limit: float, prepare, model, recorder, resumable: bool = False
    ) -> SolveOutcome:
        """Prepare and run SCIP under the watchdog and the interrupt guard; read how it ended.
        A ``resumable`` solve that a stop or its time limit ended keeps its search."""
        ended: dict = {}
        status, solve_time = self._watchdog.run_guarded(
            self,
            lambda: self._solve_and_free(prepare, model, ended, resumable),
            time_limit,
            self._interrupt,
        )
        solve_time = ended.get("solve_time", solve_time)  # SCIP's own, if it returned
        self.total_solve_time += solve_time
        found = list(recorder.found)
        if status is SolveStatus.ABANDONED:
            log.warning(
                "%s: SCIP ignored its time limit of %.2fs or a stop request; the solve was "
                "abandoned after %.2fs",
                self.problem.name,
                time_limit,
                solve_time,
            )
            return SolveOutcome(status, found, solve_time)
        status = status or scip_status(ended["status"])
        return SolveOutcome(status, found, solve_time, ended.get("dual_bound", float("nan")))

    def _solve_and_free(self, prepare, model, ended: dict, resumable: bool) -> None:
        """Prepare, solve, note how it ended, free the transformed problem and restore the
        bounds (not after a ``resumable`` solve that a stop or its time limit ended: its
        search is kept): all in the watchdog's worker thread.

        Memory that SCIP allocates in one thread and frees in another defeats the allocator's
        per-thread caches: with the preparation and ``freeTransform`` in the calling thread, the
        median tiny sub-solve of ``benchmarks/test_sub_solve_overhead.py`` took 3.8 times as long as
        all in one thread, with them in the worker 1.1 times.
        """
        prepare()
        began = time.perf_counter()
        with self._optimizing_lock:
            self._optimizing = True
        try:
            model.optimizeNogil()
        finally:
            with self._optimizing_lock:
                self._optimizing = False
        ended["solve_time"] = time.perf_counter() - began
        ended["status"] = model.getStatus()
        ended["dual_bound"] = model.getDualbound() if model.getStage() >= 3 else float("nan")
        if resumable and ended["status"] in ("userinterrupt", "timelimit"):
            self._kept = True
            return
        self._reset(model)
        began = time.perf_counter()
        self._memory.after_free_transform(model)
        self.total_reset_time += time.perf_counter() - began

    def _interrupt(self) -> None:
        """SCIP's ``interruptSolve`` while it solves (not while it frees: a SCIP error there),
        and the end of the LP it may be in (:mod:`lns.core.solvers.scip.lp_interrupt`)."""
        with self._optimizing_lock:
            if self._optimizing and self._active is not None:
                interrupt_lp(self._active)
                self._active.interruptSolve()

    def _reset(self, model) -> None:
        """Free the solve's transformed problem (a reduced model: the whole problem); restore
        the bounds unless in a session (a no-op after a solve that returned, which did it in
        the worker)."""
        began = time.perf_counter()
        if model is self._model:
            model.freeTransform()
            if not self._keep_fixings:
                self._set_bounds(self._lower, self._upper)
        else:
            model.freeProb()
        self.total_reset_time += time.perf_counter() - began

    def _set_bounds(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Give the model these bounds, calling SCIP only for those that differ from the current.

        Bounds are widened before they are tightened, so that ``lb <= ub`` holds after every call.
        """
        model, variables = self.model, self.variables
        steps = (
            (np.greater, model.chgVarUb, upper, self._upper_now),  # widen
            (np.less, model.chgVarLb, lower, self._lower_now),
            (np.greater, model.chgVarLb, lower, self._lower_now),  # tighten
            (np.less, model.chgVarUb, upper, self._upper_now),
        )
        for differs, change, target, now in steps:
            for j in np.flatnonzero(differs(target, now)).tolist():
                change(variables[j], float(target[j]))
                now[j] = target[j]


#: ``sub_problem="auto"`` solves a reduced problem when it keeps at most this share of the
#: constraint matrix's nonzeros ...
REDUCED_SHARE = 0.5
#: ... and the matrix has at least this many (below, the whole model's solve costs a few
#: milliseconds, less than building a reduced one).
REDUCED_MIN_NONZEROS = 10_000


def prefers_reduced(nonzeros: int, total: int) -> bool:
    """Whether ``sub_problem="auto"`` solves the reduced problem that keeps ``nonzeros`` of the
    ``total`` nonzeros of the constraint matrix
    (:meth:`lns.core.problem.reduced.Reducer.kept_nonzeros`: its free columns' nonzeros less
    those of the rows that become bounds).

    A reduced problem is built anew at each solve, in time proportional to its nonzeros; the
    whole model costs each solve time proportional to the whole matrix. Side by side on the same
    neighborhoods (``benchmarks/test_scaling.py``, ``rule``, on MIPLIB 2017 instances of the
    tuning part and generated ones) the reduced problem was the faster one where its share of
    the nonzeros was small, and not on problems so small that the whole model's solve took a few
    milliseconds (``benchmarks/results/sub_problem_rule.md``); the constants are
    :data:`REDUCED_SHARE` and :data:`REDUCED_MIN_NONZEROS`. Counting the nonzeros that the reduced
    problem keeps, rather than all those of its free columns, sends the half-free neighborhoods
    of graph problems (edges as rows) to the reduced problem, which was the faster one there (same
    benchmark, fraction 0.5).
    """
    return total >= REDUCED_MIN_NONZEROS and nonzeros <= REDUCED_SHARE * total


def _prepared(model, params: dict, recorder: _SolutionRecorder) -> _SolutionRecorder:
    """Quiet ``model``, give it ``params`` and include ``recorder``; returns the recorder."""
    model.hideOutput()
    for name, value in params.items():
        model.setParam(name, value)
    model.includeEventhdlr(recorder, "lns_recorder", "records new best solutions")
    recorder.model = None
    return recorder


def _load(model, reduced: ReducedProblem, stop: Callable[[], bool]) -> list:
    """Put ``reduced``'s problem into ``model`` (an instance without a problem); its variables.
    A large problem's build stops when ``stop()`` says so (:class:`BuildStoppedError`)."""
    model.createProbBasic(reduced.problem.name)
    return reduced.problem.add_to_scip(model, stop)


def _add_start(model, variables: list, start: np.ndarray, solving: bool = False) -> None:
    """Hand SCIP ``start`` (the incumbent) as a solution: the cutoff of the solve. ``solving``:
    SCIP is in its solving stage (a kept search), where a solution is given in the original
    variables and checked at once."""
    sol = model.createOrigSol() if solving else model.createSol()  # all zeros
    for j in np.flatnonzero(start).tolist():
        model.setSolVal(sol, variables[j], float(start[j]))
    if solving:
        model.trySol(sol, free=True)
    else:
        model.addSol(sol, free=True)
