"""CP-SAT on the whole problem in a child process: a racer of the ``"race"`` start.

In a thread of the main process, CP-SAT's model is built in Python (seconds for a large
problem) while SCIP's callbacks wait for Python's lock, and the race started later than the
feasibility start alone (``benchmarks/results/fast_start_race.json``). In a process of its own,
forked from the main process (no new imports), CP-SAT builds its model and searches on a core
of its own; its solutions come back through a pipe, as they are found.

The child ignores the stop signals (the main process stops it through :meth:`CpSatProcess.stop`,
a message on a pipe: a ``multiprocessing.Event`` can leave the main process waiting forever for a
child that ended inside its ``wait``) and dies with the main process (Linux), as the portfolio's
workers do.
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.connection import Connection

from lns.core.child_process import detach
from lns.core.errors import UnsupportedProblemError
from lns.core.interrupt import STOP_SIGNALS
from lns.core.problem.mip import Problem
from lns.core.solvers.protocol import FoundSolution, SolveOutcome, SolveStatus, no_session

log = logging.getLogger("lns")

#: Seconds the child has to report after its time limit or a stop before it is killed.
JOIN_SECONDS = 2.0
#: Seconds between the child's repeated stop requests to its solver.
STOP_REPEAT_SECONDS = 0.05
#: Seconds between two looks at the stop request while waiting for the child's next message.
POLL_SECONDS = 0.1


class CpSatProcess:
    """A :class:`lns.core.solvers.protocol.SubSolver`-like racer (``solve``, ``stop``, ``session``)
    that solves the whole pure-integer ``problem`` with CP-SAT (one search worker) in a forked
    child process; one solve per object (a stop before it ends it at once).

    A problem CP-SAT cannot model ends the solve with ``OTHER`` (logged), which does not end a
    race; a child that dies ends it with ``OTHER`` too, its solutions kept. A child that has not
    reported :data:`JOIN_SECONDS` after its deadline or a stop is killed.
    """

    name = "cpsat-process"
    total_solve_time = 0.0

    def __init__(self, problem: Problem):
        self.problem = problem
        self._context = multiprocessing.get_context("fork")
        self._lock = threading.Lock()
        self._stop_send: Connection | None = None  # the stop pipe's writing end while a child runs
        self._stopped_at: float | None = None

    def solve(self, *, time_limit: float, seed: int, on_found=None, **_) -> SolveOutcome:
        began = time.perf_counter()
        receive, send = self._context.Pipe(duplex=False)
        stop_receive, stop_send = self._context.Pipe(duplex=False)
        child = self._context.Process(
            target=_child_main,
            args=(self.problem, began + time_limit, seed, send, stop_receive, stop_send),
            kwargs={"parent": os.getpid()},
            name="lns-start-cpsat",
            daemon=True,
        )
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:  # a Ctrl-C must not reach the child before it ignores it
            child.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        send.close()  # the child holds the only writing end: its death ends recv()
        stop_receive.close()
        with self._lock:
            self._stop_send = stop_send
        if self._stopped_at is not None:
            self.stop()
        found: list[FoundSolution] = []
        status, bound, overran = SolveStatus.OTHER, float("nan"), True
        try:
            status, bound, overran = self._receive(receive, found, on_found, began + time_limit)
        finally:
            with self._lock:
                self._stop_send = None
            stop_send.close()
            receive.close()
            child.join(0 if overran else JOIN_SECONDS)
            if child.is_alive():
                child.kill()
                child.join()
        spent = time.perf_counter() - began
        self.total_solve_time += spent
        return SolveOutcome(status, found=found, solve_time=spent, dual_bound=bound)

    def stop(self) -> None:
        with self._lock:
            if self._stopped_at is None:
                self._stopped_at = time.perf_counter()
            if self._stop_send is not None:
                with contextlib.suppress(OSError):  # the child has ended
                    self._stop_send.send_bytes(b"stop")

    def session(self):
        return no_session()

    def _receive(
        self, receive, found: list, on_found, deadline: float
    ) -> tuple[SolveStatus, float, bool]:
        """Pass on the child's solutions until it reports its end, dies, or overruns its
        deadline or a stop by :data:`JOIN_SECONDS`; its status, dual bound, and whether it
        overran."""
        name = self.problem.name
        while True:
            stopped = self._stopped_at
            give_up = min(deadline, math.inf if stopped is None else stopped) + JOIN_SECONDS
            wait = give_up - time.perf_counter()
            if wait <= 0:
                log.warning("%s: the CP-SAT start process did not end in time", name)
                return _ended_by(stopped), float("nan"), True
            if not receive.poll(min(wait, POLL_SECONDS)):
                continue
            try:
                kind, payload = receive.recv()
            except EOFError:
                log.warning("%s: the CP-SAT start process ended without a report", name)
                return SolveStatus.OTHER, float("nan"), False
            if kind == "found":
                solution = FoundSolution(*payload)
                found.append(solution)
                if on_found is not None:
                    on_found(solution)
            elif kind == "unsupported":
                log.info("%s: it does not race", payload)
                return SolveStatus.OTHER, float("nan"), False
            else:
                return SolveStatus(payload[0]), payload[1], False


def _ended_by(stopped: float | None) -> SolveStatus:
    return SolveStatus.INTERRUPTED if stopped is not None else SolveStatus.TIME_LIMIT


def _child_main(
    problem: Problem, deadline: float, seed: int, send, stop_receive, stop_send, *, parent: int
) -> None:
    """Build the CP-SAT model and solve until ``deadline`` (``time.perf_counter()``, the same
    clock in every process on Linux); send each solution, then how the solve ended. A message
    on ``stop_receive``, or its end, stops the solve."""
    stop_send.close()  # the fork's copy of the parent's end: the parent's close must end the pipe
    detach(parent)
    from lns.core.solvers.cpsat.subsolver import CpSatSubSolver

    try:
        solver = CpSatSubSolver(problem)
    except UnsupportedProblemError as error:
        send.send(("unsupported", str(error)))
        return
    solving = threading.Event()

    def stop_when_asked() -> None:  # again and again: a stop before the search is a no-op
        with contextlib.suppress(EOFError, OSError):
            stop_receive.recv_bytes()
        while not solving.wait(STOP_REPEAT_SECONDS):
            solver.stop()

    threading.Thread(target=stop_when_asked, daemon=True).start()
    try:
        outcome = solver.solve(
            time_limit=max(0.01, deadline - time.perf_counter()),
            seed=seed,
            on_found=lambda f: send.send(("found", (f.time, f.objective, f.x))),
        )
    finally:
        solving.set()
    send.send(("end", (outcome.status.value, outcome.dual_bound)))
