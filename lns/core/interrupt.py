"""Ctrl-C as a clean stop of a run, also while a sub-solver is solving.

SCIP's own Ctrl-C catching loses a signal that arrives while a short sub-solve
is already finishing (the status then reads ``optimal``, not ``userinterrupt``),
and a Python handler alone runs only after the solver returns. So during a run the
solvers' catching is off, SIGINT goes to :class:`InterruptGuard`, and a watcher
thread, woken through :func:`signal.set_wakeup_fd`, calls the ``stop()`` hook of
the sub-solver solving at that moment (:class:`lns.core.subsolver.SubSolver`; the
solvers run in a worker thread with the GIL released). The loop checks
:attr:`InterruptGuard.requested` between iterations. A second Ctrl-C raises
``KeyboardInterrupt`` at once.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading

_active: "InterruptGuard | None" = None


class InterruptGuard:
    """Catches SIGINT for the duration of a ``with`` block (main thread only; a no-op elsewhere)."""

    def __init__(self):
        self.requested = False
        self._signals = 0
        self._solving = None
        self._lock = threading.Lock()
        self._installed = False

    def __enter__(self) -> "InterruptGuard":
        global _active
        if threading.current_thread() is not threading.main_thread() or _active is not None:
            return self
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._old_fd = signal.set_wakeup_fd(self._write)
        self._old_handler = signal.signal(signal.SIGINT, self._handle)
        self._watcher = threading.Thread(target=self._watch, name="lns-interrupt", daemon=True)
        self._watcher.start()
        self._installed = True
        _active = self
        return self

    def __exit__(self, *exc) -> None:
        global _active
        if not self._installed:
            return
        signal.signal(signal.SIGINT, self._old_handler)
        signal.set_wakeup_fd(self._old_fd)
        os.close(self._write)  # ends the watcher's read
        self._watcher.join(timeout=1.0)
        os.close(self._read)
        self._installed = False
        _active = None

    def _handle(self, signum, frame) -> None:
        # Counted here, not through ``requested``: the watcher thread sets that one for the same signal.
        self._signals += 1
        self.requested = True
        if self._signals > 1:
            raise KeyboardInterrupt

    def _watch(self) -> None:
        while os.read(self._read, 1):
            self.requested = True
            with self._lock:
                if self._solving is not None:
                    self._solving.stop()

    @contextlib.contextmanager
    def solving(self, solver):
        """Mark ``solver`` (anything with a thread-safe ``stop()``) as the one to stop on Ctrl-C
        while the block runs."""
        with self._lock:
            self._solving = solver
        try:
            yield
        finally:
            with self._lock:
                self._solving = None


def active_guard() -> InterruptGuard | None:
    """The guard of the run in progress in the main thread, if any."""
    return _active
