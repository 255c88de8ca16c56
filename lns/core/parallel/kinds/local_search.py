"""The ``local_search`` worker kind: Local-MIP (Lin et al., CP 2024) through the ``localmip``
package (the optional extra ``localsearch``), started from the shared incumbent and restarted
from the newest one.

Local-MIP's Python interface runs a search to its end and reports only its best solution then,
so the worker (and the ``localmip`` baseline, :func:`run_local_mip`) runs it in slices:
each starts from the incumbent (its start callback sets every variable), and its best
solution, if better, goes to the main process, which checks it against the original problem
(Local-MIP's own tolerances are not trusted). A slice lasts
:data:`FIRST_SLICE` seconds, twice as long after one that found nothing better (up to
:data:`MAX_SLICE`), and :data:`FIRST_SLICE` again after one that did; a pause or a stop ends
it at once (``terminate``). Local-MIP prints its log on file descriptor 1: it goes to
``/dev/null`` while a slice runs.

References
----------
P. Lin, M. Zou, S. Cai. An efficient local search solver for mixed integer programming.
CP 2024.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import time
from typing import Any

import numpy as np

from lns.core.interrupt import active_guard
from lns.core.parallel.kinds.protocol import KindUnavailable, KindWorker
from lns.core.problem.mip import Problem
from lns.core.search.incumbent import Incumbent
from lns.core.search.loop import stop_state
from lns.core.search.stop import StopReason
from lns.core.solvers.protocol import SEED_BOUND

#: The module the ``localmip`` package installs.
MODULE = "localmip_py"
#: Seconds of the first slice, and of each slice after one that improved.
FIRST_SLICE = 1.0
#: The longest slice, in seconds.
MAX_SLICE = 8.0


def missing() -> str | None:
    """Why Local-MIP cannot run here (one line), or ``None`` when its package is installed."""
    if importlib.util.find_spec(MODULE) is None:
        return (
            "local_search: the localmip package is not installed "
            "(pip install 'learned-lns[localsearch]', Linux x86_64)"
        )
    return None


class LocalSearchWorker(KindWorker):
    """Local-MIP on the whole problem, in slices that start from the newest incumbent."""

    kind = "local_search"

    def prepare(self) -> None:
        reason = missing()
        if reason is not None:
            raise KindUnavailable(reason)
        self.slices = Slices(self.spec.problem)

    def interrupt(self) -> None:
        self.slices.stop()

    def search(self, rng: np.random.Generator) -> tuple[list, StopReason]:
        while True:
            reason = self.take()
            time_left = self.spec.stop.remaining(stop_state(self.incumbent, 0))
            if reason is not None or time_left <= 0:
                return [], reason or StopReason.TIME_LIMIT
            if not self.running.is_set() or self.told is not None:
                continue  # a pause or stop came before the slice
            x = self.slices.run(self.incumbent.x, time_left, rng)
            self.solves += 1
            improved = x is not None and self.incumbent.offer(
                x, found_at=time.perf_counter(), source=self.kind
            )
            if improved:
                self.share(-1)
            self.slices.adapt(improved)


class Slices:
    """Local-MIP searches of ``problem``, each from a start, for a slice of time.

    Attributes
    ----------
    length : float
        Seconds of the next slice (see the module's docstring).
    """

    def __init__(self, problem: Problem):
        self.problem = problem
        with _quiet():
            self.model = prepared_model(problem)
        self.length = FIRST_SLICE
        self.current: Any = None

    def run(self, start: np.ndarray | None, time_left: float, rng: np.random.Generator):
        """One search from ``start`` (``None``: Local-MIP's own start) for at most
        ``time_left`` seconds; its best solution, or ``None`` when it found no feasible one."""
        import localmip_py

        with _quiet():  # the setters log too
            solver = localmip_py.LocalMIP(self.model)
            solver.set_random_seed(int(rng.integers(1, SEED_BOUND)))
            solver.set_time_limit(float(min(self.length, time_left)))
            solver.set_log_obj(False)
            if start is not None:
                solver.set_start_cbk(_starter(start.tolist()))
            self.current = solver
            try:
                solver.run()
            finally:
                self.current = None
        if not solver.is_feasible():
            return None
        return np.asarray(solver.get_solution(), dtype=float)

    def adapt(self, improved: bool) -> None:
        """The next slice's length after one that ``improved`` or not."""
        self.length = FIRST_SLICE if improved else min(2 * self.length, MAX_SLICE)

    def stop(self) -> None:
        """End the search in progress (from another thread)."""
        current = self.current
        if current is not None:
            current.terminate()


def run_local_mip(incumbent: Incumbent, *, time_limit: float, seed: int) -> StopReason:
    """Local-MIP alone on ``incumbent.problem`` (the ``localmip`` baseline of ``lns-bench``):
    slices (:class:`Slices`) until ``time_limit`` seconds have passed, each from the best
    solution so far, offered to ``incumbent``, which checks it against the problem.

    Returns ``INTERRUPTED`` after a stop signal, else ``TIME_LIMIT`` (a local search proves
    nothing).

    Raises
    ------
    KindUnavailable
        The ``localmip`` package is not installed.
    """
    reason = missing()
    if reason is not None:
        raise KindUnavailable(reason)
    slices = Slices(incumbent.problem)
    rng = np.random.default_rng(seed)
    deadline = time.perf_counter() + time_limit
    guard = active_guard()
    with guard.solving(slices) if guard is not None else contextlib.nullcontext():
        while time.perf_counter() < deadline:
            if guard is not None and guard.requested:
                return StopReason.INTERRUPTED
            x = slices.run(incumbent.x, deadline - time.perf_counter(), rng)
            offered = x is not None and incumbent.offer(
                x, found_at=time.perf_counter(), source="localmip"
            )
            slices.adapt(offered)
    stopped = guard is not None and guard.requested
    return StopReason.INTERRUPTED if stopped else StopReason.TIME_LIMIT


@contextlib.contextmanager
def _quiet():
    """Local-MIP's log (on file descriptor 1) to ``/dev/null`` meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _starter(values: list):
    """Local-MIP's start callback: every variable at its value in ``values``."""

    def start(context) -> None:
        current = context.current_values
        for j, value in enumerate(values):
            current[j] = value

    return start


def prepared_model(problem: Problem):
    """``problem`` as a Local-MIP model, its variables in the problem's order (rows without
    coefficients, which Local-MIP refuses, left out: the main process checks them)."""
    import localmip_py as lm

    builder = lm.ModelBuilder()
    builder.set_sense(lm.Sense.minimize if problem.sense == "minimize" else lm.Sense.maximize)
    builder.set_obj_offset(float(problem.objective_offset))
    binary = problem.integer_mask & (problem.lower == 0) & (problem.upper == 1)
    for j, name in enumerate(problem.var_names):
        kind = lm.VarType.binary if binary[j] else lm.VarType.general_integer
        builder.add_var(
            name,
            float(problem.lower[j]),
            float(problem.upper[j]),
            float(problem.objective[j]),
            kind if problem.integer_mask[j] else lm.VarType.real,
        )
    matrix = problem.matrix
    for i in range(problem.n_rows):
        start, end = matrix.indptr[i], matrix.indptr[i + 1]
        if start == end:
            continue
        builder.add_con(
            float(problem.row_lower[i]),
            float(problem.row_upper[i]),
            matrix.indices[start:end].tolist(),
            matrix.data[start:end].tolist(),
        )
    return builder.prepare()
