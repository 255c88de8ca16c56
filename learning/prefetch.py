"""The thread that prepares CL-LNS's first call beside the search.

It imports what the first call needs and computes the static features of the problem, root LP
included (HiGHS runs without Python's lock), and the model's graph cache
(:class:`FeaturesPrefetch`); :class:`learning.selector.CLLNS` starts it and draws at random, or
waits, until it is done. Threads still running at exit are cancelled and joined.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import sys
import threading
import weakref

from learning.features import FeatureExtractor, GraphEdges
from learning.inference import GraphCache, NumpyPolicy
from lns.core.problem.mip import Problem

log = logging.getLogger("lns")

#: Prefetch threads started that may still run: cancelled and joined at exit, since a thread
#: left inside HiGHS when the interpreter ends aborts the process.
_RUNNING: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def cancel_running() -> None:
    """Cancel the prefetch threads still running and wait for them (10 s each at most)."""
    running = list(_RUNNING)
    for prefetch in running:
        prefetch.cancel.set()
    for prefetch in running:
        prefetch.join(timeout=10)


class FeaturesPrefetch(threading.Thread):
    """Imports ``modules`` and computes the static features of ``problem`` beside the caller.

    The policy's graph cache is built by whichever of this thread and the caller comes to it
    first (:meth:`build_graph`): the caller's first call while HiGHS solves the root LP here
    without Python's lock, or this thread once the LP is solved.

    A failure is left for the first call, which then computes what is missing itself and
    reports it with context. Setting :attr:`cancel` ends the root LP at its next iteration.
    With ``nice``, the thread (and the threads it starts) runs that much nicer than the
    caller, on Linux, whose scheduler gives each thread its own niceness (elsewhere a
    niceness is the whole process's, and it is left alone).

    Attributes
    ----------
    problem : Problem
    columns : tuple of str
        The variable columns of the extractor (the checkpoint's).
    edges : GraphEdges or None
        The split-row matrix and the edges, once computed (before the root LP).
    extractor : FeatureExtractor or None
        The static features, once computed.
    graph : GraphCache or None
        ``policy``'s cache of the problem's graph, once computed (0.2 s on a 1000-node vertex
        cover).
    cancel : threading.Event
    niceness : int or None
        The niceness the thread ran at, once it runs (``None`` off Linux, or where it could
        not be read).
    """

    def __init__(
        self,
        problem: Problem,
        modules: tuple,
        lp_time_limit: float,
        columns: tuple,
        policy: NumpyPolicy | None = None,
        nice: int = 0,
    ):
        super().__init__(name="cl_lns prefetch", daemon=True)
        self.problem, self.modules, self.lp_time_limit = problem, modules, lp_time_limit
        self.columns, self.policy, self.nice = columns, policy, nice
        self.niceness: int | None = None
        self.edges: GraphEdges | None = None
        self.extractor: FeatureExtractor | None = None
        self.graph: GraphCache | None = None
        self.cancel = threading.Event()
        self._graph_lock = threading.Lock()

    def start(self) -> None:
        _RUNNING.add(self)
        super().start()

    def run(self) -> None:
        self._lower_priority()
        try:
            for module in self.modules:
                importlib.import_module(module)
            self.edges = GraphEdges.of(self.problem)
            self.extractor = FeatureExtractor(
                self.problem, self.lp_time_limit, self.cancel, self.columns, self.edges
            )
            self.build_graph()
        except Exception:  # noqa: BLE001 - the first call computes them again and reports it
            log.debug("cl_lns: prefetching the features of %s failed", self.problem.name)

    def _lower_priority(self) -> None:
        """Make this thread ``nice`` nicer than it started, on Linux, and record its
        :attr:`niceness`."""
        if sys.platform != "linux":
            return
        here = threading.get_native_id()
        try:
            started = os.getpriority(os.PRIO_PROCESS, here)
            if self.nice:
                os.setpriority(os.PRIO_PROCESS, here, min(started + self.nice, 19))
            self.niceness = os.getpriority(os.PRIO_PROCESS, here)
        except OSError:  # a sandbox that forbids it: the thread runs as nice as it started
            log.debug("cl_lns: the features' thread keeps its priority", exc_info=True)

    def build_graph(self) -> None:
        """Build :attr:`graph` unless it is built, or the edges are not there yet, or no policy
        was given, or the prefetch was cancelled."""
        if self.policy is None or self.edges is None:
            return
        with self._graph_lock:
            if self.graph is None and not self.cancel.is_set():
                self.graph = graph_cache(self.policy, self.edges)


def graph_cache(policy: NumpyPolicy, edges: GraphEdges) -> GraphCache:
    """``policy``'s cache of the graph of a problem with ``edges``."""
    return policy.graph_cache(edges.edge_index, edges.edge_features)
