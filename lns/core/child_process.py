"""What a child process of a run does first: leave the stop signals to the main process, and die
with it.

The main process blocks the stop signals while it starts a child (a worker of the portfolio, the
CP-SAT racer of the ``"race"`` start, a run of the benchmark matrix), catches them itself and
tells its children to stop; a child that outlived its parent would go on solving, so the kernel
kills it when its parent ends (Linux: ``PR_SET_PDEATHSIG``), even after ``kill -9`` of the parent.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys

from lns.core.interrupt import STOP_SIGNALS

log = logging.getLogger("lns")

#: ``prctl`` option: the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


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
