"""Start strategies: how the first incumbent of an LNS run is found.

SCIP's first solution of a generated independent set instance is trivial (the empty set); plain
SCIP on ``mis_small`` (seed 7) found objectives 0, 17, 1655, 1933 at 2.5, 4.6, 5.8 and 7.4 s (a
loaded machine). A start that stops at the first solution leaves the improvement to the LNS; a
start strategy may instead let the solve of the whole problem go on while its solutions come
quickly, and end it by a stall rule (:class:`StallRule`), the LNS then starting from the best.

A strategy is a small object, called with a :class:`StartTask` (the problem, the run's
sub-solver, a time limit, a seed and the callback that offers each solution to the incumbent),
so that a worker of a parallel run can run one strategy while another worker runs another:

- :class:`FirstSolutionStart` stops the run's own sub-solver at its first solution (``"first"``,
  the behaviour of earlier versions);
- :class:`ScipStart` solves with SCIP under the stall rule (``"improving"``), or with an
  emphasis setting (``"feasibility"``: SCIP's feasibility emphasis, aggressive primal
  heuristics);
- :class:`CpSatStart` solves the whole (pure-integer) problem with CP-SAT (``"cpsat"``).

``lns-bench +experiment=fast_start`` compares them (time to the first solution, time to within
1% of the best objective, primal integral), random LNS side by side at 30 s on ``mis``, ``mvc``,
``sc``, ``ca`` small, air05, seymour and glass-sc, on a 2-core machine shared with other jobs
(first solutions came up to 20 s late: noisy). Shifted geometric mean (shift 1) of the primal
integral over 21 runs (seeds 0 and 1 with the default stall rule, seed 0 with ``0.5 1 0.1``):
``"first"`` 7.38 s, ``"improving"`` 7.52 s, ``"feasibility"`` 6.84 s; ``"first"`` had the
smallest integral in 12 runs, ``"feasibility"`` in 5. The default, ``"feasibility"``, owes its
lead to air05 (integral 6.2 to 6.6 s against 9.5 to 27 s from SCIP's first solution); elsewhere
the differences were within the noise. ``"cpsat"`` found no solution in 30 s on ``mvc``, ``sc``
and ``ca``, and its first one last on the others.

The stall window opens at SCIP's first LP (``StallRule.after_root``): on 12 tuning instances at
60 s (2 generated set cover and 1 independent set instance, 9 MIPLIB 2017 instances), side by
side, the shifted geometric mean primal integral was 3.52 s with it and 4.30 s without; set
cover 6.49 and 9.61 s against 21.85 and 24.95 s, the others within 1.5 s of each other
(``benchmarks/results/fast_start_after_root.json``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from lns.core.errors import UnknownNameError
from lns.core.interrupt import active_guard
from lns.core.problem.mip import Problem
from lns.core.search.params import STARTS
from lns.core.solvers.protocol import (
    FoundSolution,
    OnFound,
    SolveOutcome,
    SolveStatus,
    SubSolver,
)
from lns.core.solvers.scip.subsolver import ScipSubSolver

log = logging.getLogger("lns")


@dataclass(frozen=True)
class StallRule:
    """When a start solve that still finds solutions should end.

    With the first solution found ``t1`` seconds after the solve began, the solve ends once no
    new best solution came for ``max(floor, factor * t1)`` seconds, or once ``share`` of its time
    limit ``T`` is spent, whichever comes first:

    .. math:: t_\\mathrm{end} = \\min\\bigl(\\max(t_\\mathrm{last}, t_\\mathrm{LP})
        + \\max(f, c\\, t_1),\\; s\\, T\\bigr).

    The stall window scales with ``t1`` because a problem whose first solution takes long also
    takes long between good ones; the share keeps most of a short budget for the LNS. Before the
    first solution the rule does not stop the solve (it runs to its time limit).

    With ``after_root``, the window of a SCIP solve opens no earlier than SCIP's first LP
    solution ``t_LP`` (until then only the share ends it): SCIP's first solutions come from its
    trivial heuristics during presolving, the good ones from the heuristics that read the root
    LP. On a generated set cover instance (4000 columns, 5000 rows) SCIP found objective 200369
    at 0.5 s, 3217 after presolving (5.7 s) and 197 right after its first LP (6.9 s); the
    window without ``after_root`` closed at 1.5 s, during presolving, with the trivial solution.

    Attributes
    ----------
    floor : float
        Seconds without a new solution that always count as progress (``f``).
    factor : float
        The stall window in multiples of the time to the first solution (``c``).
    share : float
        Largest fraction of the solve's time limit the start may use once it has a solution.
    after_root : bool
        Open the window of a SCIP solve only once its first LP is solved.
    """

    floor: float = 1.0
    factor: float = 2.0
    share: float = 0.2
    after_root: bool = True

    def cap(self, began: float, time_limit: float) -> float:
        """The ``time.perf_counter()`` past which a solve that has a solution never goes: its
        ``share`` of ``time_limit`` after it ``began``."""
        return began + self.share * time_limit

    def end(
        self,
        began: float,
        first: float | None,
        last: float | None,
        time_limit: float,
        first_lp: float | None = -math.inf,
    ) -> float:
        """The ``time.perf_counter()`` at which to stop, given when the solve ``began``, when its
        ``first`` and ``last`` solutions came (``None``: none yet, never stop) and when its
        ``first_lp`` was solved (``None``: not yet, the window is not open; the default: a solve
        without this phase)."""
        if first is None:
            return math.inf
        assert last is not None, "a solve with a first solution has a last one"
        cap = self.cap(began, time_limit)
        if first_lp is None:
            return cap
        window = max(self.floor, self.factor * (first - began))
        return min(max(last, first_lp) + window, cap)


@dataclass
class StartTask:
    """What a start strategy is given.

    Attributes
    ----------
    problem : Problem
    sub_solver : SubSolver
        The run's sub-solver (a strategy may use it, or solve with its own).
    time_limit : float
        Seconds the start may take (``math.inf``: no limit).
    seed : int
        The solver's random seed.
    on_found : callable
        Offers each solution to the run's incumbent, as it is found.
    scip_params : dict, optional
        The run's SCIP parameters, for a strategy that builds its own SCIP model.
    """

    problem: Problem
    sub_solver: SubSolver
    time_limit: float
    seed: int
    on_found: OnFound
    scip_params: dict | None = None


class StartStrategy(Protocol):
    """Finds start solutions: ``strategy(task) -> SolveOutcome``, reporting each through
    ``task.on_found``. The outcome's status is ``TIME_LIMIT`` when the strategy's own rule ended
    the solve, ``INTERRUPTED`` only for a stop from outside (Ctrl-C, a signal)."""

    @property
    def name(self) -> str:
        """The strategy's name, e.g. ``"feasibility"``."""
        ...

    def __call__(self, task: StartTask) -> SolveOutcome: ...


class _StallWatch:
    """Stops ``solvers`` by ``rule`` from a timer thread, the rule applied to their solutions
    together; its :meth:`found` is each solve's ``on_found``, passing each solution on to
    ``forward`` (one at a time); with ``wait_for_lp`` the window opens at :meth:`first_lp`, a
    SCIP solve's ``on_first_lp``."""

    def __init__(
        self,
        solvers: list[SubSolver],
        rule: StallRule,
        time_limit: float,
        forward: OnFound,
        wait_for_lp: bool,
    ):
        self.solvers, self.rule, self.time_limit = solvers, rule, time_limit
        self.forward = forward
        self.began = time.perf_counter()
        self.first: float | None = None
        self.last: float | None = None
        self.lp_solved: float | None = None if wait_for_lp else -math.inf
        self.stopped = False
        self.ended_by: int | None = None
        self._news = threading.Condition()
        self._forwarding = threading.Lock()
        self._done = False
        self._thread = threading.Thread(target=self._watch, name="lns-start-stall", daemon=True)

    def __enter__(self) -> _StallWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.end()
        self._thread.join()

    def found(self, found: FoundSolution) -> None:
        with self._news:
            self.first = found.time if self.first is None else self.first
            self.last = found.time
            self._news.notify()
        with self._forwarding:
            self.forward(found)

    def first_lp(self, when: float) -> None:
        with self._news:
            self.lp_solved = when if self.lp_solved is None else self.lp_solved
            self._news.notify()

    def end(self, racer: int | None = None) -> None:
        """End the watch (racer ``racer``'s solve ended: the others are stopped)."""
        with self._news:
            if not self._done:
                self.ended_by = racer
            self._done = True
            self._news.notify()

    def _watch(self) -> None:
        with self._news:
            while not self._done:
                end = self.rule.end(
                    self.began, self.first, self.last, self.time_limit, self.lp_solved
                )
                wait = end - time.perf_counter()
                if wait <= 0:
                    self.stopped = True
                    break
                self._news.wait(None if math.isinf(wait) else wait)
        for solver in self.solvers:
            solver.stop()


def solve_until_stall(solver: SubSolver, task: StartTask, rule: StallRule) -> SolveOutcome:
    """Solve the whole problem with ``solver`` until ``rule`` ends it (or its time limit): a
    race of one (:func:`race_until_stall`)."""
    return race_until_stall([solver], task, rule)


def race_until_stall(solvers: list[SubSolver], task: StartTask, rule: StallRule) -> SolveOutcome:
    """Solve the whole problem with every solver of ``solvers`` at once (the first in this
    thread, each other one in a thread of its own) until ``rule``, applied to their solutions
    together, ends them, or until one of them ends (its time limit, or a proof: the others are
    then stopped).

    The rule's ``after_root`` applies when a :class:`ScipSubSolver` races (other solvers report
    no first LP). A SCIP racer also ends by its own time limit at the rule's cap once it has a
    solution (``deadline_once_found``): it ends by its own clock, with no stop request
    to wait for.

    The outcome holds every racer's solutions, in time order; its status is a proof if a racer
    proved optimality or infeasibility, else ``ABANDONED`` if the first solver's solve was
    abandoned (a solve that ignores a stop request for
    :data:`lns.core.solvers.watchdog.STOP_PATIENCE_SECONDS` is abandoned, and its solver with
    it: the caller then needs a new sub-solver), else ``INTERRUPTED`` after a stop signal caught
    by the run's interrupt guard, else ``TIME_LIMIT``.
    """
    scip = [solver for solver in solvers if isinstance(solver, ScipSubSolver)]
    wait_for_lp = rule.after_root and bool(scip)
    outcomes: list[SolveOutcome | None] = [None] * len(solvers)
    with _StallWatch(solvers, rule, task.time_limit, task.on_found, wait_for_lp) as watch:
        cap = rule.cap(watch.began, task.time_limit)

        def race(i: int) -> None:
            solver = solvers[i]
            try:
                if isinstance(solver, ScipSubSolver):
                    outcomes[i] = solver.solve(
                        time_limit=task.time_limit,
                        seed=task.seed,
                        on_found=watch.found,
                        on_first_lp=watch.first_lp if wait_for_lp else None,
                        deadline_once_found=cap if math.isfinite(cap) else None,
                    )
                else:
                    outcomes[i] = solver.solve(
                        time_limit=task.time_limit, seed=task.seed, on_found=watch.found
                    )
            finally:
                ended = outcomes[i]
                if i == 0 or ended is None or _ends_race(ended.status):
                    watch.end(i)

        others = [
            threading.Thread(target=race, args=(i,), name=f"lns-start-race-{i}", daemon=True)
            for i in range(1, len(solvers))
        ]
        for thread in others:
            thread.start()
        race(0)
        for thread in others:
            thread.join()
    return _race_outcome(outcomes, watch.stopped or watch.ended_by not in (None, 0))


def _ends_race(status: SolveStatus) -> bool:
    """A racer that ended with ``status`` ended on its own (a proof or its time limit), not by a
    stop or a problem it cannot take."""
    return status.proven or status is SolveStatus.TIME_LIMIT


def _race_outcome(outcomes: list[SolveOutcome | None], race_stopped: bool) -> SolveOutcome:
    """The first racer's outcome with every racer's solutions, and a status as
    :func:`race_until_stall` says; ``race_stopped``: the race itself stopped the first racer
    (its rule, or another racer's end)."""
    first = outcomes[0]
    assert first is not None, "the first racer runs in the calling thread"
    ended = [outcome for outcome in outcomes if outcome is not None]
    found = sorted((f for outcome in ended for f in outcome.found), key=lambda f: f.time)
    proofs = [outcome.status for outcome in ended if outcome.status.proven]
    guard = active_guard()
    outside_stop = guard is not None and guard.requested
    status = first.status
    if proofs:
        status = proofs[0]
    elif status is SolveStatus.INTERRUPTED and race_stopped and not outside_stop:
        status = SolveStatus.TIME_LIMIT
    return dataclasses.replace(first, status=status, found=found)


@dataclass(frozen=True)
class FirstSolutionStart:
    """The run's own sub-solver on the whole problem, until its first solutions (``"first"``).

    Parameters
    ----------
    solution_limit : int
        Solutions after which the start ends (-1: at its time limit only).
    """

    solution_limit: int = 1
    name = "first"

    def __call__(self, task: StartTask) -> SolveOutcome:
        return task.sub_solver.solve(
            time_limit=task.time_limit,
            seed=task.seed,
            solution_limit=self.solution_limit,
            on_found=task.on_found,
        )


@dataclass(frozen=True)
class ScipStart:
    """SCIP until the stall rule ends it (``"improving"``; with feasibility emphasis
    ``"feasibility"``).

    It solves with the run's sub-solver when that is SCIP (a model of its own would be built
    first: 2.5 s for a small generated independent set instance on a loaded machine), with the
    emphasis set for this solve only, and with a new :class:`ScipSubSolver` otherwise.

    Parameters
    ----------
    stall : StallRule
    emphasis : str or None
        A member of ``pyscipopt.SCIP_PARAMEMPHASIS`` (``"FEASIBILITY"``: aggressive primal
        heuristics, fast separation; see SCIP's ``SCIPsetEmphasis``), or ``None`` for the
        model's own settings. The run's SCIP parameters are set again after it.
    """

    stall: StallRule = StallRule()
    emphasis: str | None = None

    @property
    def name(self) -> str:
        return "improving" if self.emphasis is None else self.emphasis.lower()

    def __call__(self, task: StartTask) -> SolveOutcome:
        began = time.perf_counter()
        solver = task.sub_solver
        if not isinstance(solver, ScipSubSolver):
            solver = ScipSubSolver(task.problem, task.scip_params)
        task = _less_time(task, began)
        if self.emphasis is None:
            return solve_until_stall(solver, task, self.stall)
        return _with_emphasis(
            solver,
            self.emphasis,
            task.scip_params,
            lambda: solve_until_stall(solver, task, self.stall),
        )


def _with_emphasis(
    solver: ScipSubSolver, emphasis: str, params: dict | None, solve: Callable[[], SolveOutcome]
) -> SolveOutcome:
    """``solve()`` with SCIP's ``emphasis`` (then ``params``) set on ``solver``'s model; the
    changed parameters are restored after it, unless the solve was abandoned (its model is then
    still in use) or raised."""
    from pyscipopt import SCIP_PARAMEMPHASIS

    model = solver.model
    before = model.getParams()
    model.setEmphasis(getattr(SCIP_PARAMEMPHASIS, emphasis), quiet=True)
    model.setParams(params or {})
    outcome = None
    try:
        outcome = solve()
        return outcome
    finally:
        if outcome is not None and outcome.status.usable_after:
            after = model.getParams()
            model.setParams({name: value for name, value in before.items() if after[name] != value})


@dataclass(frozen=True)
class CpSatStart:
    """CP-SAT (one search worker) on the whole pure-integer problem, under a stall rule.

    Raises
    ------
    UnsupportedProblemError
        From :class:`lns.core.solvers.cpsat.subsolver.CpSatSubSolver`: continuous variables, or
        bounds CP-SAT cannot take.
    """

    stall: StallRule = StallRule()
    name = "cpsat"

    def __call__(self, task: StartTask) -> SolveOutcome:
        from lns.core.solvers.cpsat.subsolver import CpSatSubSolver

        began = time.perf_counter()
        solver = CpSatSubSolver(task.problem)
        return solve_until_stall(solver, _less_time(task, began), self.stall)


@dataclass(frozen=True)
class RacingStart:
    """SCIP with feasibility emphasis and CP-SAT (one search worker) on the whole problem at
    once, under one stall rule over their solutions together (``"race"``).

    The run's sub-solver (SCIP) races in the calling thread; CP-SAT builds its model and solves
    in a child process (:class:`lns.core.solvers.cpsat.racer.CpSatProcess`; a race takes two cores
    while it lasts). A racer that ends on its own (a proof, its time limit) ends the race.
    CP-SAT takes part only in pure-integer problems it can model; otherwise this is the
    ``"feasibility"`` start. On the 12 pure-integer tuning instances at 30 s, one worker, the
    sgm primal integral was 4.10 s against the feasibility start's 4.70 s, race lowest on 8
    (``benchmarks/results/fast_start_race_process.json``; CP-SAT in a thread of this process
    instead: 6.25 against 5.05).
    """

    stall: StallRule = StallRule()
    name = "race"

    def __call__(self, task: StartTask) -> SolveOutcome:
        from lns.core.solvers.cpsat.racer import CpSatProcess

        began = time.perf_counter()
        scip = task.sub_solver
        if not isinstance(scip, ScipSubSolver):
            scip = ScipSubSolver(task.problem, task.scip_params)
        racers: list[SubSolver] = [scip]
        problem = task.problem
        if len(problem.integer_indices) == problem.n_vars:
            racers.append(CpSatProcess(problem))
        task = _less_time(task, began)
        return _with_emphasis(
            scip,
            "FEASIBILITY",
            task.scip_params,
            lambda: race_until_stall(racers, task, self.stall),
        )


def _less_time(task: StartTask, began: float) -> StartTask:
    """``task`` with the seconds since ``began`` (building a solver) taken off its time limit."""
    spent = time.perf_counter() - began
    return dataclasses.replace(task, time_limit=max(0.0, task.time_limit - spent))


def make_start(
    name: str, problem: Problem, *, stall: StallRule, solution_limit: int = 1
) -> StartStrategy:
    """The start strategy named ``name`` (one of :data:`~lns.core.search.params.STARTS`) for
    ``problem``.

    ``"cpsat"`` on a problem with continuous variables falls back to ``"improving"``.

    Raises
    ------
    UnknownNameError
        ``name`` is not in :data:`~lns.core.search.params.STARTS`.
    """
    if name not in STARTS:
        raise UnknownNameError("start", name, STARTS)
    if name == "cpsat" and len(problem.integer_indices) < problem.n_vars:
        log.info("%s has continuous variables: start 'improving' instead of 'cpsat'", problem.name)
        name = "improving"
    if name == "first":
        return FirstSolutionStart(solution_limit)
    if name == "cpsat":
        return CpSatStart(stall)
    if name == "race":
        return RacingStart(stall)
    return ScipStart(stall, "FEASIBILITY" if name == "feasibility" else None)
