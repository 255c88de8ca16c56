"""The portfolio's workers of other kinds search before a first solution exists.

The LNS workers need an incumbent; CP-SAT, Local-MIP and SCIP do not. While the main process
looks for the first solution (:mod:`lns.core.search.start`), :class:`EarlyStart` starts those
workers without one and collects what they send. A solution of theirs calls ``on_found``,
with which the caller ends its start search while that has none of its own; the solutions are
checked and offered to the incumbent (:meth:`lns.core.parallel.portfolio.Portfolio.take_early`)
before the LNS workers start, and the other messages are handed to the exchange that follows.

No more of them search at once than the allocation has slots: the start search, which finds
most first solutions within seconds, needs its core. The others start paused
(:meth:`EarlyStart.hold_back`) and join the search only if no solution came within a slice, when
finding one at all is what matters.

Once a first solution exists (the start search's or an early worker's), only as many of them
keep running as the allocation has slots (:meth:`EarlyStart.pause`): the start search goes on
until its stall rule ends it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from lns.core.interrupt import active_guard


class EarlyStart:
    """The early phase of a portfolio: the workers in ``workers`` search from no solution.

    Parameters
    ----------
    outbox : multiprocessing.Queue
        The workers' messages to the main process.
    inboxes : list of multiprocessing.Queue
    workers : list of int
        The workers that start early (the LNS workers wait meanwhile, so the allocation of
        :mod:`lns.core.parallel.allocation` holds from the exchange on).

    Attributes
    ----------
    on_found : callable or None
        Called (from the collecting thread) when a worker sends a solution.
    messages : list
        What the workers sent, in order, until :meth:`end`.
    """

    def __init__(self, outbox, inboxes: list, workers: list):
        self.outbox, self.inboxes, self.workers = outbox, inboxes, list(workers)
        self.on_found: Callable[[], object] | None = None
        self.messages: list = []
        self.found = threading.Event()
        self.paused: set = set()
        self.held: set = set()
        self.join_after = 0.0
        self._begun_at: float | None = None
        self._lock = threading.Lock()
        self._ending = threading.Event()
        self._ended = threading.Event()

    def begin(self) -> None:
        """Start the workers without an incumbent (those :meth:`pause` named, paused)."""
        with self._lock:
            self._begun_at = time.perf_counter()
            for worker in self.workers:
                self.inboxes[worker].put(("start", None, None, worker not in self.paused))

    def hold_back(self, workers: set, seconds: float) -> None:
        """Start ``workers`` paused (call before :meth:`begin`); they join the search if, at
        ``seconds`` after :meth:`begin`, no worker has sent a solution and :meth:`pause` (the
        first solution) was not called."""
        with self._lock:
            self.held = set(workers)
            self.paused |= self.held
            self.join_after = seconds

    def pause(self, workers: set) -> None:
        """Pause ``workers`` (before or after :meth:`begin`): a first solution exists, and the
        allocation gives them no core. The held-back workers no longer join."""
        with self._lock:
            self.held = set()
            for worker in sorted(set(workers) - self.paused):
                self.paused.add(worker)
                if self._begun_at is not None:
                    self.inboxes[worker].put(("pause",))

    def _join_if_due(self) -> None:
        """Resume the held-back workers once :attr:`join_after` passed without a solution."""
        with self._lock:
            begun, due = self._begun_at, self.held and not self.found.is_set()
            if not due or begun is None or time.perf_counter() - begun < self.join_after:
                return
            for worker in sorted(self.held):
                self.paused.discard(worker)
                self.inboxes[worker].put(("resume",))
            self.held = set()

    def collect(self, closing: threading.Event) -> None:
        """Keep the workers' messages until :meth:`end` (or ``closing``); run in a thread."""
        try:
            while not (self._ending.is_set() or closing.is_set()):
                self._join_if_due()
                try:
                    message = self.outbox.get(timeout=0.05)
                except queue.Empty:
                    continue
                self.messages.append(message)
                if message[0] == "found":
                    self.found.set()
                    if self.on_found is not None:
                        self.on_found()
        finally:
            self._ended.set()

    def wait_found(self, seconds: float) -> None:
        """Wait until a worker sent a solution, ``seconds`` pass, or a stop signal came."""
        guard, deadline = active_guard(), time.perf_counter() + seconds
        while not self.found.wait(min(0.05, max(0.0, deadline - time.perf_counter()))):
            if time.perf_counter() >= deadline or (guard is not None and guard.requested):
                return

    def end(self) -> list:
        """Stop collecting; the messages kept (once: later calls return nothing)."""
        self._ending.set()
        self._ended.wait()
        messages, self.messages = self.messages, []
        return messages
