"""Small problems with known optima, built in code, paths of bundled instances, a fake
sub-solver, and waits on events (a process's end, a condition) instead of sleeps."""

from __future__ import annotations

import os
import select
import threading
import time

import numpy as np
import scipy.sparse as sp

from instances.bundled import BUNDLED_DIR, MIPLIB2017_DIR
from lns.core.problem.mip import Problem
from lns.core.search.selection import Neighborhood, Selector
from lns.core.solvers.protocol import FoundSolution, SolveOutcome, SolveStatus, no_session


def miplib(name: str):
    """Path of a bundled MIPLIB instance by stem (``"p0201"``)."""
    matches = sorted(p for p in BUNDLED_DIR.glob(f"{name}.*") if p.suffix != ".solu")
    assert matches, f"no bundled instance {name}"
    return matches[0]


def miplib2017(name: str):
    """Path of a bundled MIPLIB 2017 instance by stem (``"lotsize"``)."""
    path = MIPLIB2017_DIR / f"{name}.mps.gz"
    assert path.exists(), f"no bundled MIPLIB 2017 instance {name}"
    return path


def knapsack(sense: str = "maximize") -> Problem:
    """0/1 knapsack: values 10, 13, 7, 8, weights 4, 6, 3, 5, capacity 10.

    The optimum takes a and b (weight 10, value 23); minimising the negated values, it is -23.
    """
    values = np.array([10.0, 13.0, 7.0, 8.0])
    objective = values if sense == "maximize" else -values
    return Problem(
        name=f"knapsack_{sense}",
        var_names=("a", "b", "c", "d"),
        var_types=np.array(["B"] * 4),
        lower=np.zeros(4),
        upper=np.ones(4),
        objective=objective,
        objective_offset=0.0,
        sense=sense,
        matrix=sp.csr_matrix(np.array([[4.0, 6.0, 3.0, 5.0]])),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([10.0]),
        row_names=("capacity",),
    )


def mixed_problem() -> Problem:
    """Binaries, general integers and a continuous variable together; optimum -14.25.

    min -3 y1 - 2 y2 - z1 - 2 z2 - 0.5 w
    s.t. y1 + y2 + w <= 2.5,  2 z1 + w <= 7,  z1 - 3 y1 <= 1,  z1 + z2 >= 0,
    y binary, z1 in {0..4}, z2 in {-2..3}, w in [0, 10]. Optimum y = (1, 1), z = (3, 3), w = 0.5.
    """
    names = ("y1", "y2", "z1", "z2", "w")
    A = np.array([[1, 1, 0, 0, 1], [0, 0, 2, 0, 1], [-3, 0, 1, 0, 0], [0, 0, 1, 1, 0]], dtype=float)
    return Problem(
        name="mixed",
        var_names=names,
        var_types=np.array(["B", "B", "I", "I", "C"]),
        lower=np.array([0, 0, 0, -2, 0], dtype=float),
        upper=np.array([1, 1, 4, 3, 10], dtype=float),
        objective=np.array([-3, -2, -1, -2, -0.5]),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(A),
        row_lower=np.array([-np.inf, -np.inf, -np.inf, 0.0]),
        row_upper=np.array([2.5, 7.0, 1.0, np.inf]),
        row_names=("r1", "r2", "r3", "r4"),
    )


#: The objective of :func:`knapsack` (maximised): the values of a, b, c, d.
KNAPSACK_VALUES = np.array([10.0, 13.0, 7.0, 8.0])


class FakeSubSolver:
    """Follows the sub-solver protocol on :func:`knapsack` without solving anything.

    A solve with fixings (an LNS sub-solve) plays the next step of ``script``: an exception
    (raised) or ``(status, solutions)``, each solution reported through ``on_found`` and
    returned in the outcome; the last step repeats. A solve of the whole problem (no fixings,
    as a start strategy asks for) plays ``schedule`` when one is given: each ``(seconds, x)``
    is reported that long after the solve began, then the solve waits for :meth:`stop` or its
    time limit and ends ``INTERRUPTED`` or ``TIME_LIMIT``, as SCIP does. Without a schedule,
    whole-problem solves play the script too.

    Attributes
    ----------
    calls : list of dict
        Per solve: ``free``, ``start`` (a copy), ``time_limit`` and ``solution_limit``.
    endings : list of str
        How each scheduled solve ended: ``"stopped"`` (by :meth:`stop`), ``"time_limit"`` or
        ``"solution_limit"``; what a test asserts instead of timing the solve.
    solving : threading.Event
        Set while a scheduled solve runs, so that a test can act during it.
    """

    name = "fake"

    def __init__(self, script=((SolveStatus.OPTIMAL, []),), schedule=None):
        self.script = list(script)
        self.schedule = schedule
        self.calls: list = []
        self.endings: list = []
        self.solving = threading.Event()
        self.total_solve_time = 0.0
        self._steps = 0
        self._stop = threading.Event()

    @property
    def starts(self) -> list:
        """The starts of the solves with fixings (the incumbents the LNS iterations began at)."""
        return [call["start"] for call in self.calls if call["free"] is not None]

    @property
    def solution_limits(self) -> list:
        """The solution limits of the whole-problem solves."""
        return [call["solution_limit"] for call in self.calls if call["free"] is None]

    def solve(
        self,
        *,
        time_limit,
        seed,
        free=None,
        start=None,
        solution_limit=-1,
        node_limit=-1,
        on_found=None,
    ):
        self.calls.append(
            {
                "free": free,
                "start": None if start is None else start.copy(),
                "time_limit": time_limit,
                "solution_limit": solution_limit,
            }
        )
        if free is None and self.schedule is not None:
            return self._play_schedule(time_limit, solution_limit, on_found)
        self._steps += 1
        step = self.script[min(self._steps, len(self.script)) - 1]
        if isinstance(step, Exception):
            raise step
        status, solutions = step
        found = [_found(x) for x in solutions]
        for solution in found:
            if on_found is not None:
                on_found(solution)
        return SolveOutcome(status, found, 0.001)

    def _play_schedule(self, time_limit, solution_limit, on_found) -> SolveOutcome:
        self._stop.clear()
        self.solving.set()
        try:
            began, found = time.perf_counter(), []
            for at, x in self.schedule:
                if self._stop.wait(max(0.0, began + at - time.perf_counter())):
                    return self._end("stopped", SolveStatus.INTERRUPTED, found)
                found.append(_found(x))
                on_found(found[-1])
                if len(found) == solution_limit:
                    return self._end("solution_limit", SolveStatus.SOLUTION_LIMIT, found)
            if self._stop.wait(min(time_limit, 30.0)):
                return self._end("stopped", SolveStatus.INTERRUPTED, found)
            return self._end("time_limit", SolveStatus.TIME_LIMIT, found)
        finally:
            self.solving.clear()

    def _end(self, how: str, status: SolveStatus, found: list) -> SolveOutcome:
        self.endings.append(how)
        return SolveOutcome(status, found)

    def stop(self):
        self._stop.set()

    def session(self):
        return no_session()


class RecordedStart:
    """A start strategy that records its calls and finds nothing."""

    name = "recorded"

    def __init__(self):
        self.calls = 0

    def __call__(self, task):
        self.calls += 1
        return SolveOutcome(SolveStatus.TIME_LIMIT, [], 0.0)


def _found(x) -> FoundSolution:
    return FoundSolution(time.perf_counter(), float(x @ KNAPSACK_VALUES), x)


def wait_for_exit(pids, timeout: float) -> list[int]:
    """Wait until the processes ``pids`` (not necessarily children) have ended, at most
    ``timeout`` seconds in all; returns those still running. Waits on each process's pidfd,
    which becomes readable when it ends (a zombie counts as ended)."""
    deadline = time.monotonic() + timeout
    running = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)
        if not ready:
            running.append(pid)
    return running


def wait_until(condition, timeout: float, poll: float = 0.05):
    """Poll ``condition()`` until it returns something true (returned), at most ``timeout``
    seconds: for states that no event announces (a process appearing in ``/proc``)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(poll)
    return value


class FirstHalf(Selector):
    """Frees the first half of the integer variables, then nothing (or, with ``every``, again
    at every iteration)."""

    name = "first_half"

    def __init__(self, every: bool = False):
        self.every = every

    def __call__(self, state, size, rng):
        integers = state.problem.integer_indices
        half = self.every or state.iteration == 0
        return Neighborhood(free=integers[: len(integers) // 2] if half else integers[:0])


class _GivesUp:
    """A sub-solver whose every solve is abandoned, as a SCIP that ignored its time limit."""

    name = "gives_up"
    total_solve_time = 0.0

    def solve(self, **kwargs) -> SolveOutcome:
        return SolveOutcome(SolveStatus.ABANDONED)

    def stop(self) -> None:
        pass

    def session(self):
        return no_session()


#: Sub-solvers made by :func:`first_gives_up` in this process.
_MADE: list = []


def first_gives_up(problem: Problem, sub_solve):
    """A portfolio's sub-solver maker (picklable): a worker's first sub-solver gives up on its
    first solve, the next ones are SCIP's."""
    from lns.api import named_sub_solver

    _MADE.append(problem.name)
    return _GivesUp() if len(_MADE) == 1 else named_sub_solver(problem, sub_solve)
