"""A time limit that holds whatever the solver does.

A solver can ignore its own time limit and every interrupt: SCIP with a NaN objective
coefficient loops inside ``SCIPsolve`` forever. A call that never returns cannot be
stopped from Python, so each solve runs in a worker thread while the calling thread
waits with a deadline: ``time_limit + grace`` seconds after the start the solver is asked
to stop (its interrupt hook, sent again every ``grace / 5`` seconds, since a request that
arrives before the solver listens is lost); if it still runs ``grace`` seconds later (or
:data:`CLEAN_UP_SHARE` of its time limit, if more: the time to free a long solve's search
tree), it is abandoned (as it is when it ignores a stop request for ``patience`` seconds). The
worker is a daemon thread, so an abandoned solve does not keep the process alive, and the
object it runs in must not be touched again: the owner checks :attr:`Watchdog.abandoned`
and refuses further solves.

One resident worker thread serves every solve of a sub-solver (a thread per solve costs
more: SCIP's allocations start cold in each new thread), and the waiting thread sleeps on
a bare lock (one wake-up). What remains is two thread wake-ups per solve: on 200 sub-solves
of p0201 with 90% of its variables fixed (about 1.3 ms each), the median solve took 1.05 to
1.11 times as long as in the calling thread, the mean 1.3 to 1.7 times, on a shared
machine with 2.5 runnable processes per core, where a wake-up may wait for a core
(``benchmarks/test_sub_solve_overhead.py`` measures it).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import weakref
from collections.abc import Callable

from lns.core.errors import InvalidArgumentError
from lns.core.interrupt import active_guard
from lns.core.solvers.protocol import SolveStatus, SubSolverAbandonedError

#: Seconds a solve may run past its limit before it is asked to stop, then before it is abandoned.
GRACE_SECONDS = 0.5
#: After a long solve, freeing its search tree takes a share of its time (SCIP on seymour: 0.26 s
#: after 10 s, 0.46 s after 15 s on a loaded machine): a solve is abandoned no sooner than this
#: share of its time limit after it was asked to stop, so that a healthy solve that is freeing
#: its tree is not; a solve of the whole problem is given that much less time.
CLEAN_UP_SHARE = 0.02
#: Seconds a solve may take to honour a stop request before it is abandoned (SCIP's
#: ``interruptSolve`` is checked between LP solves: on air05, Ctrl-C during the root LP took 2.5 s
#: on a loaded machine, before the SCIP sub-solver also ended the LP itself,
#: :mod:`lns.core.solvers.scip.lp_interrupt`).
STOP_PATIENCE_SECONDS = 5.0


class _Job:
    """One call to run in the worker thread, and a wait for its end.

    The end is signalled through a bare lock, held from the start and released by the worker:
    one wake-up of the waiting thread, where an ``Event`` (a condition variable) takes two.
    """

    def __init__(self, work: Callable[[], object]):
        self.work: Callable[[], object] | None = work
        self.error: BaseException | None = None
        self._running = threading.Lock()
        self._running.acquire()
        self._ended = False

    def execute(self) -> None:
        try:
            self.work()  # type: ignore[misc]  # set until the job has run
        except BaseException as error:  # handed to the waiting thread, which raises it
            self.error = error
        finally:
            self.work = None  # an ended job keeps nothing alive
            self._running.release()

    def wait(self, timeout: float) -> bool:
        """Whether the call ended within ``timeout`` seconds (one waiting thread only)."""
        self._ended = self._ended or self._running.acquire(timeout=timeout)
        return self._ended


def _serve(jobs: queue.SimpleQueue) -> None:
    """The worker thread: run jobs until a ``None`` arrives."""
    while (job := jobs.get()) is not None:
        job.execute()
        del job


class Watchdog:
    """Runs the solves of one sub-solver in a worker thread and waits for each with a deadline.

    Parameters
    ----------
    owner : str
        What runs the solves, for the error raised after an abandoned solve.
    grace : float
        Seconds past the time limit before the solve is asked to stop, and again before it
        is abandoned: a solve returns at most about ``time_limit + 2 * grace`` seconds after
        it started.
    patience : float
        Seconds a solve may take to honour :meth:`request_stop` before it is abandoned (within
        the same overall bound). A second Ctrl-C (``KeyboardInterrupt`` in the waiting thread)
        abandons it after ``grace`` seconds.

    Attributes
    ----------
    stop_requested : bool
        :meth:`request_stop` was called since the last :meth:`arm`.
    timed_out : bool
        The last solve was stopped by the watchdog at ``time_limit + grace``.
    abandoned : bool
        A solve did not return after it was asked to stop; the worker thread still runs it.
    """

    def __init__(
        self, owner: str, grace: float = GRACE_SECONDS, patience: float = STOP_PATIENCE_SECONDS
    ):
        if not grace > 0:
            raise InvalidArgumentError(f"grace must be > 0 seconds, got {grace!r}")
        self.owner = owner
        self.grace = grace
        self.patience = patience
        self.stop_requested = False
        self.timed_out = False
        self.abandoned = False
        self._job: _Job | None = None
        self._lock = threading.Lock()
        self._interrupt: Callable[[], object] | None = None
        self._jobs: queue.SimpleQueue | None = None
        self._thread: threading.Thread | None = None

    def arm(self) -> None:
        """Start of a solve: refuse if an earlier one was abandoned, forget idle stop requests.

        Raises
        ------
        SubSolverAbandonedError
            An earlier solve was abandoned; its solver is still in use by the worker thread.
        """
        if self.abandoned:
            raise SubSolverAbandonedError(
                f"{self.owner}: an earlier solve did not stop when asked and was abandoned while "
                "still running; this sub-solver cannot solve again (create a new one)"
            )
        self.stop_requested = False

    def request_stop(self) -> None:
        """Ask the solve in progress to stop (thread-safe; a solve that starts later runs normally
        unless :meth:`arm` was already called for it)."""
        self.stop_requested = True
        self._send_interrupt()

    def run(
        self, work: Callable[[], object], time_limit: float, interrupt: Callable[[], object]
    ) -> bool:
        """Run ``work()`` in the worker thread and wait for it.

        Parameters
        ----------
        work : callable
            The solve.
        time_limit : float
            The solve's own time limit in seconds.
        interrupt : callable
            Asks the solver running ``work`` to stop soon; called from other threads.

        Returns
        -------
        bool
            ``True`` when ``work`` returned, ``False`` when it was abandoned.

        Raises
        ------
        BaseException
            What ``work`` raised; a ``KeyboardInterrupt`` while waiting, after the solve was
            asked to stop and waited for (``grace`` seconds at most).
        """
        job = self._job = _Job(work)
        self.timed_out = False
        with self._lock:
            self._interrupt = interrupt
        try:
            self._worker().put(job)
            finished = self._wait(job, time_limit)
        except BaseException:
            self.request_stop()
            finished = self._ends_within(job, self.grace)
            raise
        finally:
            self.abandoned = not finished
            if finished:
                with self._lock:
                    self._interrupt = None
        if job.error is not None:
            raise job.error
        return finished

    def run_guarded(
        self, solver, work: Callable[[], object], time_limit: float, interrupt: Callable[[], object]
    ) -> tuple[SolveStatus | None, float]:
        """:meth:`run` with ``solver`` (its ``stop()``) marked as the one Ctrl-C stops.

        Returns
        -------
        status : SolveStatus or None
            ``ABANDONED``; ``INTERRUPTED`` (a stop request or Ctrl-C, also before the start, when
            ``work`` is not run); ``TIME_LIMIT`` (stopped by the watchdog); ``None``: the solver's
            own status holds.
        seconds : float
            Wall-clock seconds of the solve.
        """
        guard = active_guard()
        with guard.solving(solver) if guard is not None else contextlib.nullcontext():
            if guard is not None and guard.requested:
                return SolveStatus.INTERRUPTED, 0.0
            began = time.perf_counter()
            finished = self.run(work, time_limit, interrupt)
            seconds = time.perf_counter() - began
        if not finished:
            return SolveStatus.ABANDONED, seconds
        if self.stop_requested or (guard is not None and guard.requested):
            return SolveStatus.INTERRUPTED, seconds
        return (SolveStatus.TIME_LIMIT if self.timed_out else None), seconds

    @property
    def busy(self) -> bool:
        """Whether the last solve is still running (only an abandoned one can be, when asked
        from the thread that ran it)."""
        return self._job is not None and not self._job.wait(0)

    def close(self) -> None:
        """End the worker thread once it is idle (a no-op for an abandoned one)."""
        if self._jobs is not None and not self.abandoned:
            self._jobs.put(None)
            self._jobs = self._thread = None

    def _worker(self) -> queue.SimpleQueue:
        """The job queue of the worker thread, started on first use (and again after a fork)."""
        if self._jobs is None or self._thread is None or not self._thread.is_alive():
            self._jobs = queue.SimpleQueue()
            self._thread = threading.Thread(
                target=_serve, args=(self._jobs,), name="lns-subsolver", daemon=True
            )
            self._thread.start()
        return self._jobs

    def _ends_within(self, job: _Job, seconds: float) -> bool:
        """Whether ``job`` ends within ``seconds``, the stop request sent again every fifth of
        them (SCIP refuses one in some stages, such as the start of its solve)."""
        for _ in range(5):
            if job.wait(seconds / 5):
                return True
            self._send_interrupt()
        return False

    def _wait(self, job: _Job, time_limit: float) -> bool:
        """Wait in short slices (so that the waiting thread sees signals); stop, then give up."""
        stop_at = time.perf_counter() + time_limit + self.grace
        give_up_at = stop_at + max(self.grace, CLEAN_UP_SHARE * time_limit)
        asked_at = None
        while not job.wait(self.grace / 5):
            now = time.perf_counter()
            if asked_at is None and self.stop_requested:
                asked_at = now
                give_up_at = min(give_up_at, now + self.patience)
            self.timed_out |= now >= stop_at and asked_at is None
            if now >= give_up_at:
                return False
            if self.timed_out or asked_at is not None:
                self._send_interrupt()
        return True

    def _send_interrupt(self) -> None:
        with self._lock:
            if self._interrupt is not None:
                with contextlib.suppress(Exception):  # the solver may be between stages
                    self._interrupt()


class WatchedSubSolver:
    """What the sub-solvers share: a watchdog, :meth:`stop` and :meth:`session`.

    A subclass calls ``super().__init__`` and implements :meth:`_restore`, and its ``solve``
    leaves its fixings in the model while :attr:`_keep_fixings` is true.
    """

    def __init__(self, owner: str, grace: float):
        self._keep_fixings = False
        self._watchdog = Watchdog(owner, grace)
        weakref.finalize(self, self._watchdog.close).atexit = False

    @property
    def watchdog(self) -> Watchdog:
        """The :class:`Watchdog` that runs and guards this sub-solver's solves."""
        return self._watchdog

    def stop(self) -> None:
        """Ask the solve in progress to end soon (thread-safe; a no-op when idle)."""
        self._watchdog.request_stop()

    @contextlib.contextmanager
    def session(self):
        """Within the block, each solve leaves its fixings in the model for the next one.

        The next solve then changes only the bounds that differ (consecutive LNS neighborhoods
        overlap, so that is a fraction of the fixed variables), and the end of the block
        restores every original bound, also after an exception.
        """
        self._keep_fixings = True
        try:
            yield self
        finally:
            self._keep_fixings = False
            if not self._watchdog.abandoned:
                self._restore()

    def _restore(self) -> None:
        """Give the model its original bounds back."""
        raise NotImplementedError
