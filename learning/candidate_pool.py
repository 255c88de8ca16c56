"""Sub-solves of many candidate neighborhoods at one incumbent, in parallel processes.

Each process of the pool holds its own SCIP sub-solver of the problem (built once, when the
process starts) and solves the candidates it is handed with the others fixed at the
incumbent, as the LNS loop does. The seeds are drawn by the caller, one per candidate, and the
results come back in the candidates' order; SCIP's solve of a candidate does not depend on
what its process solved before, so with node limits (and no time limit reached) the results
repeat exactly, whatever the number of processes and whichever process solves which
candidate.

Processes are started with ``spawn`` (forking a process that already runs SCIP or HiGHS is
unsafe) and ignore Ctrl-C: the collecting process handles it and ends the pool; they end by
themselves when the collecting process ends without ending them (killed).
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import numpy as np

from learning.collect import RenewedSolver
from lns.core.errors import InvalidArgumentError, LNSError
from lns.core.parallel.spawn_main import main_module_skipped
from lns.core.problem.mip import Problem
from lns.core.solvers.protocol import SolveStatus

log = logging.getLogger("lns.collect")


class CandidatePoolError(LNSError, RuntimeError):
    """The pool cannot solve candidates: its processes cannot start here, or every sub-solve of a
    step failed (the instance is then not written, and a rerun collects it again)."""


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


@dataclass
class CandidateResult:
    """What the sub-solve of one candidate gave.

    Attributes
    ----------
    status : str
        The solve's :class:`lns.core.solvers.protocol.SolveStatus` value (``"error"`` when the solve
        raised or its process died).
    objective : float or None
        The best solution's objective, ``None`` when the solve found no better solution than
        the incumbent.
    x : numpy.ndarray or None
        That solution.
    solve_time : float
    """

    status: str
    objective: float | None = None
    x: np.ndarray | None = None
    solve_time: float = 0.0


_SOLVER: RenewedSolver | None = None


def _start_process(problem: Problem, scip_params: dict) -> None:
    """Initialise a pool process: its sub-solver; Ctrl-C is the collecting process's, and the
    process ends when that one does (:func:`_exit_with_parent`)."""
    global _SOLVER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent.sentinel,), daemon=True).start()
    _SOLVER = RenewedSolver(problem, scip_params)


def _exit_with_parent(sentinel: int) -> None:
    """End this process once the collecting process has ended, however it ended.

    A process killed without closing its pool (SIGTERM, SIGKILL) leaves the pool's processes
    waiting for tasks for ever: each holds both ends of the task queue, so none sees it close.
    """
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def _solve(task: tuple) -> CandidateResult:
    """Sub-solve one candidate ``(free, seed, incumbent, time_limit, node_limit)``."""
    free, seed, incumbent, time_limit, node_limit = task
    assert _SOLVER is not None, "_start_process builds it"
    return solve_candidate(_SOLVER, free, seed, incumbent, time_limit, node_limit)


def solve_candidate(
    solver: RenewedSolver,
    free: np.ndarray,
    seed: int,
    incumbent: np.ndarray,
    time_limit: float,
    node_limit: int,
) -> CandidateResult:
    """The sub-problem of ``free`` (the other integer variables fixed at ``incumbent``)."""
    try:
        outcome = solver.solve(
            time_limit=time_limit,
            seed=seed,
            free=free,
            start=incumbent,
            node_limit=node_limit,
        )
    except Exception as error:  # one failing candidate must not end the collection
        log.warning("%s: a candidate's sub-solve failed: %s", solver.problem.name, error)
        return CandidateResult(SolveStatus.ERROR.value)
    best = outcome.best
    return CandidateResult(
        outcome.status.value,
        None if best is None else best.objective,
        None if best is None else best.x,
        outcome.solve_time,
    )


class CandidatePool:
    """Solves candidate neighborhoods of one problem in ``workers`` processes; a context manager.

    Parameters
    ----------
    problem : Problem
    scip_params : dict
        SCIP parameters of every sub-solve (the LNS loop's sub-MIP settings).
    workers : int
        Processes; 1 solves in the calling process (no pool).
    """

    def __init__(self, problem: Problem, scip_params: dict, workers: int):
        if not (isinstance(workers, int) and workers >= 1):
            raise InvalidArgumentError(f"workers must be a positive integer, got {workers!r}")
        method = multiprocessing.get_start_method(allow_none=True)
        if workers > 1 and method not in (None, *multiprocessing.get_all_start_methods()):
            raise CandidatePoolError(
                f"{workers} sub-solver processes cannot start in a process whose start method "
                f"is {method!r} (a job of Hydra's joblib launcher): use sampled.workers=1 with "
                "shards there, or start the shards as separate commands"
            )
        self.problem, self.scip_params, self.workers = problem, scip_params, workers
        self._local = RenewedSolver(problem, scip_params) if workers == 1 else None
        self._executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> CandidatePool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the processes; a solve still running in one is abandoned with it."""
        if self._executor is not None:
            for process in list(getattr(self._executor, "_processes", {}).values()):
                process.terminate()  # a sub-solve may run to its time limit: do not wait
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_process,
                initargs=(self.problem, self.scip_params),
            )
        return self._executor

    def _submit(self, tasks: list) -> list:
        """Futures of ``tasks``, on a new pool if a process of the current one has died."""
        with main_module_skipped(needed=False):  # the pool runs only this module's functions
            try:
                return [self._pool().submit(_solve, task) for task in tasks]
            except BrokenProcessPool:
                log.warning("%s: a sub-solver process died; pool restarted", self.problem.name)
                self.close()
                return [self._pool().submit(_solve, task) for task in tasks]

    def solve(
        self,
        candidates: list,
        seeds: list,
        incumbent: np.ndarray,
        time_limit: float,
        node_limit: int = -1,
    ) -> list[CandidateResult]:
        """The results of ``candidates`` (index arrays of free variables), in their order."""
        tasks = [
            (free, seed, incumbent, time_limit, node_limit)
            for free, seed in zip(candidates, seeds, strict=True)
        ]
        if self._local is not None:
            return [solve_candidate(self._local, *task) for task in tasks]
        futures = self._submit(tasks)
        results, broken = [], False
        for future in futures:
            try:
                results.append(future.result())
            except BrokenProcessPool:  # the candidates it had not finished fail; a new pool follows
                if not broken:
                    log.warning("%s: a sub-solver process died; pool restarted", self.problem.name)
                    self.close()
                    broken = True
                results.append(CandidateResult(SolveStatus.ERROR.value))
        return results
