"""One worker process of the portfolio (:mod:`lns.core.portfolio`): the LNS loop on its own model
(:class:`LnsWorker`), or plain SCIP on the whole problem (:class:`CompleteWorker`).

An LNS worker runs :func:`lns.core.loop.run_lns` with its own selector, sub-solver and seed. Its
incumbent does not check solutions (the main process checks each one once); between two
iterations the loop's ``exchange`` hook sends the worker's new incumbent to the main process
and takes the shared incumbent from it. The worker ignores the stop signals (the main process
catches them and tells the workers to stop), and dies with the main process (Linux:
``PR_SET_PDEATHSIG``), so that no worker outlives a run, even after ``kill -9`` of the main
process.

Messages, as tuples whose first item names them. To the main process: ``("found", worker, x,
objective, found_at, iteration, size, arm)`` (``arm``: the adaptive selector's arm, or
``None``), ``("sync", worker, x, objective)`` (deterministic
mode, every ``sync_every`` iterations) and ``("done", worker, records, stats, x, objective)``.
To a worker: ``("start", x, objective)``, ``("incumbent", x, objective)`` (take it if better;
in deterministic mode always), ``("reset", x, objective)`` (take it: the main process refused
the worker's own solution) and ``("stop", reason)``.
"""

from __future__ import annotations

import ctypes
import logging
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lns.core.config import LNSConfig
from lns.core.incumbent import ImprovingOnly, Incumbent
from lns.core.interrupt import STOP_SIGNALS
from lns.core.loop import as_status, run_lns, stop_state
from lns.core.problem import Problem
from lns.core.result import Callback, WorkerStats
from lns.core.selection import Selector
from lns.core.stop import Stop, StopReason
from lns.core.subsolver import SEED_BOUND

#: Seconds of the complete worker's first solve (each restart doubles them).
FIRST_SEGMENT = 10.0
log = logging.getLogger("lns")

#: ``prctl`` option: the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


@dataclass
class WorkerSpec:
    """What a worker process is started with (pickled by ``multiprocessing``).

    ``make_sub_solver(problem, config)`` builds the worker's sub-solver; ``seed`` is its
    :class:`numpy.random.SeedSequence`; ``started`` the run's ``time.perf_counter()`` (a
    system-wide clock on Linux); ``sync_every`` the iterations between two exchanges in
    deterministic mode (``None``: exchange whenever a solution is found); ``complete`` makes it
    a :class:`CompleteWorker` (its ``selector`` is then unused).
    """

    worker: int
    problem: Problem
    selector: Selector
    make_sub_solver: Callable
    config: LNSConfig
    seed: np.random.SeedSequence
    stop: Stop
    started: float
    parent: int
    sync_every: int | None = None
    complete: bool = False

    @property
    def name(self) -> str:
        """Its selector's name, ``"scip"`` for the complete worker."""
        return "scip" if self.complete else self.selector.name


def worker_main(spec: WorkerSpec, inbox, outbox) -> None:
    """The target of a worker process: run the loop, then report its records and statistics."""
    detach(spec.parent)
    worker = (CompleteWorker if spec.complete else LnsWorker)(spec, inbox, outbox)
    records, reason = worker.run()
    if reason is StopReason.INTERRUPTED and worker.told is not None:
        reason = worker.told  # the main process stopped the sub-solve, e.g. at the time limit
    if spec.sync_every is None:
        worker.share(len(records) - 1)
    stats = WorkerStats(
        spec.worker,
        spec.name,
        len(records) + worker.solves,
        0,
        time.perf_counter() - worker.began,
        worker.exchange_time,
        str(reason),
    )
    incumbent = worker.incumbent
    outbox.put(("done", spec.worker, records, stats, incumbent.x, incumbent.objective))


def detach(parent: int) -> None:
    """Ignore the stop signals (blocked by the main process while it started this one), and
    die with the main process."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    die_with_parent(parent)


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent (process ``parent``) ends, however it
    ends.

    Linux only (``prctl(PR_SET_PDEATHSIG, SIGKILL)``); elsewhere nothing is done. A parent that
    died before the call is caught by comparing the parent id, and this process exits at once.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            log.warning("prctl(PR_SET_PDEATHSIG) failed: %s", os.strerror(ctypes.get_errno()))
    if os.getppid() != parent:
        os._exit(1)


class LnsWorker(Callback):
    """The loop of one worker, with its ``exchange`` hook and the thread that reads its inbox."""

    def __init__(self, spec: WorkerSpec, inbox, outbox):
        self.spec, self.outbox = spec, outbox
        self.messages: queue.Queue = queue.Queue()
        self.exchange_time, self.began = 0.0, time.perf_counter()
        self.last_size, self.solves = 0, 0
        self.last_arm: str | None = None
        problem, config = spec.problem, spec.config
        self.incumbent = Incumbent(
            problem,
            spec.started,
            ImprovingOnly(config.improvement_tol),
            config.history_length,
            check=False,
        )
        self.sub_solver = spec.make_sub_solver(problem, config)
        self.shared: np.ndarray | None = None
        self.told: StopReason | None = None
        threading.Thread(target=self._listen, args=(inbox,), daemon=True).start()

    def run(self) -> tuple[list, StopReason]:
        message = self.messages.get()
        self.began = time.perf_counter()
        if message[0] == "stop":
            return [], message[1]
        self._adopt(message[1], message[2], -1)
        return self.search(np.random.default_rng(self.spec.seed))

    def search(self, rng: np.random.Generator) -> tuple[list, StopReason]:
        """Improve the incumbent until a reason to stop: the LNS loop."""
        spec = self.spec
        return run_lns(
            spec.problem,
            spec.selector,
            self.sub_solver,
            self.incumbent,
            config=spec.config,
            rng=rng,
            stop=spec.stop,
            callbacks=[self],
            exchange=self.exchange,
        )

    def _listen(self, inbox) -> None:
        """Pass the main process's messages on; a stop also ends the sub-solve in progress."""
        while True:
            message = inbox.get()
            self.messages.put(message)
            if message[0] == "stop":
                self.told = message[1]
                self.sub_solver.stop()
                return

    def on_selection(self, state, size, neighborhood) -> None:
        self.last_arm = neighborhood.info.get("arm")

    def on_iteration(self, record) -> None:
        self.last_size = record.neighborhood_size

    def exchange(self, iterations: int) -> StopReason | None:
        """The loop's hook: share and take solutions; a reason to stop, or ``None``."""
        began = time.perf_counter()
        try:
            if self.spec.sync_every is None:
                self.share(iterations - 1)
                return self._receive(block=False)
            if iterations and iterations % self.spec.sync_every == 0:
                self.outbox.put(
                    ("sync", self.spec.worker, self.incumbent.x, self.incumbent.objective)
                )
                return self._receive(block=True)
            return None
        finally:
            self.exchange_time += time.perf_counter() - began

    def share(self, iteration: int) -> None:
        """Send the incumbent to the main process if it is this worker's own new one."""
        incumbent = self.incumbent
        if incumbent.x is not self.shared:
            self.outbox.put(
                (
                    "found",
                    self.spec.worker,
                    incumbent.x,
                    incumbent.objective,
                    incumbent.improved_at,
                    iteration,
                    self.last_size,
                    self.last_arm,
                )
            )
            self.shared = incumbent.x

    def _receive(self, block: bool) -> StopReason | None:
        """Take the messages waiting (with ``block``: wait for one); a stop's reason or ``None``."""
        try:
            while True:
                message = self.messages.get(block=block)
                block = False
                kind = message[0]
                if kind == "stop":
                    return message[1]
                better = self.spec.problem.is_better(message[2], self.incumbent.objective, 0.0)
                if better or kind == "reset" or self.spec.sync_every is not None:
                    self._adopt(message[1], message[2], -1)
        except queue.Empty:
            return None

    def _adopt(self, x: np.ndarray, objective: float, iteration: int) -> None:
        self.incumbent.adopt(x, objective, iteration)
        self.shared = self.incumbent.x


class CompleteWorker(LnsWorker):
    """Plain SCIP on the whole problem, restarted from the newest shared incumbent.

    Each solve starts from the shared incumbent, which is also its cutoff, and runs for
    :data:`FIRST_SEGMENT` seconds, twice as long as the one before after each restart (so at
    most about half of its time is spent repeating work that a restart discards). Its solutions
    are sent to the main process as SCIP finds them. When a solve ends proven (optimal, or
    infeasible under the cutoff), the incumbent is optimal: the worker ends with
    ``StopReason.OPTIMAL``, which ends the run. Records are not kept; ``iterations`` in its
    statistics counts its solves.
    """

    def search(self, rng: np.random.Generator) -> tuple[list, StopReason]:
        segment = FIRST_SEGMENT
        while True:
            reason = self._receive(block=False)
            time_left = self.spec.stop.remaining(stop_state(self.incumbent, 0))
            if reason is not None or time_left <= 0:
                return [], reason or StopReason.TIME_LIMIT
            outcome = self.sub_solver.solve(
                time_limit=min(segment, time_left),
                seed=int(rng.integers(SEED_BOUND)),
                start=self.incumbent.x,
                on_found=self._found,
            )
            self.solves += 1
            status = as_status(outcome.status)
            if status.proven:
                return [], StopReason.OPTIMAL
            if not status.usable_after:
                return [], StopReason.SUB_SOLVER_ABANDONED
            segment *= 2

    def _found(self, found) -> None:
        """A solution of SCIP's (from its thread): to the incumbent and on to the main process."""
        if self.incumbent.offer(found.x, found.time, -1, 0, "scip"):
            self.share(-1)
