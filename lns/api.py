"""``solve()`` and the baselines: the calls that read a problem and improve it within a budget.

:func:`solve` runs large neighborhood search with a selector; :func:`solve_scip`,
:func:`solve_cpsat` and :func:`solve_localmip` run plain SCIP, OR-Tools CP-SAT and Local-MIP on
the whole problem under the same budget, for like-for-like comparisons. All four take the
problem, a budget (``stop``), a ``seed`` and a start, and return the same
:class:`lns.core.search.result.Result`; the settings of the search are one
:class:`lns.params.SolveParams` (as PyVRP's ``solve(data, stop, seed, params=...)``).
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pyscipopt import Model

from instances.bundled import resolve_instance
from lns.core.baselines.cpsat import run_cpsat
from lns.core.errors import (
    InfeasibleProblemError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    UnboundedProblemError,
)
from lns.core.interrupt import InterruptGuard, active_guard
from lns.core.parallel.kinds.local_search import run_local_mip
from lns.core.parallel.params import ALL_CORES
from lns.core.parallel.plan import Plan, check_portfolio, make_plan
from lns.core.parallel.portfolio import SYNC_EVERY, Portfolio, SettleAtFirstSolution
from lns.core.parallel.prior import load_prior
from lns.core.problem.mip import Problem, problem_from_scip, read_problem_and_model
from lns.core.problem.solu_file import known_objective
from lns.core.problem.solution_file import check_writable
from lns.core.problem.validation import check_integer, check_run_arguments
from lns.core.search.greedy_start import GreedyFirst
from lns.core.search.incumbent import ImprovingOnly, Incumbent
from lns.core.search.loop import as_status, run_lns, size_rule_of, stop_state
from lns.core.search.params import SubSolveParams
from lns.core.search.progress import ImprovementLogger
from lns.core.search.result import Callback, Result, build_result
from lns.core.search.selection import FunctionSelector, Selector
from lns.core.search.start import StallRule, StartStrategy, StartTask, make_start
from lns.core.search.stop import Stop, StopReason, budget, time_limit_of
from lns.core.search.trivial_start import TrivialFirst
from lns.core.search.warm_start import warm_start
from lns.core.solvers.protocol import SEED_BOUND, SolveStatus, SubSolver
from lns.core.solvers.scip.subsolver import ScipSubSolver
from lns.core.solvers.watchdog import CLEAN_UP_SHARE
from lns.params import SolveParams
from lns.registry import make_selector

log = logging.getLogger("lns")

#: Seconds of the budget when ``stop`` is not given.
DEFAULT_TIME_LIMIT = 60.0

Instance = str | Path | Problem | Model
Start = str | Path | dict | np.ndarray | None


def solve(
    instance: Instance,
    selector: str | Selector | Callable = "random",
    stop: Stop | float | None = None,
    *,
    seed: int = 0,
    params: SolveParams | None = None,
    initial_solution: Start = None,
    callbacks: list[Callback] | None = None,
    out: str | Path | None = None,
    optimum: float | None = None,
) -> Result:
    """Find a good solution of a MIP within a budget by large neighborhood search.

    Parameters
    ----------
    instance : str, pathlib.Path, Problem or pyscipopt.Model
        A file SCIP reads (``.mps``, ``.mps.gz``, ``.lp``, ...), the name of a bundled MIPLIB
        instance (``"air05"``), or a problem built in code (a :class:`Problem`, or a SCIP model,
        which is copied and left as it is). A problem without integer variables is solved by
        plain SCIP (``stop_reason="no_integer_variables"``).
    selector : str, Selector or callable
        Neighborhood selector, by registry name (see :data:`lns.registry.SELECTORS`; with
        constructor arguments: :func:`lns.registry.make_selector`), as an object, or as a plain
        function ``(state, size, rng) -> Neighborhood`` (see
        :class:`lns.core.search.selection.FunctionSelector`).
    stop : Stop, float or None
        The budget: a stop rule (:mod:`lns.core.search.stop`, e.g. ``MaxIterations(100) |
        NoImprovement(seconds=20)``), asked between iterations and used as it is; or seconds of
        wall-clock time for everything, reading the file included (``budget(seconds)``, which
        keeps :data:`lns.core.search.stop.DEADLINE_MARGIN` in hand; ``inf``: no limit);
        ``None``: :data:`DEFAULT_TIME_LIMIT` seconds. With an iteration limit and a node limit
        per sub-solve (``SubSolveParams(node_limit=...)``) instead of a time limit, runs repeat
        exactly.
    seed : int
        Drives every random choice: the selector's and the sub-solver's per solve.
    params : SolveParams, optional
        The settings of the search: neighborhood size, start, sub-solver and its limits, loop,
        worker processes (:class:`lns.params.SolveParams`; default: every group's defaults,
        one process).
    initial_solution : path, dict or array, optional
        A start instead of the first solution of ``params.start``: a ``.sol`` file,
        ``{name: value}`` or a value vector, possibly partial (NaN: unassigned); a partial or
        infeasible start is completed by a sub-solve (see
        :func:`lns.core.search.warm_start.warm_start`).
    callbacks : list of Callback, optional
        Hooks called on each improvement, selection and iteration (with 2 workers or more: on
        each improvement only; the iterations run in the workers).
    out : path, optional
        Where to write the best solution (``.sol``), also after a time limit or Ctrl-C.
    optimum : float, optional
        Known optimal value, for the gap in progress lines; read from a ``.solu`` file next to
        the instance when not given.

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
        ``initial_solution`` is unreadable or names variables the problem lacks.
    InvalidArgumentError, UnknownNameError
        A bad argument, named, before anything is read.

    See Also
    --------
    solve_scip, solve_cpsat, solve_localmip : The baselines, with the same budget and result.
    """
    params = _check_params(params)
    rule = _stop_rule(stop, seed, optimum)
    workers, mix = _workers(params, rule)
    _check_out(out)
    selector = _selector(selector)
    run = _begin(instance, "lns", rule, seed, params, initial_solution, callbacks, optimum)
    if not len(run.problem.integer_indices):
        log.info("%s has no integer variables: solved directly by SCIP", run.problem.name)
        run.method = "scip"
        return _execute(run, seed, out, lambda: _no_integers(run))
    selector.check(run.problem)  # e.g. a learned selector's checkpoint, before any solve
    if workers > 1:
        return _execute(run, seed, out, lambda: _parallel_lns(run, selector, workers, mix))
    return _execute(run, seed, out, lambda: _lns(run, selector))


def solve_scip(
    instance: Instance,
    stop: Stop | float | None = None,
    *,
    seed: int = 0,
    scip_params: dict | None = None,
    initial_solution: Start = None,
    callbacks: list[Callback] | None = None,
    out: str | Path | None = None,
    optimum: float | None = None,
) -> Result:
    """Plain SCIP on the whole problem under the same budget as :func:`solve`, with SCIP's
    default settings and the same result and trajectory: the like-for-like baseline.

    ``scip_params`` are SCIP parameters over its defaults. ``initial_solution`` is SCIP's
    start solution (a partial one completed first, as in :func:`solve`). The other parameters,
    the result and the errors are those of :func:`solve`; ``result.dual_bound`` is SCIP's.
    """
    rule = _stop_rule(stop, seed, optimum)
    params = SolveParams(sub_solve=SubSolveParams(scip_params=scip_params))
    _check_out(out)
    run = _begin(instance, "scip", rule, seed, params, initial_solution, callbacks, optimum)
    return _execute(run, seed, out, lambda: _plain_scip(run))


def solve_cpsat(
    instance: Instance,
    stop: Stop | float | None = None,
    *,
    seed: int = 0,
    num_workers: int = 2,
    max_scale_exponent: int = 6,
    initial_solution: Start = None,
    callbacks: list[Callback] | None = None,
    out: str | Path | None = None,
    optimum: float | None = None,
) -> Result:
    """OR-Tools CP-SAT on the whole problem under the same budget as :func:`solve`
    (:func:`lns.core.baselines.cpsat.run_cpsat`; a problem its native model does not take goes
    through OR-Tools' MIP interface).

    ``num_workers`` are CP-SAT's search threads (with 1 and no time limit hit, runs repeat);
    ``max_scale_exponent`` bounds the scaling of fractional coefficients
    (:func:`lns.core.solvers.cpsat.model.build_cpsat_model`). ``initial_solution`` must be
    complete (it becomes CP-SAT's hint). The other parameters, the result and the errors are
    those of :func:`solve`.
    """
    rule = _stop_rule(stop, seed, optimum)
    check_integer("num_workers", num_workers, "expected an integer >= 1", low=1)
    check_integer("max_scale_exponent", max_scale_exponent, "expected an integer >= 0", low=0)
    _check_out(out)
    run = _begin(instance, "cpsat", rule, seed, SolveParams(), initial_solution, callbacks, optimum)

    def body() -> None:
        _user_start(run, None)
        run.reason, run.dual_bound = run_cpsat(
            run.incumbent,
            time_limit=run.time_left(),
            seed=run.seed(),
            num_workers=num_workers,
            max_scale_exponent=max_scale_exponent,
        )

    return _execute(run, seed, out, body)


def solve_localmip(
    instance: Instance,
    stop: Stop | float | None = None,
    *,
    seed: int = 0,
    initial_solution: Start = None,
    callbacks: list[Callback] | None = None,
    out: str | Path | None = None,
    optimum: float | None = None,
) -> Result:
    """Local-MIP alone on the whole problem, one thread, under the same budget as :func:`solve`
    (the ``localmip`` package; :func:`lns.core.parallel.kinds.local_search.run_local_mip`).

    ``initial_solution`` must be complete. The other parameters, the result and the errors are
    those of :func:`solve`; a missing ``localmip`` package raises
    :class:`lns.core.parallel.kinds.protocol.KindUnavailable`.
    """
    rule = _stop_rule(stop, seed, optimum)
    _check_out(out)
    run = _begin(
        instance, "localmip", rule, seed, SolveParams(), initial_solution, callbacks, optimum
    )

    def body() -> None:
        _user_start(run, None)
        run.reason = run_local_mip(run.incumbent, time_limit=run.time_left(), seed=run.seed())

    return _execute(run, seed, out, body)


#: The whole-problem baselines by name (``lns-solve method=NAME``, ``lns-bench``).
BASELINES: dict[str, Callable[..., Result]] = {
    "scip": solve_scip,
    "cpsat": solve_cpsat,
    "localmip": solve_localmip,
}


@dataclass
class _Run:
    """One call of :func:`solve` or a baseline: its parts, and what its result is built from.

    ``model`` is the SCIP model read from the file or a function that reads it (``None`` for a
    problem built in code), so that SCIP reads the file once at most; ``start`` the user's
    start, if any; ``sub_solver`` is the solver whose time the result reports,
    ``sub_solver_name`` the LNS sub-solver's name for the result.
    """

    problem: Problem
    model: object
    params: SolveParams
    incumbent: Incumbent
    rng: np.random.Generator
    stop: Stop
    callbacks: list
    method: str
    start: object = None
    selector: str | None = None
    sub_solver: SubSolver | None = None
    sub_solver_name: str | None = None
    records: list = field(default_factory=list)
    reason: StopReason = StopReason.TIME_LIMIT
    dual_bound: float | None = None
    worker_stats: list = field(default_factory=list)
    #: Seconds the sub-solvers replaced after they gave up spent solving (:func:`_renewed`).
    replaced_solver_time: float = 0.0

    def time_left(self) -> float:
        """Seconds a solve of the whole problem may take: what the stop rules leave (``math.inf``:
        no time limit), less the time the solver takes to free a long solve's search tree
        (:data:`lns.core.solvers.watchdog.CLEAN_UP_SHARE`), so that the run ends within its
        budget."""
        remaining = self.stop.remaining(stop_state(self.incumbent, len(self.records)))
        return remaining * (1 - CLEAN_UP_SHARE)

    def seed(self) -> int:
        """A solver seed drawn from the run's generator."""
        return int(self.rng.integers(SEED_BOUND))

    def solver_time(self) -> float:
        """Seconds inside the sub-solvers' solves (with SCIP: and the freeing of each solve)."""
        if self.sub_solver is None:
            return self.replaced_solver_time
        solver = self.sub_solver
        return (
            self.replaced_solver_time
            + solver.total_solve_time
            + getattr(solver, "total_reset_time", 0.0)
        )


def _begin(
    instance: Instance,
    method: str,
    stop: Stop,
    seed: int,
    params: SolveParams,
    start: Start,
    callbacks: list[Callback] | None,
    optimum: float | None,
) -> _Run:
    """Read the problem and set up the run's incumbent, generator and callbacks (the clock
    starts before the problem is read)."""
    started = time.perf_counter()
    problem, model = _load(instance)
    callbacks = _callbacks(problem, optimum, callbacks)
    loop = params.loop
    incumbent = Incumbent(
        problem, started, ImprovingOnly(loop.improvement_tol), loop.history_length, callbacks
    )
    rng = np.random.default_rng(seed)
    return _Run(problem, model, params, incumbent, rng, stop, callbacks, method, start=start)


def _execute(run: _Run, seed: int, out: str | Path | None, body: Callable[[], None]) -> Result:
    """Run ``body`` under the interrupt guard (Ctrl-C and the stop signals end it with the best
    solution), then :func:`_finish`."""
    try:
        with InterruptGuard():
            body()
    except KeyboardInterrupt:
        run.reason = StopReason.INTERRUPTED
    return _finish(run, seed, out)


def _finish(run: _Run, seed: int, out: str | Path | None) -> Result:
    """Build the :class:`Result` of ``run``, write its solution to ``out`` (if given), log it."""
    result = build_result(
        run.incumbent,
        method=run.method,
        stop_reason=run.reason,
        seed=seed,
        time_limit=time_limit_of(run.stop),
        selector=run.selector,
        sub_solver=run.sub_solver_name,
        iterations=run.records,
        dual_bound=run.dual_bound,
        solver_time=run.solver_time(),
        workers=run.worker_stats,
    )
    if out is not None and result.x is not None:
        result.write_sol(out)
    log.info(
        "%s: %s, objective %s after %.2fs (%s, %d iterations)",
        run.problem.name,
        result.status,
        result.objective,
        result.runtime,
        run.reason,
        len(run.records),
    )
    return result


def _no_integers(run: _Run) -> None:
    """Plain SCIP on a problem without integer variables: its proof is the run's."""
    _plain_scip(run)
    if run.reason is StopReason.OPTIMAL:
        run.reason = StopReason.NO_INTEGER_VARIABLES


def _lns(run: _Run, selector: Selector) -> None:
    """The sequential loop: a first solution (or the user's start), then :func:`run_lns`, which
    goes on with a new named sub-solver in place of one that gave up (:func:`_renewed`)."""
    if _start(run, selector, _sub_solver(run)):
        assert run.sub_solver is not None, "_start sets the sub-solver"
        params = run.params
        run.records, run.reason = run_lns(
            run.problem,
            selector,
            run.sub_solver,
            run.incumbent,
            rng=run.rng,
            stop=run.stop,
            callbacks=run.callbacks,
            size_rule=size_rule_of(run.problem, params.size),
            sub_solve=params.sub_solve,
            loop=params.loop,
            renew=functools.partial(_renewed, run),
        )


def _parallel_lns(run: _Run, selector: Selector, workers: int, mix) -> None:
    """The portfolio: its workers start (in other processes) while the first solution is found."""
    plan = make_plan(mix, workers, run.problem)
    params = run.params
    portfolio = Portfolio(
        run.problem,
        [selector] * plan.lns,
        named_sub_solver,
        seed=run.seed(),
        stop=run.stop,
        started=run.incumbent.started,
        sync_every=SYNC_EVERY if params.portfolio.deterministic else None,
        kinds=plan.kinds,
        rule=plan.rule,
        cores=plan.cores,
        prior=_prior(params.portfolio.prior, plan, run.problem),
        background_start=True,
        early=True,
        size=params.size,
        sub_solve=params.sub_solve,
        loop=params.loop,
    )
    settle = SettleAtFirstSolution(portfolio)
    try:
        with portfolio:
            solver = _sub_solver(run)
            if portfolio.early is not None:
                portfolio.early.on_found = functools.partial(
                    _end_start_without_solution, run, solver
                )
            run.incumbent.callbacks.append(settle)
            try:
                started = _start(run, selector, solver)
            finally:
                run.incumbent.callbacks.remove(settle)
            portfolio.take_early(run.incumbent, wait=run.time_left())
            if started or _found_early(run):
                run.records, run.reason = portfolio.run(run.incumbent)
    finally:
        run.worker_stats = portfolio.workers
    log.info(
        "%s: %d workers, %.3fs of exchange in the main process",
        run.problem.name,
        plan.workers,
        portfolio.exchange_time,
    )


def _prior(prior: str | None, plan: Plan, problem: Problem) -> dict | None:
    """The weights of the kinds of ``plan`` by ``prior`` (``None`` without a prior or a rule)."""
    if prior is None or plan.rule is None:
        return None
    return load_prior(prior).for_problem(problem)


def _end_start_without_solution(run: _Run, solver: SubSolver) -> None:
    """An early worker's solution ends the start search while that has none of its own; once it
    has one, its stall rule decides: a start search that still improves fast is not cut short by
    a worker's first, often poor, solution (``benchmarks/results/portfolio_kinds.md``, set
    cover)."""
    if run.incumbent.x is None:
        solver.stop()


def _found_early(run: _Run) -> bool:
    """Whether the portfolio goes on from its early workers' solution after the start search
    failed or was stopped by that solution (not by a signal, not after a proof)."""
    guard = active_guard()
    requested = guard is not None and guard.requested
    unproven = run.reason is not StopReason.OPTIMAL
    return unproven and run.incumbent.x is not None and not requested


def _start(run: _Run, selector: Selector, sub_solver: SubSolver) -> bool:
    """The user's start or a first solution; whether the LNS goes on (else ``run.reason`` says
    why not). A named sub-solver whose start solve was abandoned is replaced by a new one."""
    run.selector, run.sub_solver, run.sub_solver_name = selector.name, sub_solver, sub_solver.name
    _user_start(run, sub_solver)
    if run.incumbent.x is not None:
        return True
    reason = _first_solution(run)
    if reason is not None:
        run.reason = reason
        return False
    return True


def _first_solution(run: _Run) -> StopReason | None:
    """:func:`_initial_solution`, then a new sub-solver in place of an abandoned named one.

    A start solve abandoned after it found a solution does not end the run: the LNS goes on
    with a fresh sub-solver where ``params.sub_solve.solver`` names one (a sub-solver object
    cannot be rebuilt).
    """
    reason = _initial_solution(run)
    if (
        reason is StopReason.SUB_SOLVER_ABANDONED
        and run.incumbent.x is not None
        and _renewed(run) is not None
    ):
        return None
    return reason


def _renewed(run: _Run) -> SubSolver | None:
    """A new sub-solver in place of the run's abandoned one, now the run's; ``None`` where
    ``params.sub_solve.solver`` is an object (it cannot be rebuilt)."""
    name = run.params.sub_solve.solver
    if not isinstance(name, str):
        return None
    log.warning("%s: the LNS goes on with a new %s sub-solver", run.problem.name, name)
    run.replaced_solver_time = run.solver_time()
    run.sub_solver = _sub_solver(run, fresh=True)
    return run.sub_solver


def _plain_scip(run: _Run) -> None:
    """Plain SCIP on the whole problem until the time limit, from the user's start if given."""
    scip_params = run.params.sub_solve.scip_params
    solver = run.sub_solver = ScipSubSolver(run.problem, scip_params, model=run.model)
    _user_start(run, solver)
    outcome = solver.solve(
        time_limit=run.time_left(),
        seed=run.seed(),
        start=run.incumbent.x,
        on_found=run.incumbent.offer_found,
    )
    status = as_status(outcome.status)
    _raise_if_proven_empty(run.problem, status)
    run.dual_bound = outcome.dual_bound
    reasons = {
        SolveStatus.OPTIMAL: StopReason.OPTIMAL,
        SolveStatus.INTERRUPTED: StopReason.INTERRUPTED,
    }
    run.reason = reasons.get(status, StopReason.TIME_LIMIT)


def _initial_solution(run: _Run) -> StopReason | None:
    """Find the first incumbent; returns a stop reason if the run is already over, else ``None``.

    The start strategy (:class:`lns.core.search.params.StartParams`, see
    :mod:`lns.core.search.start`) searches for ``time_limit`` seconds first; with no solution by
    then, it goes on for the rest of the budget (a restart would only repeat its work).
    """
    assert run.sub_solver is not None, "_start sets the sub-solver"
    start = _start_strategy(run)
    limit = run.params.start.time_limit
    for seconds in (None,) if limit is None else (limit, None):
        time_left = run.time_left() if seconds is None else min(run.time_left(), seconds)
        task = StartTask(
            run.problem,
            run.sub_solver,
            time_left,
            run.seed(),
            run.incumbent.offer_found,
            run.params.sub_solve.scip_params,
        )
        status = as_status(start(task).status)
        _raise_if_proven_empty(run.problem, status)
        if status is SolveStatus.OPTIMAL:
            return StopReason.OPTIMAL
        if status is SolveStatus.INTERRUPTED:
            return StopReason.INTERRUPTED
        if status is SolveStatus.ABANDONED:
            return StopReason.SUB_SOLVER_ABANDONED
        if run.incumbent.x is not None:
            return None
    return StopReason.TIME_LIMIT


def _start_strategy(run: _Run) -> StartStrategy:
    """The configured start; a named one is ``"first"`` when runs must repeat (a node limit per
    sub-solve), since the stall rule reads the clock, starts from a greedy solution on a covering
    or packing problem (:class:`lns.core.search.greedy_start.GreedyFirst`, unless
    ``start.greedy`` is false), and from a trivial point where a SCIP start would overrun its
    share of the budget (:class:`lns.core.search.trivial_start.TrivialFirst`)."""
    start = run.params.start
    if not isinstance(start.strategy, str):
        return start.strategy
    name = "first" if run.params.sub_solve.node_limit != -1 else start.strategy
    stall = StallRule(start.stall_floor, start.stall_factor, start.max_share, start.after_root)
    named = make_start(name, run.problem, stall=stall, solution_limit=start.solution_limit)
    trivial = TrivialFirst(named, stall.share)
    return GreedyFirst(trivial) if start.greedy else trivial


def _user_start(run: _Run, sub_solver: SubSolver | None) -> None:
    """Offer the user's start to the incumbent: a complete feasible one as it is, a partial one
    completed by a solve of ``sub_solver`` (none: complete starts only)."""
    if run.start is not None:
        sub_solve = run.params.sub_solve
        warm_start(
            run.problem,
            sub_solver,
            run.incumbent,
            run.start,
            seed=run.seed(),
            time_limit=min(sub_solve.time_limit, run.time_left()),
            node_limit=sub_solve.node_limit,
        )


def _selector(selector) -> Selector:
    """A registered name built with its defaults, a :class:`Selector` as it is, a plain function
    wrapped."""
    if isinstance(selector, str):
        return make_selector(selector)
    if isinstance(selector, Selector):
        return selector
    if callable(selector):
        return FunctionSelector(selector)
    raise InvalidArgumentTypeError(
        f"selector: expected a registered name, a Selector or a function "
        f"(state, size, rng) -> Neighborhood, got {type(selector).__name__}"
    )


def _check_out(out: str | Path | None) -> None:
    """A writable ``out`` (if given), before any work."""
    if out is not None:
        check_writable(out)


def _check_params(params: SolveParams | None) -> SolveParams:
    """``params``, or the defaults for ``None``."""
    if params is None:
        return SolveParams()
    if not isinstance(params, SolveParams):
        raise InvalidArgumentTypeError(
            f"params: expected lns.SolveParams (SolveParams.from_dict builds one from a "
            f"mapping), got {type(params).__name__}"
        )
    return params


def _sub_solver(run: _Run, fresh: bool = False) -> SubSolver:
    """The run's sub-solver (``params.sub_solve.solver``): built by name for ``run.problem``,
    or the object given.

    SCIP uses the model read from the file, or with ``fresh`` (after that model's solve was
    abandoned) a new one.
    """
    sub_solve = run.params.sub_solve
    if not isinstance(sub_solve.solver, str):
        return sub_solve.solver
    return named_sub_solver(run.problem, sub_solve, None if fresh else run.model)


def named_sub_solver(problem: Problem, sub_solve: SubSolveParams, model=None) -> SubSolver:
    """The sub-solver that ``sub_solve.solver`` names (one of
    :data:`lns.core.search.params.SUB_SOLVERS`) for ``problem`` (on ``model``, the SCIP model
    read from its file, if given), with the settings of ``sub_solve``; also what each portfolio
    worker builds."""
    if sub_solve.solver == "cpsat":
        from lns.core.solvers.cpsat.subsolver import CpSatSubSolver

        return CpSatSubSolver(problem)
    return ScipSubSolver(
        problem,
        sub_solve.sub_mip_params(),
        model=model,
        sub_problem=sub_solve.sub_problem,
    )


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _workers(params: SolveParams, stop: Stop) -> tuple[int, object]:
    """The worker processes and the mix of kinds of ``params.portfolio`` for this machine:
    ``"all"`` resolved to the usable cores (a mix sets its own number), ``complete_worker`` to
    its mix. With several workers the sub-solver must be a name and ``stop`` picklable (both
    go to the worker processes).

    Raises
    ------
    InvalidArgumentError
        ``complete_worker`` on one core, a sub-solver object or a stop rule that cannot be
        sent to the workers.
    """
    portfolio = params.portfolio
    workers, mix = portfolio.workers, portfolio.mix
    if workers == ALL_CORES:
        workers = 1 if isinstance(mix, dict) else usable_cores()
    if portfolio.complete_worker:
        if workers < 2:
            raise InvalidArgumentError(
                f"complete_worker=True needs workers >= 2 (got workers={portfolio.workers!r}, "
                f"{workers} usable cores)"
            )
        mix = {"lns": workers - 1, "scip": 1}
    workers = check_portfolio(mix, workers, portfolio.deterministic)
    if workers == 1:
        return workers, mix
    solver = params.sub_solve.solver
    if not isinstance(solver, str):
        raise InvalidArgumentError(
            f"sub_solve.solver={solver!r}: with workers={workers} give the sub-solver by name"
        )
    try:
        pickle.dumps(stop)
    except Exception as error:
        raise InvalidArgumentError(
            f"stop={stop!r}: with workers={workers} the stop rule is sent "
            f"to the worker processes and must be picklable ({error})"
        ) from error
    return workers, mix


def _stop_rule(stop: Stop | float | None, seed: int, optimum: float | None) -> Stop:
    """``stop`` as a rule (see :func:`solve`), with ``seed`` and ``optimum`` checked."""
    seconds = None if isinstance(stop, Stop) else stop
    check_run_arguments(seconds=seconds, seed=seed, optimum=optimum)
    if isinstance(stop, Stop):
        return stop
    return budget(DEFAULT_TIME_LIMIT if stop is None else float(stop))


def _callbacks(
    problem: Problem, optimum: float | None, callbacks: list[Callback] | None
) -> list[Callback]:
    if optimum is None and problem.source is not None:
        optimum = known_objective(problem.source)
    return [ImprovementLogger(problem.name, optimum), *(callbacks or [])]


def _load(instance) -> tuple[Problem, object]:
    """The problem, and the SCIP model of its file or a function that reads it
    (:func:`lns.core.problem.mip.read_problem_and_model`; ``None`` for a problem built in code).

    A :class:`Problem` is used as it is, a SCIP model as the problem it holds (read from a copy),
    a name as a path or a bundled MIPLIB instance (``"air05"``), as on the command line.
    """
    if isinstance(instance, Problem):
        return instance, None
    if isinstance(instance, Model):
        copy = Model(sourceModel=instance, origcopy=True)
        return problem_from_scip(copy, instance.getProbName()), None
    if not isinstance(instance, (str, Path)):
        raise InvalidArgumentTypeError(
            f"instance: expected a file path, a bundled instance name, a Problem or a "
            f"pyscipopt.Model, got {type(instance).__name__}"
        )
    return read_problem_and_model(resolve_instance(instance))


def _raise_if_proven_empty(problem: Problem, status: SolveStatus) -> None:
    where = problem.source or problem.name
    if status is SolveStatus.INFEASIBLE:
        raise InfeasibleProblemError(f"{where}: SCIP proved the problem infeasible")
    if status is SolveStatus.UNBOUNDED:
        raise UnboundedProblemError(f"{where}: SCIP proved the problem unbounded")
    if status is SolveStatus.INFEASIBLE_OR_UNBOUNDED:
        raise UnboundedProblemError(f"{where}: SCIP found the problem unbounded (or infeasible)")
