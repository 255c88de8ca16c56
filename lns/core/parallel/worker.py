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

import logging

from lns.core.child_process import detach
from lns.core.parallel.kinds import worker_class
from lns.core.parallel.kinds.protocol import KindUnavailable, WorkerSpec
from lns.core.search.result import WorkerStats
from lns.core.search.stop import StopReason

log = logging.getLogger("lns")


def worker_main(spec: WorkerSpec, inbox, outbox) -> None:
    """The target of a worker process: run the search, then report its records and statistics.

    A kind that cannot run (:class:`KindUnavailable`) reports why and ends at once.
    """
    detach(spec.parent)
    try:
        worker = worker_class(spec.kind)(spec, inbox, outbox)
    except KindUnavailable as error:
        outbox.put(("unavailable", spec.worker, str(error)))
        stats = WorkerStats(
            worker=spec.worker, selector=spec.name, stop_reason="unavailable", kind=spec.kind_name
        )
        outbox.put(("done", spec.worker, [], stats, None, None))
        return
    records, reason = worker.run()
    if reason is StopReason.INTERRUPTED and worker.told is not None:
        reason = worker.told  # the main process stopped the search, e.g. at the time limit
    if spec.sync_every is None:
        worker.share(len(records) - 1)
    stats = WorkerStats(
        worker=spec.worker,
        selector=spec.name,
        stop_reason=str(reason),
        iterations=len(records) + worker.solves,
        time=worker.held(),
        exchange_time=worker.exchange_time,
        kind=spec.kind_name,
        found=worker.found,
        received=worker.received,
    )
    incumbent = worker.incumbent
    outbox.put(("done", spec.worker, records, stats, incumbent.x, incumbent.objective))
