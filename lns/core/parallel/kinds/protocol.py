"""What every worker kind of the portfolio shares: the messages, the shared incumbent, pausing.

A worker kind is a subclass of :class:`KindWorker` in a module of its own
(:mod:`lns.core.parallel.kinds`) that implements :meth:`KindWorker.search`: improve
``self.incumbent`` until a reason to stop, calling :meth:`KindWorker.share` whenever it holds a
new solution of its own (which goes to the main process, where it is checked once against the
original problem) and :meth:`KindWorker.take` between two steps of its search (which takes the
shared incumbent and waits while the worker is paused). It may implement :meth:`KindWorker.prepare`
(build its model in the worker process; raise :class:`KindUnavailable` when the kind cannot
run on this problem or here) and :meth:`KindWorker.interrupt` (end the step in progress at
once: a stop or a pause arrived).

Messages to a worker, as tuples whose first item names them: ``("start", x, objective,
active)``, ``("incumbent", x, objective)`` (take it if better; in deterministic mode always),
``("reset", x, objective)`` (take it: the main process refused the worker's own solution),
``("pause",)``, ``("resume",)`` (the allocation of :mod:`lns.core.parallel.allocation` gives
the worker's core to another kind, or back) and ``("stop", reason)``. To the main process:
``("found", worker, x, objective, found_at, iteration, size, arm)``, ``("sync", worker, x,
objective)`` (deterministic mode) and ``("done", worker, records, stats, x, objective)``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lns.core.errors import UnsupportedProblemError
from lns.core.problem.mip import Problem
from lns.core.search.incumbent import ImprovingOnly, Incumbent
from lns.core.search.params import LoopParams, SizeParams, SubSolveParams
from lns.core.search.selection import Selector
from lns.core.search.stop import Stop, StopReason


@dataclass(kw_only=True)
class WorkerSpec:
    """What a worker process is started with (pickled by ``multiprocessing``), built by keyword.

    Attributes
    ----------
    worker : int
        Its number, from 0.
    problem : Problem
    seed : numpy.random.SeedSequence
        Its own seed.
    stop : Stop
        The run's stop rule, asked with the worker's own iteration count.
    started : float
        The run's ``time.perf_counter()`` (a system-wide clock on Linux).
    parent : int
        The main process's id (the worker dies with it).
    kind : str or type
        The kind of search: a name of :data:`lns.core.parallel.kinds.KINDS` or a
        :class:`KindWorker` subclass.
    selector : Selector or None
        An LNS worker's selector (``None`` for the other kinds).
    make_sub_solver : callable or None
        ``(problem, sub_solve) -> SubSolver``, an LNS worker's sub-solver (``None`` for the
        other kinds).
    size, sub_solve, loop : SizeParams, SubSolveParams, LoopParams
        The run's settings of the neighborhood size, the sub-solves (a ``scip`` worker takes
        their ``scip_params``) and the loop.
    sync_every : int or None
        Iterations between two exchanges in deterministic mode (``None``: exchange whenever a
        solution is found).
    """

    worker: int
    problem: Problem
    seed: np.random.SeedSequence
    stop: Stop
    started: float
    parent: int
    kind: Any = "lns"  # a name, or a KindWorker subclass
    selector: Selector | None = None
    make_sub_solver: Callable | None = None
    size: SizeParams = field(default_factory=SizeParams)
    sub_solve: SubSolveParams = field(default_factory=SubSolveParams)
    loop: LoopParams = field(default_factory=LoopParams)
    sync_every: int | None = None

    @property
    def kind_name(self) -> str:
        """The kind's name (``"lns"``, ``"cpsat"``, ...)."""
        return self.kind if isinstance(self.kind, str) else self.kind.kind

    @property
    def name(self) -> str:
        """Its selector's name for an LNS worker, else its kind's."""
        if self.kind_name == "lns" and self.selector is not None:
            return self.selector.name
        return self.kind_name

    @property
    def label(self) -> str:
        """What progress lines call it: ``"lns/random"``, ``"cpsat"``, ``"local_search"``."""
        return f"lns/{self.name}" if self.kind_name == "lns" else self.kind_name


class KindUnavailable(UnsupportedProblemError):
    """A worker kind cannot run: its package is missing, or the problem is outside what it
    solves (a model OR-Tools cannot read). The message is one line saying why."""


class KindWorker:
    """One worker process's search and its side of the exchange with the main process.

    Parameters
    ----------
    spec : WorkerSpec
        What the worker was started with (its problem, seed, stop rule, ...).
    inbox, outbox : multiprocessing.Queue
        Messages from and to the main process.

    Attributes
    ----------
    kind : str
        The kind's name (``"lns"``, ``"scip"``, ``"cpsat"``, ``"local_search"``).
    incumbent : Incumbent
        The worker's incumbent; it does not check solutions (the main process does).
    solves, found, received : int
        Whole-problem solves (or slices) run, solutions sent to the main process and shared
        incumbents taken from it.
    paused_time : float
        Seconds the worker waited paused, its core given to another worker.
    """

    kind = ""

    def __init__(self, spec: WorkerSpec, inbox, outbox):
        self.spec, self.outbox = spec, outbox
        self.messages: queue.Queue = queue.Queue()
        self.exchange_time, self.began, self.paused_time = 0.0, time.perf_counter(), 0.0
        self.solves = self.found = self.received = 0
        self.last_size, self.last_arm = 0, None
        self.incumbent = Incumbent(
            spec.problem,
            spec.started,
            ImprovingOnly(spec.loop.improvement_tol),
            spec.loop.history_length,
            check=False,
        )
        self.shared: np.ndarray | None = None
        self.told: StopReason | None = None
        self.running = threading.Event()
        self.running.set()
        self.prepare()
        threading.Thread(target=self._listen, args=(inbox,), daemon=True).start()

    def prepare(self) -> None:
        """Build what the search needs, in the worker process (before the start message)."""

    def search(self, rng: np.random.Generator) -> tuple[list, StopReason]:
        """Improve the incumbent until a reason to stop; the records (LNS iterations, or
        ``[]``) and the reason."""
        raise NotImplementedError

    def interrupt(self) -> None:
        """End the step in progress now (called from the listening thread on a stop or pause)."""

    def run(self) -> tuple[list, StopReason]:
        """Wait for the start, take its incumbent, then :meth:`search`."""
        message = self.messages.get()
        self.began = time.perf_counter()
        if message[0] == "stop":
            return [], message[1]
        if message[1] is not None:  # else an early start (lns.core.parallel.early)
            self._adopt(message[1], message[2], -1)
        if not message[3]:
            self.running.clear()
        return self.search(np.random.default_rng(self.spec.seed))

    def _listen(self, inbox) -> None:
        """Pass the main process's messages on; a stop or pause also ends the step in progress."""
        while True:
            message = inbox.get()
            kind = message[0]
            if kind == "pause":
                self.running.clear()
                self.interrupt()
            elif kind == "resume":
                self.running.set()
            else:
                self.messages.put(message)
            if kind == "stop":
                self.told = message[1]
                self.running.set()
                self.interrupt()
                return

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
            self.found += 1

    def take(self, block: bool = False) -> StopReason | None:
        """Wait while paused, then take the messages waiting (with ``block``: wait for one);
        the reason of a stop, or ``None``."""
        if not self.running.is_set():
            paused = time.perf_counter()
            self.running.wait()
            self.paused_time += time.perf_counter() - paused
        began = time.perf_counter()
        try:
            return self._receive(block)
        finally:
            self.exchange_time += time.perf_counter() - began

    def _receive(self, block: bool) -> StopReason | None:
        try:
            while True:
                message = self.messages.get(block=block)
                block = False
                kind = message[0]
                if kind == "stop":
                    return message[1]
                better = self.spec.problem.is_better(message[2], self.incumbent.objective, 0.0)
                if better or kind == "reset" or self.spec.sync_every is not None:
                    self.received += better
                    self._adopt(message[1], message[2], -1)
        except queue.Empty:
            return None

    def _adopt(self, x: np.ndarray, objective: float, iteration: int) -> None:
        self.incumbent.adopt(x, objective, iteration)
        self.shared = self.incumbent.x

    def held(self) -> float:
        """Seconds since the start, less those paused."""
        return time.perf_counter() - self.began - self.paused_time
