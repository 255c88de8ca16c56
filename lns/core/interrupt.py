"""Ctrl-C, SIGTERM and SIGHUP as a clean stop of a run, also while a solver is running.

Slurm, container runtimes and closing terminals send SIGTERM or SIGHUP where a user
presses Ctrl-C (SIGINT); all three are *stop signals* here and end a run the same way:
the run stops at once and returns (and writes) its best solution.

SCIP's own Ctrl-C catching loses a signal that arrives while a short sub-solve is
already finishing (the status then reads ``optimal``, not ``userinterrupt``), and a
Python handler alone runs only after the solver returns. So during a run SCIP's
catching is off, the stop signals go to :class:`InterruptGuard`, and a watcher
thread, woken through :func:`signal.set_wakeup_fd`, calls ``stop()`` on the object
solving at that moment (SCIP and HiGHS run with the GIL released). The loop checks
:attr:`InterruptGuard.requested` between iterations. A second stop signal raises
``KeyboardInterrupt`` at once.

Around a run, :class:`DeferredSignals` tells the caller which signal stopped it (the
command line then exits with ``128 + signal``), and holds back a signal that arrives
after the run, while its result is being written, until the caller is done.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

#: The signals that stop a run (SIGHUP does not exist on Windows).
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

_active: InterruptGuard | None = None
_deferred: DeferredSignals | None = None


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _install(handler) -> dict:
    """Give every stop signal ``handler``; returns the previous handlers."""
    return {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}


def _restore(handlers: dict) -> None:
    for signum, handler in handlers.items():
        signal.signal(signum, handler)


class DeferredSignals:
    """Within a ``with`` block, learns the stop signal that ended a run and holds back later ones.

    Until an :class:`InterruptGuard` is entered inside the block, a stop signal is handled as
    before the block (by the previous handler: nothing of a run is at stake yet). From then
    on the first stop signal is remembered in :attr:`signal`, by the guard during the run and
    by this object after it, when it is not acted upon: the run's result is being returned
    and written. In the main thread only (a no-op elsewhere).

    Attributes
    ----------
    signal : int or None
        The first stop signal received since a run began within the block.
    """

    def __init__(self):
        self.signal: int | None = None
        self.run_began = False
        self._previous: dict | None = None

    def __enter__(self) -> DeferredSignals:
        global _deferred
        if _in_main_thread() and _deferred is None:
            self._previous = _install(self._handle)
            _deferred = self
        return self

    def __exit__(self, *exc) -> None:
        global _deferred
        if self._previous is not None:
            _restore(self._previous)
            self._previous, _deferred = None, None

    def _handle(self, signum, frame) -> None:
        if self.run_began:
            self.note(signum)
            return
        assert self._previous is not None, "the handler is installed only with _previous set"
        previous = self._previous[signum]
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:  # the default action (SIGTERM, SIGHUP: end the process)
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    def note(self, signum: int) -> None:
        """Remember ``signum`` unless a signal was already received."""
        if self.signal is None:
            self.signal = signum


class InterruptGuard:
    """Catches the stop signals while a ``with`` block runs (main thread only; a no-op elsewhere).

    Attributes
    ----------
    requested : bool
        A stop signal was received: the run should end.
    signal : int or None
        The first stop signal received.
    """

    def __init__(self):
        self.requested = False
        self.signal: int | None = None
        self._signals = 0
        self._solving: dict = {}  # id -> solver: the solves in progress (a race runs several)
        self._lock = threading.Lock()
        self._previous: dict | None = None

    def __enter__(self) -> InterruptGuard:
        global _active
        if not _in_main_thread() or _active is not None:
            return self
        if _deferred is not None:
            _deferred.run_began = True
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._old_fd = signal.set_wakeup_fd(self._write)
        self._previous = _install(self._handle)
        self._watcher = threading.Thread(target=self._watch, name="lns-interrupt", daemon=True)
        self._watcher.start()
        _active = self
        return self

    def __exit__(self, *exc) -> None:
        global _active
        if self._previous is None:
            return
        _restore(self._previous)
        signal.set_wakeup_fd(self._old_fd)
        os.close(self._write)  # ends the watcher's read
        self._watcher.join(timeout=1.0)
        os.close(self._read)
        self._previous, _active = None, None

    def _note(self, signum: int) -> None:
        if self.signal is None:
            self.signal = signum
        self.requested = True
        if _deferred is not None:
            _deferred.note(signum)

    def _handle(self, signum, frame) -> None:
        # Counted here, not in ``_note``: the watcher thread notes the same signal too.
        self._signals += 1
        self._note(signum)
        if self._signals > 1:
            raise KeyboardInterrupt

    def _watch(self) -> None:
        while received := os.read(self._read, 64):
            stops = [signum for signum in received if signum in STOP_SIGNALS]
            if not stops:  # another handled signal (e.g. SIGALRM) also wakes this thread
                continue
            self._note(stops[0])
            with self._lock:
                for solver in self._solving.values():
                    with contextlib.suppress(Exception):  # the solver may be between stages
                        solver.stop()

    @contextlib.contextmanager
    def solving(self, solver):
        """Mark ``solver`` (an object with ``stop()``) as one to stop while the block runs
        (several threads may each mark their own).

        A stop already requested when the block begins is passed on to ``solver`` at once, so
        a signal that arrives just before the solve starts is not lost.
        """
        with self._lock:
            self._solving[id(solver)] = solver
            if self.requested:
                with contextlib.suppress(Exception):
                    solver.stop()
        try:
            yield
        finally:
            with self._lock:
                self._solving.pop(id(solver), None)


def active_guard() -> InterruptGuard | None:
    """The guard of the run in progress in the main thread, if any."""
    return _active


def _forget_in_child() -> None:
    """A forked process runs none of its parent's guard: its signal handling is the parent's,
    and its lock may be held by a thread that the fork left behind."""
    global _active
    _active = None


os.register_at_fork(after_in_child=_forget_in_child)
