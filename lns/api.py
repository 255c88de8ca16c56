"""``solve()``: the one call that reads a problem and improves it within a budget."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pyscipopt import Model

from instances.bundled import resolve_instance
from lns.core.baselines.cpsat import solve_cpsat
from lns.core.errors import (
    InfeasibleProblemError,
    InvalidArgumentError,
    UnboundedProblemError,
    UnknownNameError,
)
from lns.core.interrupt import InterruptGuard, active_guard
from lns.core.parallel.kinds.local_search import solve_local_mip
from lns.core.parallel.plan import check_portfolio, make_plan
from lns.core.parallel.portfolio import SYNC_EVERY, Portfolio
from lns.core.problem.mip import Problem, instance_name, problem_from_scip, read_scip_model
from lns.core.problem.solu_file import known_objective
from lns.core.problem.solution_file import check_writable
from lns.core.problem.validation import check_run_arguments
from lns.core.search.config import DEADLINE_MARGIN, LNSConfig
from lns.core.search.incumbent import ImprovingOnly, Incumbent
from lns.core.search.loop import as_status, run_lns, stop_state
from lns.core.search.progress import ImprovementLogger
from lns.core.search.result import Callback, Result, build_result
from lns.core.search.selection import FunctionSelector, Selector
from lns.core.search.start import StallRule, StartStrategy, StartTask, make_start
from lns.core.search.stop import AnyOf, MaxIterations, MaxRuntime, Stop, StopReason
from lns.core.search.trivial_start import TrivialFirst
from lns.core.search.warm_start import warm_start
from lns.core.solvers.protocol import SEED_BOUND, SolveStatus, SubSolver
from lns.core.solvers.scip.subsolver import ScipSubSolver
from lns.core.solvers.watchdog import CLEAN_UP_SHARE
from lns.registry import make_selector

log = logging.getLogger("lns")

METHODS = ("lns", "scip", "cpsat", "localmip")
SUB_SOLVERS = ("scip", "cpsat")
#: ``**options`` of ``method="cpsat"`` (see :func:`lns.core.baselines.cpsat.solve_cpsat`).
CPSAT_OPTIONS = ("num_workers", "max_scale_exponent")


def solve(
    instance: str | Path | Problem | Model,
    selector: str | Selector = "random",
    *,
    method: str = "lns",
    sub_solver: str | SubSolver = "scip",
    stop: Stop | None = None,
    time_limit: float | None = 60.0,
    iteration_limit: int | None = None,
    seed: int = 0,
    initial_solution: str | Path | dict | np.ndarray | None = None,
    out: str | Path | None = None,
    optimum: float | None = None,
    selector_options: dict | None = None,
    callbacks: list[Callback] | None = None,
    workers: int | str = 1,
    deterministic: bool = False,
    complete_worker: bool = False,
    portfolio: str | dict | None = None,
    **options,
) -> Result:
    """Find a good solution of a MIP within a time (or iteration) budget.

    Parameters
    ----------
    instance : str, pathlib.Path, Problem or pyscipopt.Model
        A file SCIP reads (``.mps``, ``.mps.gz``, ``.lp``, ...), the name of a bundled MIPLIB
        instance (``"air05"``), or a problem built in code (a :class:`Problem`, or a SCIP model,
        which is copied and left as it is).
    selector : str, Selector or callable
        Neighborhood selector, by registry name (see :data:`lns.registry.SELECTORS`), as an
        object, or as a plain function ``(state, size, rng) -> Neighborhood`` (see
        :class:`lns.core.search.selection.FunctionSelector`).
    method : {"lns", "scip", "cpsat", "localmip"}
        ``"lns"``: large neighborhood search with ``selector``; ``"scip"``: plain SCIP on the
        whole problem under the same budget, for like-for-like comparisons; ``"cpsat"``:
        OR-Tools CP-SAT on the whole problem, see :func:`lns.core.baselines.cpsat.solve_cpsat`
        (``**options`` are its ``num_workers`` and ``max_scale_exponent``); ``"localmip"``:
        Local-MIP alone, one thread (the ``localmip`` package; see
        :func:`lns.core.parallel.kinds.local_search.solve_local_mip`).
    sub_solver : {"scip", "cpsat"} or SubSolver
        Solver of the LNS sub-problems (and of the first solution): SCIP
        (:class:`lns.core.solvers.scip.subsolver.ScipSubSolver`), CP-SAT for pure-integer problems
        (:class:`lns.core.solvers.cpsat.subsolver.CpSatSubSolver`), or an object following the
        :class:`lns.core.solvers.protocol.SubSolver` protocol, used as it is.
    stop : Stop, optional
        A further stop rule (:mod:`lns.core.search.stop`, e.g.
        ``NoImprovement(seconds=20) | Target(1500)``), asked between LNS iterations together
        with ``time_limit`` and ``iteration_limit``.
    time_limit : float or None
        Wall-clock seconds for everything, reading the file included.
    iteration_limit : int or None
        Stop after this many LNS iterations. With a node limit per sub-solve
        (``iteration_node_limit``) instead of a time limit, runs repeat exactly.
    seed : int
        Drives every random choice: the selector's and the sub-solver's per solve.
    initial_solution : path, dict or array, optional
        A start instead of the sub-solver's first solution (for ``"scip"`` and ``"cpsat"``: a
        start solution and hint): a ``.sol`` file, ``{name: value}`` or a value vector, possibly
        partial (NaN: unassigned); a partial or infeasible start is completed by a sub-solve
        (see :func:`lns.core.search.warm_start.warm_start`; ``"cpsat"`` takes complete starts only).
    out : path, optional
        Where to write the best solution (``.sol``), also after a time limit or Ctrl-C.
    optimum : float, optional
        Known optimal value, for the gap in progress lines; read from a ``.solu`` file next to
        the instance when not given.
    selector_options : dict, optional
        Constructor arguments of the selector when it is given by name.
    callbacks : list of Callback, optional
        Hooks called on each improvement, selection and iteration (with ``workers >= 2``: on
        each improvement only; the iterations run in the workers).
    workers : int or "all"
        Worker processes (:mod:`lns.core.parallel.portfolio`; LNS workers unless ``portfolio``
        names other kinds); ``1`` runs the sequential loop in this process; ``"all"``: one per
        core this process may use (:func:`usable_cores`), the default of ``lns-solve``. Here the
        default stays 1, so that a seeded run with iteration and node limits repeats exactly,
        every callback sees every iteration and any sub-solver object works. With 2 or more,
        each LNS worker runs the loop with a copy of ``selector`` and its own seed, and
        ``iteration_limit`` limits each worker;
        ``sub_solver`` and ``stop`` must then be a name and a picklable rule. The workers
        import the calling script only when the selector or the stop rule is defined in it
        (:mod:`lns.core.parallel.spawn_main`); only then does the script need an
        ``if __name__ == "__main__":`` guard.
    deterministic : bool
        With ``workers >= 2``: exchange solutions only every
        :data:`lns.core.parallel.portfolio.SYNC_EVERY` iterations, so that a seeded run with
        ``iteration_limit`` and ``iteration_node_limit`` (no time limit reached) repeats.
    complete_worker : bool
        With ``workers >= 2`` (not ``deterministic``): the same as
        ``portfolio={"lns": workers - 1, "scip": 1}``.
    portfolio : {None, "lns", "auto"} or dict
        The kinds of search of the workers (:mod:`lns.core.parallel.kinds`): ``None`` or
        ``"lns"``: LNS workers only; ``"auto"``: the ``workers`` cores go, slice by slice, to
        LNS workers, CP-SAT, Local-MIP and SCIP's tree search by the improvements each brings
        (:mod:`lns.core.parallel.allocation`; ``"auto_rate"`` and ``"auto_stay"`` name the
        rule); a mix ``{"lns": 5, "scip": 1, "cpsat": 1, "local_search": 1}``: that many
        workers of each kind (``workers``: their total, or left at 1). A kind that cannot run
        (a missing package) is left out with a line of log.
        A ``scip`` or ``cpsat`` worker's proof of optimality ends the run. Not with
        ``deterministic`` unless LNS only (:mod:`lns.core.parallel.plan`).
    **options
        Fields of :class:`lns.core.search.config.LNSConfig` (``initial_fraction``,
        ``iteration_time_limit``, ...), or for ``method="cpsat"`` the names in
        :data:`CPSAT_OPTIONS`.

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
    """
    check_run_arguments(
        time_limit=time_limit, iteration_limit=iteration_limit, seed=seed, optimum=optimum
    )
    if complete_worker:
        portfolio = _complete_worker_mix(workers, deterministic, portfolio)
    workers = _check_workers(workers, sub_solver, stop, deterministic, portfolio)
    started = time.perf_counter()
    _check_names(method, sub_solver, out)
    config, method_options = _options(method, options)
    selector = _selector(selector, selector_options)
    problem, model = _load(instance)
    callbacks = _callbacks(problem, optimum, callbacks)
    incumbent = Incumbent(
        problem, started, ImprovingOnly(config.improvement_tol), config.history_length, callbacks
    )
    run = _Run(
        problem,
        model,
        config,
        incumbent,
        np.random.default_rng(seed),
        _stop_rule(time_limit, iteration_limit, stop),
        callbacks,
        method if len(problem.integer_indices) or method in ("cpsat", "localmip") else "scip",
        start=initial_solution,
        workers=workers,
        deterministic=deterministic,
        portfolio=portfolio,
    )
    if run.method == "lns":
        selector.check(problem)  # e.g. a learned selector's checkpoint, before any solve
    try:
        with InterruptGuard():
            _dispatch(run, method, selector, sub_solver, method_options)
    except KeyboardInterrupt:
        run.reason = StopReason.INTERRUPTED
    return _finish(run, seed, time_limit, out)


def _finish(run: _Run, seed: int, time_limit: float | None, out: str | Path | None) -> Result:
    """Build the :class:`Result` of ``run``, write its solution to ``out`` (if given), log it."""
    result = build_result(
        run.incumbent,
        method=run.method,
        stop_reason=run.reason,
        seed=seed,
        time_limit=time_limit,
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


@dataclass
class _Run:
    """One call of :func:`solve`: its parts, and what its result is built from.

    ``model`` is the SCIP model read from the file (``None`` for a problem built in code), so
    that SCIP does not read the file twice; ``start`` the user's start, if any; ``sub_solver``
    is the solver whose time the result reports, ``sub_solver_name`` the LNS sub-solver's name
    for the result.
    """

    problem: Problem
    model: object
    config: LNSConfig
    incumbent: Incumbent
    rng: np.random.Generator
    stop: Stop
    callbacks: list
    method: str
    start: object = None
    workers: int = 1
    deterministic: bool = False
    portfolio: str | dict | None = None
    selector: str | None = None
    sub_solver: SubSolver | None = None
    sub_solver_name: str | None = None
    records: list = field(default_factory=list)
    reason: StopReason = StopReason.TIME_LIMIT
    dual_bound: float | None = None
    worker_stats: list = field(default_factory=list)

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
        """Seconds inside the sub-solver's solves (with SCIP: and the freeing of each solve)."""
        if self.sub_solver is None:
            return 0.0
        return self.sub_solver.total_solve_time + getattr(self.sub_solver, "total_reset_time", 0.0)


def _dispatch(run: _Run, method: str, selector: Selector, sub_solver, method_options: dict) -> None:
    """Run ``run.method``, filling in ``run``'s stop reason, records and bound."""
    if run.method == "cpsat":
        _user_start(run, None)
        run.reason, run.dual_bound = solve_cpsat(
            run.incumbent, time_limit=run.time_left(), seed=run.seed(), **method_options
        )
    elif run.method == "localmip":
        _user_start(run, None)
        run.reason = solve_local_mip(run.incumbent, time_limit=run.time_left(), seed=run.seed())
    elif run.method == "scip":
        if method == "lns":
            log.info("%s has no integer variables: solved directly by SCIP", run.problem.name)
        _plain_scip(run)
        if run.reason is StopReason.OPTIMAL and method == "lns":
            run.reason = StopReason.NO_INTEGER_VARIABLES
    elif run.workers > 1:
        _parallel_lns(run, selector, sub_solver)
    else:
        _lns(run, selector, sub_solver)


def _lns(run: _Run, selector: Selector, spec: str | SubSolver) -> None:
    if _start(run, selector, _sub_solver(spec, run), spec):
        assert run.sub_solver is not None, "_start sets the sub-solver"
        run.records, run.reason = run_lns(
            run.problem,
            selector,
            run.sub_solver,
            run.incumbent,
            config=run.config,
            rng=run.rng,
            stop=run.stop,
            callbacks=run.callbacks,
        )


def _parallel_lns(run: _Run, selector: Selector, sub_solver: str) -> None:
    """The portfolio: its workers start (in other processes) while the first solution is found."""
    plan = make_plan(run.portfolio, run.workers, run.problem)
    portfolio = Portfolio(
        run.problem,
        [selector] * plan.lns,
        functools.partial(named_sub_solver, sub_solver),
        config=run.config,
        seed=run.seed(),
        stop=run.stop,
        started=run.incumbent.started,
        sync_every=SYNC_EVERY if run.deterministic else None,
        kinds=plan.kinds,
        rule=plan.rule,
        cores=plan.cores,
        background_start=True,
        early=True,
    )
    try:
        with portfolio:
            solver = _sub_solver(sub_solver, run)
            if portfolio.early is not None:  # a worker's first solution ends the start search
                portfolio.early.on_found = solver.stop
            started = _start(run, selector, solver, sub_solver)
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


def _found_early(run: _Run) -> bool:
    """Whether the portfolio goes on from its early workers' solution after the start search
    failed or was stopped by that solution (not by a signal, not after a proof)."""
    guard = active_guard()
    requested = guard is not None and guard.requested
    unproven = run.reason is not StopReason.OPTIMAL
    return unproven and run.incumbent.x is not None and not requested


def _start(run: _Run, selector: Selector, sub_solver: SubSolver, spec: str | SubSolver) -> bool:
    """The user's start or a first solution; whether the LNS goes on (else ``run.reason`` says
    why not). A named sub-solver whose start solve was abandoned is replaced by a new one."""
    run.selector, run.sub_solver, run.sub_solver_name = selector.name, sub_solver, sub_solver.name
    _user_start(run, sub_solver)
    if run.incumbent.x is not None:
        return True
    reason = _first_solution(run, spec)
    if reason is not None:
        run.reason = reason
        return False
    return True


def _first_solution(run: _Run, spec: str | SubSolver) -> StopReason | None:
    """:func:`_initial_solution`, then a new sub-solver in place of an abandoned named one.

    A start solve abandoned after it found a solution does not end the run: the LNS goes on
    with a fresh sub-solver where ``spec`` names one (a sub-solver object cannot be rebuilt).
    """
    reason = _initial_solution(run)
    if (
        reason is StopReason.SUB_SOLVER_ABANDONED
        and run.incumbent.x is not None
        and isinstance(spec, str)
    ):
        log.warning("%s: the LNS goes on with a new %s sub-solver", run.problem.name, spec)
        run.sub_solver = _sub_solver(spec, run, fresh=True)
        return None
    return reason


def _plain_scip(run: _Run) -> None:
    """Plain SCIP on the whole problem until the time limit, from the user's start if given."""
    solver = run.sub_solver = ScipSubSolver(run.problem, run.config.scip_params, model=run.model)
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

    The start strategy (``LNSConfig.start``, see :mod:`lns.core.search.start`) searches for
    ``initial_time_limit`` seconds first; with no solution by then, it goes on for the rest of
    the budget (a restart would only repeat its work).
    """
    assert run.sub_solver is not None, "_start sets the sub-solver"
    start = _start_strategy(run)
    limit = run.config.initial_time_limit
    for time_limit in (None,) if limit is None else (limit, None):
        time_left = run.time_left() if time_limit is None else min(run.time_left(), time_limit)
        task = StartTask(
            run.problem,
            run.sub_solver,
            time_left,
            run.seed(),
            run.incumbent.offer_found,
            run.config.scip_params,
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
    sub-solve), since the stall rule reads the clock, and starts from a trivial point where a
    SCIP start would overrun its share of the budget
    (:class:`lns.core.search.trivial_start.TrivialFirst`)."""
    config = run.config
    if not isinstance(config.start, str):
        return config.start
    name = "first" if config.iteration_node_limit != -1 else config.start
    stall = StallRule(
        config.start_stall_floor,
        config.start_stall_factor,
        config.start_max_share,
        config.start_after_root,
    )
    start = make_start(name, run.problem, stall=stall, solution_limit=config.initial_solution_limit)
    return TrivialFirst(start, stall.share)


def _user_start(run: _Run, sub_solver: SubSolver | None) -> None:
    """Offer the user's start to the incumbent: a complete feasible one as it is, a partial one
    completed by a solve of ``sub_solver`` (none: complete starts only)."""
    if run.start is not None:
        warm_start(
            run.problem,
            sub_solver,
            run.incumbent,
            run.start,
            seed=run.seed(),
            time_limit=min(run.config.iteration_time_limit, run.time_left()),
            node_limit=run.config.iteration_node_limit,
        )


def _selector(selector, options: dict | None) -> Selector:
    """A name built with ``options``, a :class:`Selector` as it is, a plain function wrapped."""
    if isinstance(selector, str):
        return make_selector(selector, **(options or {}))
    if isinstance(selector, Selector):
        return selector
    if callable(selector):
        return FunctionSelector(selector)
    raise TypeError(
        f"selector: expected a registered name, a Selector or a function "
        f"(state, size, rng) -> Neighborhood, got {type(selector).__name__}"
    )


def _check_names(method: str, sub_solver, out: str | Path | None) -> None:
    """A known method and sub-solver name, and a writable ``out`` (if given), before any work."""
    if method not in METHODS:
        raise UnknownNameError("method", method, METHODS)
    if isinstance(sub_solver, str) and sub_solver not in SUB_SOLVERS:
        raise UnknownNameError("sub_solver", sub_solver, SUB_SOLVERS)
    if out is not None:
        check_writable(out)


def _sub_solver(spec: str | SubSolver, run: _Run, fresh: bool = False) -> SubSolver:
    """The sub-solver named ``spec`` for ``run.problem``, or ``spec`` itself if it is an object.

    SCIP uses the model read from the file, or with ``fresh`` (after that model's solve was
    abandoned) a new one.
    """
    if not isinstance(spec, str):
        return spec
    return named_sub_solver(spec, run.problem, run.config, None if fresh else run.model)


def named_sub_solver(name: str, problem: Problem, config: LNSConfig, model=None) -> SubSolver:
    """The sub-solver ``name`` (one of :data:`SUB_SOLVERS`) of ``problem`` (on ``model``, the
    SCIP model read from its file, if given); also what each portfolio worker builds."""
    if name == "cpsat":
        from lns.core.solvers.cpsat.subsolver import (
            CpSatSubSolver,  # lands with the CP-SAT sub-solver
        )

        return CpSatSubSolver(problem)
    return ScipSubSolver(
        problem,
        config.sub_solver_params(),
        model=model,
        sub_problem=config.sub_problem,
        continuous=config.reduced_continuous,
    )


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _complete_worker_mix(workers, deterministic: bool, portfolio) -> dict:
    """The mix of ``complete_worker=True``: it needs a second, timed worker and no other
    ``portfolio``."""
    count = usable_cores() if workers == "all" else workers
    if not isinstance(count, int) or count < 2 or deterministic or portfolio is not None:
        raise InvalidArgumentError(
            f"complete_worker=True needs workers >= 2, deterministic=False and no portfolio "
            f"(got workers={workers!r}, deterministic={deterministic}, portfolio={portfolio!r})"
        )
    return {"lns": count - 1, "scip": 1}


def _check_workers(workers, sub_solver, stop, deterministic: bool, portfolio) -> int:
    """``workers``, checked: a positive integer; with several, the sub-solver is a name and
    ``stop`` can be sent to the worker processes. ``"all"`` means one per usable core; a
    ``portfolio`` mix sets it (:func:`lns.core.parallel.plan.check_portfolio`)."""
    if workers == "all":  # a mix sets its own number of workers
        workers = 1 if isinstance(portfolio, dict) else usable_cores()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidArgumentError(
            f"workers={workers!r} is invalid: expected an integer >= 1 or 'all'"
        )
    workers = check_portfolio(portfolio, workers, deterministic)
    if workers == 1:
        return workers
    if not isinstance(sub_solver, str):
        raise InvalidArgumentError(
            f"sub_solver={sub_solver!r}: with workers={workers} give the "
            f"sub-solver by name, one of {list(SUB_SOLVERS)}"
        )
    try:
        pickle.dumps(stop)
    except Exception as error:
        raise InvalidArgumentError(
            f"stop={stop!r}: with workers={workers} the stop rule is sent "
            f"to the worker processes and must be picklable ({error})"
        ) from error
    return workers


def _stop_rule(time_limit: float | None, iteration_limit: int | None, stop: Stop | None) -> Stop:
    """``solve()``'s limits and ``stop`` as one rule (keeping ``DEADLINE_MARGIN`` in hand)."""
    rules: list[Stop] = []
    if iteration_limit is not None:
        rules.append(MaxIterations(iteration_limit))
    if time_limit is not None:
        rules.append(MaxRuntime(max(0.0, time_limit - DEADLINE_MARGIN)))
    if stop is not None:
        if not isinstance(stop, Stop):
            raise TypeError(
                f"solve(): stop must be a stop rule of lns.core.search.stop (e.g. "
                f"NoImprovement(seconds=20) | Target(1500)), got {stop!r}"
            )
        rules.append(stop)
    return AnyOf(*rules)


def _callbacks(
    problem: Problem, optimum: float | None, callbacks: list[Callback] | None
) -> list[Callback]:
    if optimum is None and problem.source is not None:
        optimum = known_objective(problem.source)
    return [ImprovementLogger(problem.name, optimum), *(callbacks or [])]


def _options(method: str, options: dict) -> tuple[LNSConfig, dict]:
    """The loop's settings, and the options of ``method="cpsat"``, from ``**options``."""
    if method == "cpsat":
        unknown = sorted(set(options) - set(CPSAT_OPTIONS))
        if unknown:
            raise TypeError(
                f"solve(method='cpsat') got unknown options {unknown}; valid ones are "
                f"{list(CPSAT_OPTIONS)}"
            )
        return LNSConfig(), options
    return _config(options), {}


def _config(options: dict) -> LNSConfig:
    names = {f.name for f in dataclasses.fields(LNSConfig)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise TypeError(f"solve() got unknown options {unknown}; valid ones are {sorted(names)}")
    return LNSConfig(**options)


def _load(instance) -> tuple[Problem, object]:
    """The problem, and the SCIP model read from the file (``None`` for a problem built in code).

    A :class:`Problem` is used as it is, a SCIP model as the problem it holds (read from a copy),
    a name as a path or a bundled MIPLIB instance (``"air05"``), as on the command line.
    """
    if isinstance(instance, Problem):
        return instance, None
    if isinstance(instance, Model):
        copy = Model(sourceModel=instance, origcopy=True)
        return problem_from_scip(copy, instance.getProbName()), None
    if not isinstance(instance, (str, Path)):
        raise TypeError(
            f"instance: expected a file path, a bundled instance name, a Problem or a "
            f"pyscipopt.Model, got {type(instance).__name__}"
        )
    path = resolve_instance(instance)
    model = read_scip_model(path)
    return problem_from_scip(model, instance_name(path), source=path), model


def _raise_if_proven_empty(problem: Problem, status: SolveStatus) -> None:
    where = problem.source or problem.name
    if status is SolveStatus.INFEASIBLE:
        raise InfeasibleProblemError(f"{where}: SCIP proved the problem infeasible")
    if status is SolveStatus.UNBOUNDED:
        raise UnboundedProblemError(f"{where}: SCIP proved the problem unbounded")
    if status is SolveStatus.INFEASIBLE_OR_UNBOUNDED:
        raise UnboundedProblemError(f"{where}: SCIP found the problem unbounded (or infeasible)")
