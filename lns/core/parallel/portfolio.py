"""A parallel portfolio: workers in separate processes that share one checked incumbent.

As CP-SAT's portfolio (``num_workers``), the workers share solutions, not state: each
process (:mod:`lns.core.parallel.worker`) holds its own model and runs one kind of search
(:mod:`lns.core.parallel.kinds`: the LNS loop with its own selector, SCIP's or CP-SAT's tree
search, or Local-MIP) with its own seed (``SeedSequence(seed).spawn(n)``). Every solution a
worker finds is sent to the main process, checked there once against the original problem by
the run's :class:`lns.core.search.incumbent.Incumbent`, and, when it becomes the incumbent, sent to
the other workers, which take it before their next step.

With ``sync_every=K`` (deterministic mode, as CP-SAT's interleaved search) the workers
exchange only every ``K`` iterations: each sends its incumbent and waits; the main process
offers the best one (ties: the lowest worker number) and sends the incumbent back to all. With
iteration and node limits (and no time limit reached), a seeded run then repeats exactly.
Deterministic mode takes LNS workers only: the other kinds' searches are timed.

With an allocation rule (``rule``, :mod:`lns.core.parallel.allocation`) there are more
workers than ``cores``: worker 0 runs throughout, and the rule gives the other ``cores - 1``
cores, slice by slice, to the workers whose solutions improve the incumbent; the others wait
paused. A paused worker gets no incumbents; when it resumes, it gets the newest. A worker
whose kind cannot run (:class:`lns.core.parallel.kinds.protocol.KindUnavailable`) reports why,
which is logged once, and leaves its turns to the others.

Processes are started with the ``spawn`` method (forking a process that already runs SCIP,
HiGHS or threads is unsafe); they import the calling script only when what they are sent
refers to it (:mod:`lns.core.parallel.spawn_main`). The main process catches the stop signals
(:mod:`lns.core.interrupt`); the workers ignore them and die with it. Whatever ends the run (a
stop rule, a signal, a crashed worker), the main process keeps every solution it received, and
no worker outlives :meth:`Portfolio.close`.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
import threading
import time
from dataclasses import replace

import numpy as np

from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.interrupt import STOP_SIGNALS, active_guard
from lns.core.parallel.allocation import RULES, Allocation
from lns.core.parallel.early import EarlyStart
from lns.core.parallel.kinds.protocol import WorkerSpec
from lns.core.parallel.shared_problem import SharedProblem, shared_or_none
from lns.core.parallel.spawn_main import main_module_skipped, refers_to_main
from lns.core.parallel.worker import worker_main
from lns.core.problem.mip import Problem
from lns.core.search.incumbent import Incumbent
from lns.core.search.loop import stop_state
from lns.core.search.params import LoopParams, SizeParams, SubSolveParams
from lns.core.search.result import Callback, WorkerStats
from lns.core.search.stop import Stop, StopReason, StopState

log = logging.getLogger("lns")

#: Seconds past the deadline after which the main process stops waiting for the workers
#: (a sub-solve returns at most about a second after its time limit, see lns.core.solvers.watchdog).
GRACE = 2.0
#: Seconds before the deadline at which the workers are told to stop (the time a stop takes to
#: reach SCIP in a worker, and its report to come back, on a loaded machine).
STOP_LEAD = 0.2
#: Seconds a worker has to report after a stop request before it is killed.
JOIN_TIMEOUT = 2.0
#: Iterations between two exchanges in deterministic mode.
SYNC_EVERY = 10
#: A worker that ends for one of these reasons ends the whole run.
ENDS_RUN = (StopReason.OPTIMAL, StopReason.TARGET, StopReason.CALLBACK)


class Portfolio:
    """Worker processes (LNS workers, one per selector, then workers of other kinds) improving
    one incumbent; use it as a context manager.

    Parameters
    ----------
    problem : Problem
    selectors : list of Selector
        One per LNS worker (each is pickled into its process). Outside deterministic mode each
        distinct selector is asked to share its statistics between the workers
        (:meth:`lns.core.search.selection.Selector.share_statistics`): the bandit of
        ``selector="adaptive"`` then learns from every worker's plays.
    make_sub_solver : callable
        ``(problem, sub_solve) -> SubSolver``, called in each LNS worker; it must be picklable
        (a module-level function or a :func:`functools.partial` of one).
    seed : int
    stop : Stop
        Asked by each worker with its own iteration count (so ``MaxIterations`` limits each
        worker) and the shared incumbent; it must be picklable.
    started : float
        ``time.perf_counter()`` at which the run started.
    sync_every : int, optional
        Deterministic mode: exchange every this many iterations only (LNS workers only).
    kinds : list, optional
        Workers of other kinds after the LNS ones: names of
        :data:`lns.core.parallel.kinds.KINDS` (``"scip"``, ``"cpsat"``, ``"local_search"``) or
        :class:`lns.core.parallel.kinds.protocol.KindWorker` subclasses. A ``"scip"`` (or
        ``"cpsat"``) worker can prove the incumbent optimal, which ends the run.
    rule : str, optional
        An allocation rule of :data:`lns.core.parallel.allocation.RULES`: only ``cores``
        workers run at once, worker 0 throughout, the others by turns.
    cores : int, optional
        With ``rule``: the workers running at once (default: all of them).
    prior : dict, optional
        With ``rule``: kind -> weight (:meth:`lns.core.parallel.prior.KindPrior.for_problem`),
        the order in which the kinds first hold a core (default: no preference).
    size, sub_solve, loop : SizeParams, SubSolveParams, LoopParams, optional
        The workers' settings (default: each group's defaults).
    early : bool
        With ``background_start``: the workers of other kinds than LNS start at once, without
        an incumbent (:mod:`lns.core.parallel.early`); :meth:`take_early` offers what they
        found.

    Attributes
    ----------
    workers : list of WorkerStats
        Filled in as the workers end.
    exchange_time : float
        Seconds the main process spent checking and passing on solutions.
    """

    def __init__(
        self,
        problem: Problem,
        selectors: list,
        make_sub_solver,
        *,
        seed: int,
        stop: Stop,
        started: float,
        sync_every: int | None = None,
        kinds: list | tuple = (),
        rule: str | None = None,
        cores: int | None = None,
        prior: dict | None = None,
        background_start: bool = False,
        early: bool = False,
        size: SizeParams | None = None,
        sub_solve: SubSolveParams | None = None,
        loop: LoopParams | None = None,
    ):
        if (kinds or rule) and sync_every is not None:
            raise InvalidArgumentError(
                "Portfolio: deterministic mode takes LNS workers only (other kinds are timed)"
            )
        self.context = multiprocessing.get_context("spawn")
        # Asked before the statistics are shared: shared arrays pickle only while spawning.
        self.needs_main = refers_to_main((selectors, make_sub_solver, stop, list(kinds)))
        if sync_every is None:  # shared learning would make deterministic runs differ
            for selector in {id(selector): selector for selector in selectors}.values():
                selector.share_statistics(self.context)
        plan = [(selector, "lns") for selector in selectors] + [(None, kind) for kind in kinds]
        groups = {"size": size, "sub_solve": sub_solve, "loop": loop}
        common = dict(problem=problem, stop=stop, started=started, sync_every=sync_every)
        self.specs = _specs(plan, seed, groups, dict(common, make_sub_solver=make_sub_solver))
        self.problem, self.stop, self.sync_every = problem, stop, sync_every
        weights = None
        if prior is not None:
            weights = {spec.worker: prior.get(spec.kind_name, 1.0) for spec in self.specs}
        self.allocation = _allocation(len(plan), rule, cores, weights)
        self.outbox = self.context.Queue()
        self.inboxes = [self.context.Queue() for _ in self.specs]
        self.processes: list = []
        self.workers: list = [None] * len(self.specs)
        self.records: list = [[] for _ in self.specs]
        self.exchange_time = 0.0
        self.background_start = background_start
        self._starter: threading.Thread | None = None
        self._shared: SharedProblem | None = None
        self._start_error: BaseException | None = None
        self._all_started = threading.Event()
        self._closing = threading.Event()
        self.early = self._early_start() if early and background_start else None
        self.early_improvements = [0] * len(self.specs)
        self.early_messages: list = []
        self._settling = threading.Lock()
        self._settled = False

    def _early_start(self) -> EarlyStart | None:
        """The workers of other kinds that search beside the start search: the slot holders
        first, the others held back for a slice (``None`` without such workers)."""
        others = [spec.worker for spec in self.specs if spec.kind_name != "lns"]
        if not others:
            return None
        early = EarlyStart(self.outbox, self.inboxes, others)
        if self.allocation is not None:
            self.allocation.prefer(others)
            held = self.allocation.paused() & set(others)
            early.hold_back(held, self.allocation.slice_seconds)
        return early

    def __enter__(self) -> Portfolio:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start the worker processes (they build their models, then wait for a start).

        Starting a spawned process waits until it has read its arguments (0.3 s a worker):
        with ``background_start`` a thread starts them, so that the caller finds the first
        solution meanwhile; :meth:`run` and :meth:`close` wait for them. The thread lives
        until :meth:`close`: Linux sends a worker its parent-death signal when the *thread*
        that started it ends (:mod:`lns.core.parallel.worker`).
        """
        if not self.background_start:
            self._start_processes()
            return
        self._starter = threading.Thread(
            target=self._start_in_background, name="lns-portfolio-start", daemon=True
        )
        self._starter.start()

    def _start_in_background(self) -> None:
        try:
            self._start_processes()
            if self.early is not None:
                self.early.begin()
        except BaseException as error:  # raised in the calling thread by _wait_started
            self._start_error = error
        finally:
            self._all_started.set()
        if self.early is not None and self._start_error is None:
            self.early.collect(self._closing)
        self._closing.wait()

    def _wait_started(self) -> None:
        if self._starter is not None:
            self._all_started.wait()
        if self._start_error is not None:
            error, self._start_error = self._start_error, None
            raise error

    def _start_processes(self) -> None:
        self._shared = shared_or_none(self.problem)  # the workers' problem: one copy for all
        problem = self._shared if self._shared is not None else self.problem
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:  # a Ctrl-C while a worker starts up must not reach it before it ignores it
            with main_module_skipped(self.needs_main):
                for spec, inbox in zip(self.specs, self.inboxes, strict=True):
                    process = self.context.Process(
                        target=worker_main,
                        name=f"lns-worker-{spec.worker}",
                        args=(replace(spec, problem=problem), inbox, self.outbox),
                        daemon=True,
                    )
                    process.start()
                    self.processes.append(process)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def take_early(self, incumbent: Incumbent, wait: float = 0.0) -> None:
        """End the early phase: offer the solutions its workers found to ``incumbent`` (each
        checked there); their other messages wait for :meth:`run`. With no incumbent yet,
        first wait up to ``wait`` seconds for a worker's solution."""
        self._wait_started()
        if self.early is None:
            return
        if incumbent.x is None:
            self.early.wait_found(wait)
        for message in self.early.end():
            if message[0] != "found":
                self.early_messages.append(message)
                continue
            worker, x, _, found_at, *_ = message[1:]
            before = incumbent.objective
            if incumbent.offer(x, found_at=found_at, source=self.source(worker)):
                self.early_improvements[worker] += 1
                self.credit(worker, before, incumbent.objective)

    def credit(self, worker: int, before: float | None, after: float | None) -> None:
        """``worker``'s solution took the shared incumbent from ``before`` to ``after``: it
        earns the relative improvement ``|before - after| / max(|before|, |after|)`` in the
        allocation (a first solution earns nothing)."""
        if self.allocation is not None and before is not None and after is not None:
            gain = abs(before - after) / max(abs(before), abs(after), 1e-9)
            self.allocation.credit(worker, gain)

    def settle(self) -> None:
        """At the first solution (once; from any thread): the early workers hold the slots
        first, since the LNS workers wait for the start search's end; those without a slot
        pause. Their time until the LNS workers start is not counted as held."""
        allocation = self.allocation
        if allocation is None or self.early is None:
            return
        with self._settling:
            if self._settled:
                return
            self._settled = True
            allocation.prefer(self.early.workers)
            self.early.pause(set(self.early.workers) & allocation.paused())

    def run(self, incumbent: Incumbent) -> tuple[list, StopReason]:
        """Improve ``incumbent`` (holding a first solution) with the workers until they end.

        Returns every worker's records (worker after worker) and the reason the run ended.
        """
        self.take_early(incumbent)
        run = _Exchange(self, incumbent)
        reason = run.wait()
        # The others did not prove (or reach) what ended the run: they were stopped.
        self.send_all(
            ("stop", reason if reason is StopReason.TIME_LIMIT else StopReason.INTERRUPTED)
        )
        run.collect(time.perf_counter() + JOIN_TIMEOUT)
        return [record for records in self.records for record in records], reason

    def close(self) -> None:
        """Stop the workers: those that reported have nothing more to send and are killed at
        once (their interpreter's exit would take the run past its time limit), the others
        when they do not end within :data:`JOIN_TIMEOUT`."""
        try:
            self._wait_started()
        finally:
            self._close_processes()
            if self._starter is not None:
                self._closing.set()
                self._starter.join()
                self._starter = None

    def _close_processes(self) -> None:
        self.send_all(("stop", StopReason.INTERRUPTED))
        deadline = time.perf_counter() + JOIN_TIMEOUT
        # self.processes holds the workers started so far: all, or the first few when starting
        # one failed.
        for process, stats in zip(self.processes, self.workers, strict=False):
            process.join(0.0 if stats is not None else max(0.0, deadline - time.perf_counter()))
            if process.is_alive():
                process.kill()
                process.join()
        self.workers = [
            stats or _unreported(spec, "killed")
            for spec, stats in zip(self.specs, self.workers, strict=True)
        ]
        for channel in (self.outbox, *self.inboxes):
            channel.close()
            channel.cancel_join_thread()
        if self._shared is not None:  # every worker has ended: none maps the block any more
            self._shared.close()
            self._shared = None

    def source(self, worker: int, arm: str | None = None) -> str:
        """The word for the records and progress lines: ``"worker 2/4 (lns/rins)"``,
        ``"worker 3/4 (cpsat)"``, with the arm of an adaptive selector: ``"worker 2/4
        (lns/adaptive, arm rins@2)"``."""
        specs = self.specs
        name = specs[worker].label if arm is None else f"{specs[worker].label}, arm {arm}"
        return f"worker {worker}/{len(specs)} ({name})"

    def send_all(self, message: tuple) -> None:
        """Put ``message`` in the inbox of every worker still running."""
        for process, inbox in zip(self.processes, self.inboxes, strict=False):
            if process.is_alive():
                inbox.put(message)


class SettleAtFirstSolution(Callback):
    """Added to the main process's incumbent during the start search: at its first solution
    the early workers without a slot pause (:meth:`Portfolio.settle`)."""

    def __init__(self, portfolio: Portfolio):
        self.portfolio = portfolio

    def on_improvement(self, improvement) -> None:
        self.portfolio.settle()


class _Exchange:
    """The main process's side of one :meth:`Portfolio.run`: it receives, checks and passes on."""

    def __init__(self, portfolio: Portfolio, incumbent: Incumbent):
        self.portfolio, self.incumbent = portfolio, incumbent
        self.live = set(range(len(portfolio.specs)))
        self.improvements = list(portfolio.early_improvements)
        self.pending: dict = {}
        self.finals: dict = {}
        self.reason: StopReason | None = None
        portfolio.settle()
        allocation = portfolio.allocation
        if allocation is not None:
            allocation.begin(time.perf_counter())
        self.paused = allocation.paused() if allocation is not None else set()
        early = portfolio.early.workers if portfolio.early is not None else {}
        for worker, inbox in enumerate(portfolio.inboxes):
            if worker in early:  # running since the early start: now the allocation holds
                inbox.put(("incumbent", incumbent.x, incumbent.objective))
                if worker in self.paused:
                    inbox.put(("pause",))
            else:
                inbox.put(("start", incumbent.x, incumbent.objective, worker not in self.paused))
        for message in portfolio.early_messages:
            getattr(self, "_on_" + message[0])(*message[1:])
        portfolio.early_messages.clear()

    def wait(self) -> StopReason:
        """Handle messages until every worker ended, a worker ended the run, or a stop signal."""
        guard, stop, told = active_guard(), self.portfolio.stop, False
        while self.live and self.reason is None:
            if guard is not None and guard.requested:
                return StopReason.INTERRUPTED
            remaining = stop.remaining(_time_state(self.incumbent))
            if remaining < -GRACE:
                return StopReason.TIME_LIMIT
            if remaining <= STOP_LEAD and not told:  # their sub-solves end now, not at their limit
                self.portfolio.send_all(("stop", StopReason.TIME_LIMIT))
                told = True
            self._allocate()
            self._next(timeout=0.05 if told else max(0.001, min(0.05, remaining - STOP_LEAD)))
        self._offer_finals()
        return self.reason or self._last_reason()

    def collect(self, deadline: float) -> None:
        """Take the last reports of the workers still running, until ``deadline``."""
        while self.live and time.perf_counter() < deadline:
            self._next(timeout=0.05)
        self._offer_finals()

    def _next(self, timeout: float) -> None:
        try:
            message = self.portfolio.outbox.get(timeout=timeout)
        except queue.Empty:
            self._reap()
            return
        began = time.perf_counter()
        getattr(self, "_on_" + message[0])(*message[1:])
        self.portfolio.exchange_time += time.perf_counter() - began

    def _allocate(self) -> None:
        """Pause and resume the workers as the allocation decides (a resumed one first gets
        the newest incumbent)."""
        allocation = self.portfolio.allocation
        if allocation is None:
            return
        pause, resume = allocation.step(time.perf_counter())
        self._pause_resume(pause, resume)

    def _pause_resume(self, pause: set, resume: set) -> None:
        if pause or resume:
            log.debug(
                "%s: at %.1f s the cores go from %s to %s",
                self.portfolio.problem.name,
                self.incumbent.elapsed(),
                self._labels(pause),
                self._labels(resume),
            )
        self._send(("pause",), pause & self.live)
        self.paused = (self.paused | pause) - resume
        incumbent = self.incumbent
        for worker in sorted(resume & self.live):
            self._send(("incumbent", incumbent.x, incumbent.objective), {worker})
            self._send(("resume",), {worker})

    def _drop(self, worker: int) -> None:
        """``worker`` ended: its turns go to the others."""
        allocation = self.portfolio.allocation
        if allocation is not None and worker in allocation.candidates:
            before = set(allocation.holding)
            allocation.drop(worker)
            self._pause_resume(set(), set(allocation.holding) - before)

    def _on_found(self, worker, x, objective, found_at, iteration, size, arm) -> None:
        incumbent, before = self.incumbent, self.incumbent.objective
        source = self._source(worker, arm)
        if incumbent.offer(x, found_at=found_at, source=source, iteration=iteration, size=size):
            self.improvements[worker] += 1
            self.portfolio.credit(worker, before, incumbent.objective)
            others = self.live - {worker} - self.paused
            self._send(("incumbent", incumbent.x, incumbent.objective), others)
        elif self.portfolio.problem.is_better(objective, incumbent.objective, 0.0):
            self._send(("reset", incumbent.x, incumbent.objective), {worker})

    def _on_sync(self, worker, x, objective) -> None:
        self.pending[worker] = (x, objective)
        self._complete_round()

    def _on_unavailable(self, worker, message) -> None:
        log.warning(
            "%s: worker %d: %s; the other kinds go on", self.portfolio.problem.name, worker, message
        )

    def _on_done(self, worker, records, stats, x, objective) -> None:
        self.live.discard(worker)
        self._drop(worker)
        self.portfolio.records[worker] = records
        stats.improvements = self.improvements[worker]
        self.portfolio.workers[worker] = stats
        if x is not None:
            self.finals[worker] = (x, objective)
        if self.portfolio.sync_every is None:
            self._offer_finals()
        if stats.stop_reason in ENDS_RUN and self.reason is None:
            self.reason = StopReason(stats.stop_reason)
        self._complete_round()

    def _complete_round(self) -> None:
        """Deterministic mode: once every running worker waits, offer the best and send it back."""
        if not self.pending or not self.live <= set(self.pending):
            return
        problem, pending = self.portfolio.problem, self.pending
        best, *others = sorted(pending)
        for worker in others:
            if problem.is_better(pending[worker][1], pending[best][1], 0.0):
                best = worker
        self._offer(best, *pending[best])
        self._send(("incumbent", self.incumbent.x, self.incumbent.objective), set(self.pending))
        self.pending.clear()

    def _offer_finals(self) -> None:
        """Offer the workers' last incumbents, in worker order."""
        for worker in sorted(self.finals):
            self._offer(worker, *self.finals[worker])
        self.finals.clear()

    def _offer(self, worker: int, x, objective) -> None:
        if self.portfolio.problem.is_better(objective, self.incumbent.objective, 0.0):
            if self.incumbent.offer(x, found_at=time.perf_counter(), source=self._source(worker)):
                self.improvements[worker] += 1

    def _source(self, worker: int, arm: str | None = None) -> str:
        return self.portfolio.source(worker, arm)

    def _labels(self, workers: set) -> str:
        specs = self.portfolio.specs
        return ", ".join(f"{w} ({specs[w].label})" for w in sorted(workers)) or "none"

    def _send(self, message: tuple, workers: set) -> None:
        for worker in sorted(workers):
            self.portfolio.inboxes[worker].put(message)

    def _reap(self) -> None:
        """Note the workers whose process died without reporting."""
        for worker in sorted(self.live):
            process = self.portfolio.processes[worker]
            if not process.is_alive():
                log.warning(
                    "%s: worker %d died (exit code %s); the run goes on without it",
                    self.portfolio.problem.name,
                    worker,
                    process.exitcode,
                )
                self.live.discard(worker)
                self._drop(worker)
                spec = self.portfolio.specs[worker]
                self.portfolio.workers[worker] = _unreported(
                    spec, "crashed", self.improvements[worker]
                )
                self._complete_round()

    def _last_reason(self) -> StopReason:
        reasons = [
            StopReason(stats.stop_reason)
            for stats in self.portfolio.workers
            if stats is not None and stats.stop_reason in StopReason._value2member_map_
        ]
        return reasons[0] if reasons else StopReason.FAILURES


def _unreported(spec: WorkerSpec, reason: str, improvements: int = 0) -> WorkerStats:
    """The statistics of a worker that did not report (``"crashed"``, or ``"killed"`` when it
    did not end in time after the run); its iterations and times are unknown (0)."""
    return WorkerStats(
        worker=spec.worker,
        selector=spec.name,
        stop_reason=reason,
        improvements=improvements,
        kind=spec.kind_name,
    )


def _specs(plan: list, seed: int, groups: dict, common: dict) -> list:
    """The :class:`WorkerSpec` of each ``(selector, kind)`` of ``plan``, with its own seed, the
    parameter ``groups`` given (``None``: the group's defaults) and the fields of ``common``."""
    seeds = np.random.SeedSequence(seed).spawn(len(plan))
    given = {name: group for name, group in groups.items() if group is not None}
    return [
        WorkerSpec(
            worker=i,
            seed=seeds[i],
            parent=os.getpid(),
            kind=kind,
            selector=selector,
            **given,
            **common,
        )
        for i, (selector, kind) in enumerate(plan)
    ]


def _allocation(
    count: int, rule: str | None, cores: int | None, weights: dict | None = None
) -> Allocation | None:
    """The allocation of ``count`` workers to ``cores`` by ``rule`` (``None``: all run), with
    the prior's ``weights`` per worker."""
    if rule is None:
        return None
    if rule not in RULES:
        raise UnknownNameError("allocation rule", rule, tuple(RULES))
    cores = count if cores is None else max(1, min(cores, count))
    return Allocation(list(range(1, count)), cores - 1, RULES[rule](), weights=weights)


def _time_state(incumbent: Incumbent) -> StopState:
    return stop_state(incumbent, 0)
