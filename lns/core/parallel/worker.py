"""One worker process of the portfolio (:mod:`lns.core.parallel.portfolio`): a search of one kind
(:mod:`lns.core.parallel.kinds`: the LNS loop, SCIP, CP-SAT or Local-MIP) on its own model.

:func:`worker_main` builds the worker of the spec's kind, runs it and reports its records and
statistics; the messages it exchanges with the main process are those of
:mod:`lns.core.parallel.kinds.protocol`. Its incumbent does not check solutions (the main
process checks each one once). The worker ignores the stop signals (the main process catches
them and tells the workers to stop), and dies with the main process (Linux:
``PR_SET_PDEATHSIG``), so that no worker outlives a run, even after ``kill -9`` of the main
process.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lns.core.interrupt import STOP_SIGNALS
from lns.core.parallel.kinds import worker_class
from lns.core.parallel.kinds.protocol import KindUnavailable
from lns.core.problem.mip import Problem
from lns.core.search.config import LNSConfig
from lns.core.search.result import WorkerStats
from lns.core.search.selection import Selector
from lns.core.search.stop import Stop, StopReason

log = logging.getLogger("lns")

#: ``prctl`` option: the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


@dataclass
class WorkerSpec:
    """What a worker process is started with (pickled by ``multiprocessing``).

    ``make_sub_solver(problem, config)`` builds an LNS worker's sub-solver; ``seed`` is its
    :class:`numpy.random.SeedSequence`; ``started`` the run's ``time.perf_counter()`` (a
    system-wide clock on Linux); ``sync_every`` the iterations between two exchanges in
    deterministic mode (``None``: exchange whenever a solution is found); ``kind`` the kind of
    search, a name of :data:`lns.core.parallel.kinds.KINDS` or a
    :class:`lns.core.parallel.kinds.protocol.KindWorker` subclass (``selector`` and
    ``make_sub_solver`` serve the ``"lns"`` kind only).
    """

    worker: int
    problem: Problem
    selector: Selector | None
    make_sub_solver: Callable | None
    config: LNSConfig
    seed: np.random.SeedSequence
    stop: Stop
    started: float
    parent: int
    sync_every: int | None = None
    kind: Any = "lns"  # a name, or a KindWorker subclass

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


def worker_main(spec: WorkerSpec, inbox, outbox) -> None:
    """The target of a worker process: run the search, then report its records and statistics.

    A kind that cannot run (:class:`KindUnavailable`) reports why and ends at once.
    """
    detach(spec.parent)
    try:
        worker = worker_class(spec.kind)(spec, inbox, outbox)
    except KindUnavailable as error:
        outbox.put(("unavailable", spec.worker, str(error)))
        stats = WorkerStats(spec.worker, spec.name, 0, 0, 0.0, 0.0, "unavailable", spec.kind_name)
        outbox.put(("done", spec.worker, [], stats, None, None))
        return
    records, reason = worker.run()
    if reason is StopReason.INTERRUPTED and worker.told is not None:
        reason = worker.told  # the main process stopped the search, e.g. at the time limit
    if spec.sync_every is None:
        worker.share(len(records) - 1)
    stats = WorkerStats(
        spec.worker,
        spec.name,
        len(records) + worker.solves,
        0,
        worker.held(),
        worker.exchange_time,
        str(reason),
        spec.kind_name,
        worker.found,
        worker.received,
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
