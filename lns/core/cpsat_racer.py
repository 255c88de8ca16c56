"""CP-SAT on the whole problem in a child process: a racer of the ``"race"`` start.

In a thread of the main process, CP-SAT's model is built in Python (seconds for a large
problem) while SCIP's callbacks wait for Python's lock, and the race started later than the
feasibility start alone (``benchmarks/results/fast_start_race.json``). In a process of its own,
forked from the main process (no new imports), CP-SAT builds its model and searches on a core
of its own; its solutions come back through a pipe, as they are found.

The child ignores the stop signals (the main process stops it through :meth:`CpSatProcess.stop`)
and dies with the main process (Linux), as the portfolio's workers do.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time

from lns.core.errors import UnsupportedProblemError
from lns.core.interrupt import STOP_SIGNALS
from lns.core.portfolio_worker import detach
from lns.core.problem import Problem
from lns.core.subsolver import FoundSolution, SolveOutcome, SolveStatus, no_session

log = logging.getLogger("lns")

#: Seconds the child has to report after its time limit or a stop before it is killed.
JOIN_SECONDS = 2.0
#: Seconds between the child's repeated stop requests to its solver.
STOP_REPEAT_SECONDS = 0.05


class CpSatProcess:
    """A :class:`lns.core.subsolver.SubSolver`-like racer (``solve``, ``stop``, ``session``)
    that solves the whole pure-integer ``problem`` with CP-SAT (one search worker) in a forked
    child process.

    A problem CP-SAT cannot model ends the solve with ``OTHER`` (logged), which does not end a
    race; a child that dies ends it with ``OTHER`` too, its solutions kept.
    """

    name = "cpsat-process"
    total_solve_time = 0.0

    def __init__(self, problem: Problem):
        self.problem = problem
        self._context = multiprocessing.get_context("fork")
        self._stop = self._context.Event()

    def solve(self, *, time_limit: float, seed: int, on_found=None, **_) -> SolveOutcome:
        began = time.perf_counter()
        receive, send = self._context.Pipe(duplex=False)
        child = self._context.Process(
            target=_child_main,
            args=(self.problem, began + time_limit, seed, send, self._stop, os.getpid()),
            name="lns-start-cpsat",
            daemon=True,
        )
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:  # a Ctrl-C must not reach the child before it ignores it
            child.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        send.close()  # the child holds the only writing end: its death ends recv()
        found: list[FoundSolution] = []
        status, bound = SolveStatus.OTHER, float("nan")
        try:
            status, bound = _receive(receive, found, on_found, self.problem.name)
        finally:
            receive.close()
            child.join(JOIN_SECONDS)
            if child.is_alive():
                child.kill()
                child.join()
        spent = time.perf_counter() - began
        self.total_solve_time += spent
        return SolveOutcome(status, found=found, solve_time=spent, dual_bound=bound)

    def stop(self) -> None:
        self._stop.set()

    def session(self):
        return no_session()


def _receive(receive, found: list, on_found, name: str) -> tuple[SolveStatus, float]:
    """Pass on the child's solutions until it reports its end (or dies); its status and dual
    bound."""
    while True:
        try:
            kind, payload = receive.recv()
        except EOFError:
            log.warning("%s: the CP-SAT start process ended without a report", name)
            return SolveStatus.OTHER, float("nan")
        if kind == "found":
            solution = FoundSolution(*payload)
            found.append(solution)
            if on_found is not None:
                on_found(solution)
        elif kind == "unsupported":
            log.info("%s: it does not race", payload)
            return SolveStatus.OTHER, float("nan")
        else:
            return SolveStatus(payload[0]), payload[1]


def _child_main(problem: Problem, deadline: float, seed: int, send, stop, parent: int) -> None:
    """Build the CP-SAT model and solve until ``deadline`` (``time.perf_counter()``, the same
    clock in every process on Linux); send each solution, then how the solve ended."""
    detach(parent)
    from lns.core.cpsat_subsolver import CpSatSubSolver

    try:
        solver = CpSatSubSolver(problem)
    except UnsupportedProblemError as error:
        send.send(("unsupported", str(error)))
        return

    solving = threading.Event()

    def stop_when_asked() -> None:  # again and again: a stop before the search is a no-op
        stop.wait()
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
