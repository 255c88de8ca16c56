"""The LNS loop: select a neighborhood, solve the sub-problem, keep the result if it is better.

The loop is wired from small parts passed in (as the ``alns`` package's
``ALNS.iterate(initial, select, accept, stop)``): a selector
(:class:`lns.core.search.selection.Selector`), a sub-solver
(:class:`lns.core.solvers.protocol.SubSolver`),
the incumbent with its acceptance rule (:class:`lns.core.search.incumbent.Incumbent`), a size rule
(:class:`lns.core.search.neighborhood_size.AdaptiveSize`) and a stop rule
(:mod:`lns.core.search.stop`).
Every candidate solution goes through the incumbent, which checks it against the original
problem, so the loop never reports an infeasible point. The best solution survives a stop
rule, Ctrl-C (the interrupt guard or ``KeyboardInterrupt``), failing sub-solves and a
sub-solver that gave up (:attr:`SolveStatus.ABANDONED`), which the loop replaces where its caller
can build another.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from lns.core.errors import UnboundedProblemError
from lns.core.interrupt import active_guard
from lns.core.problem.mip import Problem
from lns.core.search.incumbent import Incumbent
from lns.core.search.neighborhood_size import AdaptiveSize
from lns.core.search.params import LoopParams, SizeParams, SubSolveParams
from lns.core.search.result import Callback, IterationRecord
from lns.core.search.selection import Neighborhood, SearchState, Selector
from lns.core.search.stall_search import StallSearch
from lns.core.search.stop import Stop, StopReason, StopState
from lns.core.search.whole_problem import WholeProblemAttempts
from lns.core.solvers.protocol import SEED_BOUND, SolveOutcome, SolveStatus, SubSolver

log = logging.getLogger("lns")


def as_status(value) -> SolveStatus:
    """A sub-solver's status as a :class:`SolveStatus` (an unknown word becomes ``OTHER``)."""
    try:
        return SolveStatus(value)
    except ValueError:
        return SolveStatus.OTHER


def size_rule_of(problem: Problem, params: SizeParams) -> AdaptiveSize:
    """The adaptive size rule of ``problem`` with the settings of ``params``."""
    return AdaptiveSize(
        len(problem.integer_indices),
        params.initial_fraction,
        params.growth,
        params.max_fraction,
        params.shrink,
        params.min_size,
    )


def stop_state(incumbent: Incumbent, iterations: int) -> StopState:
    """What the stop rules see after ``iterations`` iterations."""
    now = time.perf_counter()
    return StopState(
        now - incumbent.started,
        iterations,
        incumbent.objective,
        incumbent.problem.sense,
        now - incumbent.improved_at,
        iterations - incumbent.improved_iteration - 1,
    )


def run_lns(
    problem: Problem,
    selector: Selector,
    sub_solver: SubSolver,
    incumbent: Incumbent,
    *,
    rng: np.random.Generator,
    stop: Stop,
    callbacks: list[Callback],
    size_rule: AdaptiveSize | None = None,
    sub_solve: SubSolveParams | None = None,
    loop: LoopParams | None = None,
    exchange: Callable[[int], StopReason | None] | None = None,
    renew: Callable[[], SubSolver | None] | None = None,
) -> tuple[list, StopReason]:
    """Improve ``incumbent`` until ``stop`` fires, optimality is proven, or Ctrl-C.

    Parameters
    ----------
    problem : Problem
    selector : Selector
    sub_solver : SubSolver
        Solves each sub-problem (the integer variables outside the neighborhood fixed).
    incumbent : Incumbent
        Holds a first feasible solution; every solution found is offered to it.
    rng : numpy.random.Generator
        Drives the selector and the sub-solver's seeds.
    stop : Stop
        Asked before each iteration; its :meth:`Stop.remaining` time bounds each sub-solve.
    callbacks : list of Callback
        ``on_selection`` and ``on_iteration`` hooks.
    size_rule : AdaptiveSize, optional
        Default: :func:`size_rule_of` with the defaults of :class:`SizeParams`.
    sub_solve : SubSolveParams, optional
        Each sub-solve's limits (``time_limit``, ``node_limit``); its other fields are the
        sub-solver's own, already built. Default: :class:`SubSolveParams`'s defaults.
    loop : LoopParams, optional
        ``max_failures`` and ``stall_search`` (a local search at the stalls of a run with time
        limits: :mod:`lns.core.search.stall_search`); ``history_length`` and
        ``improvement_tol`` are the incumbent's, already built. Default: :class:`LoopParams`'s
        defaults.
    exchange : callable, optional
        Called before each iteration with the number of iterations done; it may change the
        incumbent (a portfolio worker shares its solutions and takes the others' there, see
        :mod:`lns.core.parallel.portfolio`) and returns a reason to stop, or ``None`` to go on.
    renew : callable, optional
        Called when the sub-solver gave up on a solve (SCIP went on past its time limit and the
        watchdog's grace, as on an oversubscribed machine: its model stays in SCIP's use): a new
        sub-solver, with which the loop goes on (its iterations, size and failures kept), or
        ``None`` to end with ``SUB_SOLVER_ABANDONED``. Without it the loop ends there.

    Returns
    -------
    records : list of IterationRecord
    stop_reason : StopReason
    """
    sub_solve = sub_solve or SubSolveParams()
    loop = loop or LoopParams()
    timed = sub_solve.node_limit < 0
    search = _Search(
        problem,
        selector,
        sub_solver,
        incumbent,
        rng,
        stop,
        callbacks,
        size_rule=size_rule or size_rule_of(problem, SizeParams()),
        whole_problem=WholeProblemAttempts(sub_solve.time_limit, timed=timed),
        sub_solve=sub_solve,
        max_failures=loop.max_failures,
        exchange=exchange,
        renew=renew,
        stall_search=StallSearch(problem, rng.spawn(1)[0]) if loop.stall_search and timed else None,
    )
    try:
        selector.setup(problem)
        with search.sessions:
            search.sessions.enter_context(sub_solver.session())
            reason = search.run()
    except KeyboardInterrupt:
        reason = StopReason.INTERRUPTED
    return search.records, reason


@dataclass
class _Search:
    """The state of one :func:`run_lns`: its parts, the records, the failure count and the
    sub-solvers' sessions."""

    problem: Problem
    selector: Selector
    sub_solver: SubSolver
    incumbent: Incumbent
    rng: np.random.Generator
    stop: Stop
    callbacks: list[Callback]
    size_rule: AdaptiveSize
    whole_problem: WholeProblemAttempts
    sub_solve: SubSolveParams
    max_failures: int
    exchange: Callable[[int], StopReason | None] | None = None
    renew: Callable[[], SubSolver | None] | None = None
    stall_search: StallSearch | None = None
    records: list = field(default_factory=list)
    failures: int = 0
    #: The last iteration searched its neighborhood at the size cap completely, improving nothing.
    stalled: bool = False
    #: The sessions of the sub-solvers used (one more for each renewed), ended with the run.
    sessions: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def run(self) -> StopReason:
        """Iterate until a reason to stop; returns it."""
        guard = active_guard()
        while True:
            if guard is not None and guard.requested:
                return StopReason.INTERRUPTED
            reason = self.exchange(len(self.records)) if self.exchange is not None else None
            if reason is None:
                reason = self.stop.fired(stop_state(self.incumbent, len(self.records)))
            if reason is None:
                reason = self._iteration()
            if reason is not None:
                return reason

    def _time_left(self) -> float:
        return self.stop.remaining(stop_state(self.incumbent, len(self.records)))

    def _current(self) -> tuple[np.ndarray, float]:
        """The incumbent's solution and objective (the loop starts from one and keeps one)."""
        x, objective = self.incumbent.x, self.incumbent.objective
        assert x is not None and objective is not None, "run_lns needs an incumbent solution"
        return x, objective

    def _iteration(self) -> StopReason | None:
        """One select / sub-solve / record step; a reason to stop after it, or ``None``."""
        iteration = len(self.records)
        if self.stall_search is not None:
            self.stall_search.step(self.incumbent, self._time_left(), iteration)
        whole_limit = self.whole_problem.limit(self.incumbent.elapsed()) if self.stalled else None
        target = self.size_rule.size if whole_limit is None else len(self.problem.integer_indices)
        began = time.perf_counter()
        neighborhood = self._select(iteration, target)
        select_time = time.perf_counter() - began
        before = self._current()[1]
        size = len(neighborhood.free)
        arm = neighborhood.info.get("arm")  # the adaptive selector's choice, for progress lines
        improved = neighborhood.solution is not None and self.incumbent.offer(
            neighborhood.solution,
            found_at=time.perf_counter(),
            source=_source("selector", arm),
            iteration=iteration,
            size=size,
        )
        time_left = self._time_left()
        if time_left <= 0:
            return self.stop.fired(stop_state(self.incumbent, iteration)) or StopReason.TIME_LIMIT
        status, solve_time, found = self._sub_solve(
            iteration, neighborhood, min(time_left, whole_limit or math.inf)
        )
        if self.failures >= self.max_failures:
            return StopReason.FAILURES
        improved |= found
        record = IterationRecord(
            iteration=iteration,
            selector=self.selector.name,
            neighborhood_size=size,
            target_size=target,
            status=status,
            select_time=select_time,
            solve_time=solve_time,
            objective_before=before,
            objective_after=self._current()[1],
            improved=improved,
            time=self.incumbent.elapsed(),
        )
        self.records.append(record)
        self.selector.update(record)
        for callback in self.callbacks:
            callback.on_iteration(record)
        self._adapt(improved, status, solve_time, whole_limit)
        return self._verdict(status, nothing_fixed=self._frees_all(neighborhood.free))

    def _adapt(
        self, improved: bool, status: SolveStatus, solve_time: float, whole_limit: float | None
    ) -> None:
        """Adapt the size after an iteration, or count it as an attempt on the whole problem."""
        if whole_limit is not None:
            abandoned = status is SolveStatus.ABANDONED
            self.whole_problem.attempted(solve_time, whole_limit, abandoned)
            self.stalled = False
            return
        self.size_rule.update(improved, timed_out=status.out_of_time)
        self.stalled = self.size_rule.at_cap and status.proven and not improved

    def _select(self, iteration: int, target: int) -> Neighborhood:
        x, objective = self._current()
        deadline = time.perf_counter() + self._time_left()
        state = SearchState(
            self.problem,
            x,
            objective,
            self.incumbent.history,
            iteration,
            self.size_rule.at_cap,
            deadline,
        )
        neighborhood = self.selector(state, target, self.rng)
        for callback in self.callbacks:
            callback.on_selection(state, target, neighborhood)
        return neighborhood

    def _frees_all(self, free: np.ndarray) -> bool:
        """Whether the neighborhood ``free`` holds every integer variable."""
        n_integer = len(self.problem.integer_indices)
        return len(free) >= n_integer and len(np.unique(free)) == n_integer

    def _sub_solve(
        self, iteration: int, neighborhood: Neighborhood, time_left: float
    ) -> tuple[SolveStatus, float, bool]:
        """Solve the sub-problem; returns its status, its seconds, and whether it improved."""
        accepted = []
        size = len(neighborhood.free)

        source = _source("subsolve", neighborhood.info.get("arm"))

        def offer(found):
            accepted.append(
                self.incumbent.offer(
                    found.x,
                    found_at=found.time,
                    source=source,
                    iteration=iteration,
                    size=size,
                    change=found.change,
                )
            )

        try:
            outcome: SolveOutcome = self.sub_solver.solve(
                time_limit=min(self.sub_solve.time_limit, time_left, _cap(neighborhood)),
                seed=int(self.rng.integers(SEED_BOUND)),
                free=neighborhood.free,
                start=self.incumbent.x,
                node_limit=self.sub_solve.node_limit,
                on_found=offer,
            )
        except Exception as error:  # a failing sub-solve must not lose the incumbent
            self.failures += 1
            log.warning(
                "%s: sub-solve of iteration %d failed: %s", self.problem.name, iteration, error
            )
            return SolveStatus.ERROR, 0.0, False
        self.failures = 0
        return as_status(outcome.status), outcome.solve_time, any(accepted)

    def _verdict(self, status: SolveStatus, nothing_fixed: bool) -> StopReason | None:
        """The reason to stop that a sub-solve's status gives, or ``None``."""
        if status is SolveStatus.ABANDONED:
            return self._renewed()
        if status is SolveStatus.INTERRUPTED:
            return StopReason.INTERRUPTED
        if status in (SolveStatus.UNBOUNDED, SolveStatus.INFEASIBLE_OR_UNBOUNDED):
            # A restriction with a feasible point is unbounded only if the problem is.
            where = self.problem.source or self.problem.name
            raise UnboundedProblemError(f"{where}: the sub-solver proved the problem unbounded")
        if nothing_fixed and status in (SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE):
            return StopReason.OPTIMAL  # nothing beats the incumbent, the solve's cutoff
        return None

    def _renewed(self) -> StopReason | None:
        """Go on with a new sub-solver in place of one that gave up (``renew``), or the reason
        to end."""
        fresh = self.renew() if self.renew is not None else None
        if fresh is None:
            log.warning(
                "%s: the sub-solver gave up; the run ends with the incumbent", self.problem.name
            )
            return StopReason.SUB_SOLVER_ABANDONED
        self.sub_solver = fresh  # renew logs the replacement
        self.sessions.enter_context(fresh.session())
        return None


def _cap(neighborhood: Neighborhood) -> float:
    """The seconds a neighborhood's selector allows its sub-solve (infinite: no cap)."""
    return math.inf if neighborhood.time_limit is None else neighborhood.time_limit


def _source(kind: str, arm: str | None) -> str:
    """The word of an improvement (``"subsolve"``), with the arm that chose its neighborhood."""
    return kind if arm is None else f"{kind}, arm {arm}"
