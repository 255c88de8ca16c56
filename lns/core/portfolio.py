"""A parallel portfolio: LNS workers in separate processes that share one checked incumbent.

As CP-SAT's portfolio (``num_workers``), the workers share solutions, not state: each
process (:mod:`lns.core.portfolio_worker`) holds its own model and runs the LNS loop with its
own selector and seed (``SeedSequence(seed).spawn(n)``). Every solution a worker finds is sent
to the main process, checked there once against the original problem by the run's
:class:`lns.core.incumbent.Incumbent`, and, when it becomes the incumbent, sent to the other
workers, which take it before their next iteration.

With ``sync_every=K`` (deterministic mode, as CP-SAT's interleaved search) the workers
exchange only every ``K`` iterations: each sends its incumbent and waits; the main process
offers the best one (ties: the lowest worker number) and sends the incumbent back to all. With
iteration and node limits (and no time limit reached), a seeded run then repeats exactly.
A complete worker (``complete_worker=True``) runs plain SCIP on the whole problem instead, from
the shared incumbent; its proof of optimality ends the run.

Processes are started with the ``spawn`` method (forking a process that already runs SCIP,
HiGHS or threads is unsafe); they import the calling script only when what they are sent
refers to it (:mod:`lns.core.spawn_main`). The main process catches the stop signals
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

import numpy as np

from lns.core.config import LNSConfig
from lns.core.incumbent import Incumbent
from lns.core.interrupt import STOP_SIGNALS, active_guard
from lns.core.loop import stop_state
from lns.core.portfolio_worker import WorkerSpec, worker_main
from lns.core.problem import Problem
from lns.core.result import WorkerStats
from lns.core.spawn_main import main_module_skipped, refers_to_main
from lns.core.stop import Stop, StopReason, StopState

log = logging.getLogger("lns")

#: Seconds past the deadline after which the main process stops waiting for the workers
#: (a sub-solve returns at most about a second after its time limit, see lns.core.watchdog).
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
    """Worker processes (one per selector, and a complete one) improving one incumbent; use it as
    a context manager.

    Parameters
    ----------
    problem : Problem
    selectors : list of Selector
        One per worker (each is pickled into its process). Outside deterministic mode each
        distinct selector is asked to share its statistics between the workers
        (:meth:`lns.core.selection.Selector.share_statistics`): the bandit of
        ``selector="adaptive"`` then learns from every worker's plays.
    make_sub_solver : callable
        ``(problem, config) -> SubSolver``, called in each worker; it must be picklable (a
        module-level function or a :func:`functools.partial` of one).
    config : LNSConfig
    seed : int
    stop : Stop
        Asked by each worker with its own iteration count (so ``MaxIterations`` limits each
        worker) and the shared incumbent; it must be picklable.
    started : float
        ``time.perf_counter()`` at which the run started.
    sync_every : int, optional
        Deterministic mode: exchange every this many iterations only.
    complete_worker : bool
        Add a worker that runs plain SCIP on the whole problem
        (:class:`lns.core.portfolio_worker.CompleteWorker`), the last one; it can prove the
        incumbent optimal, which ends the run. Not with ``sync_every`` (its solves are timed).

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
        config: LNSConfig,
        seed: int,
        stop: Stop,
        started: float,
        sync_every: int | None = None,
        complete_worker: bool = False,
        background_start: bool = False,
    ):
        if complete_worker and sync_every is not None:
            raise ValueError("Portfolio: a complete worker cannot take part in deterministic mode")
        self.context = multiprocessing.get_context("spawn")
        # Asked before the statistics are shared: shared arrays pickle only while spawning.
        self.needs_main = refers_to_main((selectors, make_sub_solver, stop))
        if sync_every is None:  # shared learning would make deterministic runs differ
            for selector in {id(selector): selector for selector in selectors}.values():
                selector.share_statistics(self.context)
        kinds = [(selector, False) for selector in selectors] + [(None, True)] * complete_worker
        seeds = np.random.SeedSequence(seed).spawn(len(kinds))
        self.specs = [
            WorkerSpec(
                i,
                problem,
                selector,
                make_sub_solver,
                config,
                seeds[i],
                stop,
                started,
                os.getpid(),
                sync_every,
                complete,
            )
            for i, (selector, complete) in enumerate(kinds)
        ]
        self.problem, self.stop, self.sync_every = problem, stop, sync_every
        self.outbox = self.context.Queue()
        self.inboxes = [self.context.Queue() for _ in self.specs]
        self.processes: list = []
        self.workers: list = [None] * len(self.specs)
        self.records: list = [[] for _ in self.specs]
        self.exchange_time = 0.0
        self.background_start = background_start
        self._starter: threading.Thread | None = None
        self._start_error: BaseException | None = None
        self._all_started = threading.Event()
        self._closing = threading.Event()

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
        that started it ends (:mod:`lns.core.portfolio_worker`).
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
        except BaseException as error:  # raised in the calling thread by _wait_started
            self._start_error = error
        finally:
            self._all_started.set()
        self._closing.wait()

    def _wait_started(self) -> None:
        if self._starter is not None:
            self._all_started.wait()
        if self._start_error is not None:
            error, self._start_error = self._start_error, None
            raise error

    def _start_processes(self) -> None:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:  # a Ctrl-C while a worker starts up must not reach it before it ignores it
            with main_module_skipped(self.needs_main):
                for spec, inbox in zip(self.specs, self.inboxes, strict=True):
                    process = self.context.Process(
                        target=worker_main,
                        name=f"lns-worker-{spec.worker}",
                        args=(spec, inbox, self.outbox),
                        daemon=True,
                    )
                    process.start()
                    self.processes.append(process)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def run(self, incumbent: Incumbent) -> tuple[list, StopReason]:
        """Improve ``incumbent`` (holding a first solution) with the workers until they end.

        Returns every worker's records (worker after worker) and the reason the run ended.
        """
        self._wait_started()
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

    def send_all(self, message: tuple) -> None:
        """Put ``message`` in the inbox of every worker still running."""
        for process, inbox in zip(self.processes, self.inboxes, strict=False):
            if process.is_alive():
                inbox.put(message)


class _Exchange:
    """The main process's side of one :meth:`Portfolio.run`: it receives, checks and passes on."""

    def __init__(self, portfolio: Portfolio, incumbent: Incumbent):
        self.portfolio, self.incumbent = portfolio, incumbent
        self.live = set(range(len(portfolio.specs)))
        self.improvements = [0] * len(portfolio.specs)
        self.pending: dict = {}
        self.finals: dict = {}
        self.reason: StopReason | None = None
        portfolio.send_all(("start", incumbent.x, incumbent.objective))

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

    def _on_found(self, worker, x, objective, found_at, iteration, size, arm) -> None:
        incumbent = self.incumbent
        if incumbent.offer(x, found_at, iteration, size, self._source(worker, arm)):
            self.improvements[worker] += 1
            self._send(("incumbent", incumbent.x, incumbent.objective), self.live - {worker})
        elif self.portfolio.problem.is_better(objective, incumbent.objective, 0.0):
            self._send(("reset", incumbent.x, incumbent.objective), {worker})

    def _on_sync(self, worker, x, objective) -> None:
        self.pending[worker] = (x, objective)
        self._complete_round()

    def _on_done(self, worker, records, stats, x, objective) -> None:
        self.live.discard(worker)
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
            if self.incumbent.offer(x, time.perf_counter(), -1, 0, self._source(worker)):
                self.improvements[worker] += 1

    def _source(self, worker: int, arm: str | None = None) -> str:
        """The word for the records and progress lines: ``"worker 2/4 (rins)"``, with the arm
        of an adaptive selector: ``"worker 2/4 (adaptive, arm rins@2)"``."""
        specs = self.portfolio.specs
        name = specs[worker].name if arm is None else f"{specs[worker].name}, arm {arm}"
        return f"worker {worker}/{len(specs)} ({name})"

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
    return WorkerStats(spec.worker, spec.name, 0, improvements, 0.0, 0.0, reason)


def _time_state(incumbent: Incumbent) -> StopState:
    return stop_state(incumbent, 0)
