"""Stop signals and the command line: one line, exit code ``128 + signal``, no traceback.

During a run :class:`lns.core.interrupt.InterruptGuard` turns SIGINT, SIGTERM and SIGHUP
into a clean stop that keeps the best solution. Before it (Python's imports, Hydra's
config composition, loading a selector) there is nothing to keep, and Python's defaults
would print a ``KeyboardInterrupt`` traceback (SIGINT) or end silently (SIGTERM, SIGHUP).
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import sys
from pathlib import Path

from lns.core.interrupt import STOP_SIGNALS, DeferredSignals


def stop_message(app: str, signum: int) -> str:
    """``"lns-solve: stopped by SIGTERM"``."""
    return f"{app}: stopped by {signal.Signals(signum).name}"


def exit_on_stop_signals(app: str) -> None:
    """From now on, a stop signal prints one line on stderr and ends the process (``128 + signal``).

    Meant for the start of a program; a run's :class:`~lns.core.interrupt.InterruptGuard`
    and :class:`~lns.core.interrupt.DeferredSignals` replace these handlers while they last.
    """

    def handle(signum, frame):
        line = f"{stop_message(app, signum)} before the run started\n"
        os.write(sys.stderr.fileno(), line.encode())
        os._exit(128 + signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, handle)


def running_as(app: str, module: str) -> bool:
    """Whether this process is the program ``app``: its console script, or ``python -m module``.

    The handlers of :func:`exit_on_stop_signals` are for the program itself, not for a
    process that imports the command-line modules (a test run, a notebook). While ``-m``
    looks for its module ``sys.argv[0]`` is ``"-m"``, so the interpreter's own command line
    (``sys.orig_argv``) tells.
    """
    command = getattr(sys, "orig_argv", [])
    as_module = any(flag == "-m" and name == module for flag, name in itertools.pairwise(command))
    return as_module or (bool(sys.argv) and Path(sys.argv[0]).name == app)


def exit_after_stop_signal(app: str):
    """Decorate a command-line task: a stop signal during its run ends it with ``128 + signal``.

    The run stops and writes its best solution (:class:`~lns.core.interrupt.InterruptGuard`),
    the task prints its summary, then one line names the signal and the process exits with
    ``128 + signal``, as shells and batch schedulers expect of a program a signal ended.
    """

    def decorate(task):
        @functools.wraps(task)
        def wrapper(*args, **kwargs):
            with DeferredSignals() as deferred:
                try:
                    outcome = task(*args, **kwargs)
                except SystemExit:
                    if deferred.signal is None:
                        raise
            if deferred.signal is None:
                return outcome
            print(stop_message(app, deferred.signal), file=sys.stderr)
            sys.exit(128 + deferred.signal)

        return wrapper

    return decorate
