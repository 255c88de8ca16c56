"""What a run returns: the best solution, the anytime trajectory and per-iteration records."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Feasibility, Problem
from lns.core.problem.solution_file import write_sol

#: Stop reasons with which the returned solution is proven optimal.
PROVEN = ("optimal", "no_integer_variables")


class Status:
    """Final status of a run (strings, so they print and serialise as they are)."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    NO_SOLUTION = "no_solution"


@dataclass(frozen=True, kw_only=True)
class Improvement:
    """A new incumbent.

    Attributes
    ----------
    time : float
        Seconds since the run started.
    objective : float
        Its objective, in the problem's own sense.
    iteration : int
        LNS iteration that found it (-1: the initial solution).
    neighborhood_size : int
        Size of that iteration's neighborhood (0 for the initial solution).
    source : str
        ``"initial"``, ``"user"`` (a given start), ``"subsolve"`` or ``"selector"``.
    """

    time: float
    objective: float
    iteration: int
    neighborhood_size: int
    source: str


@dataclass(frozen=True, kw_only=True)
class IterationRecord:
    """Statistics of one LNS iteration (built by keyword).

    Attributes
    ----------
    iteration : int
    selector : str
    neighborhood_size : int
        Number of variables actually freed.
    target_size : int
        The size the adaptive rule asked for.
    status : str
        SCIP status of the sub-solve, or ``"error"`` if it raised.
    select_time, solve_time : float
        Seconds spent choosing the neighborhood and in the sub-solve.
    objective_before, objective_after : float
    improved : bool
    time : float
        Seconds since the start of the run when the iteration ended.
    """

    iteration: int
    selector: str
    neighborhood_size: int
    target_size: int
    status: str
    select_time: float
    solve_time: float
    objective_before: float
    objective_after: float
    improved: bool
    time: float


@dataclass(kw_only=True)
class WorkerStats:
    """What one worker of a portfolio run did (:mod:`lns.core.parallel.portfolio`), built by
    keyword; the counts and times of a worker that did not report (it crashed, or its kind
    could not run) are left at 0.

    Attributes
    ----------
    worker : int
        Its number, from 0.
    selector : str
        Its selector's name for an LNS worker, else its kind's.
    iterations : int
        LNS iterations, or the whole-problem solves (Local-MIP slices) of another kind.
    improvements : int
        Its solutions that became the shared incumbent.
    time : float
        Seconds it held a core: from its start message to its end, less the time it was
        paused (its core given to another kind, :mod:`lns.core.parallel.allocation`).
    exchange_time : float
        Seconds of those spent sending and taking solutions (and, in deterministic mode,
        waiting for the others at each exchange).
    stop_reason : str
        Why it ended (``"crashed"`` when its process died, ``"killed"`` when it did not report
        in time after the run ended, ``"unavailable"`` when its kind cannot run here).
    kind : str
        Its kind of search: ``"lns"``, ``"scip"``, ``"cpsat"`` or ``"local_search"``
        (:mod:`lns.core.parallel.kinds`).
    found : int
        Solutions it sent to the main process.
    received : int
        Shared incumbents, found by other workers, that it took.
    """

    worker: int
    selector: str
    stop_reason: str
    iterations: int = 0
    improvements: int = 0
    time: float = 0.0
    exchange_time: float = 0.0
    kind: str = "lns"
    found: int = 0
    received: int = 0

    @property
    def improvements_per_second(self) -> float:
        """Its improvements of the shared incumbent per second it held a core."""
        return self.improvements / self.time if self.time > 0 else 0.0


class Callback:
    """Hooks the loop calls as it goes; override what you need (the CLI's progress bar does)."""

    def on_improvement(self, improvement: Improvement) -> None:
        """A new incumbent was accepted."""

    def on_selection(self, state, size: int, neighborhood) -> None:
        """The selector chose ``neighborhood`` (a :class:`lns.core.search.selection.Neighborhood`)
        for
        ``state`` (a :class:`lns.core.search.selection.SearchState`) and the target ``size``; called
        before the neighborhood's solution is offered and before the sub-solve."""

    def on_iteration(self, record: IterationRecord) -> None:
        """An LNS iteration ended."""


@dataclass
class Result:
    """The outcome of :func:`lns.solve`.

    Attributes
    ----------
    instance : str
        Instance name.
    method : str
        ``"lns"``, ``"scip"`` or ``"cpsat"``.
    selector : str or None
        Selector name for LNS runs.
    sub_solver : str or None
        Name of the sub-solver of LNS runs (``"scip"``, ``"cpsat"``, ...).
    status : str
        One of :class:`Status`.
    stop_reason : StopReason
        Why the run ended (:class:`lns.core.search.stop.StopReason`, a string such as
        ``"time_limit"``, ``"optimal"`` or ``"failures"``).
    objective : float or None
        Best objective, in the problem's own sense.
    x : numpy.ndarray or None
        Best solution as a vector in the problem's variable order.
    trajectory : list of (float, float)
        ``(seconds since start, objective)``, one entry per new incumbent.
    iterations : list of IterationRecord
    runtime : float
        Wall-clock seconds of the whole run, reading the problem included.
    feasibility : Feasibility or None
        Check of ``x`` against the original problem.
    seed : int
    time_limit : float or None
    dual_bound : float or None
        A proven bound, where SCIP gave one (plain SCIP runs).
    solver_time : float
        Seconds spent inside SCIP's solves (initial solution and sub-solves, each with the
        freeing of its transformed problem); ``runtime - solver_time`` is the time spent
        outside SCIP (reading, selecting, fixing bounds, checking solutions).
    workers : list of WorkerStats
        Per worker of a portfolio run (``workers >= 2``); empty for a sequential run, whose
        ``iterations`` are those of its one loop. In a portfolio run ``iterations`` holds
        every worker's records, worker after worker.
    found_by : str or None
        What found the best solution: ``"initial"``, ``"user"``, ``"subsolve"``, ``"cpsat"``,
        ``"localmip"``, or in a portfolio run the worker's kind (``"lns/random"``,
        ``"cpsat"``, ``"local_search"``, ``"scip"``).
    """

    instance: str
    method: str
    selector: str | None
    status: str
    stop_reason: str
    objective: float | None
    x: np.ndarray | None
    trajectory: list
    iterations: list
    runtime: float
    feasibility: Feasibility | None
    seed: int
    time_limit: float | None
    dual_bound: float | None = None
    solver_time: float = 0.0
    problem: Problem | None = field(default=None, repr=False)
    sub_solver: str | None = None
    workers: list = field(default_factory=list)
    found_by: str | None = None

    @property
    def solution(self) -> dict | None:
        """``{variable name: value}`` of the best solution, or ``None``."""
        if self.x is None:
            return None
        assert self.problem is not None, "build_result gives a solution its problem"
        return dict(zip(self.problem.var_names, self.x.tolist(), strict=True))

    def write_sol(self, path: str | Path, format: str = "scip") -> Path:
        """Write the best solution in SCIP's ``.sol`` format or the MIPLIB checker's."""
        if self.x is None:
            raise InvalidArgumentError(f"{self.instance}: no solution to write")
        assert self.problem is not None, "build_result gives a solution its problem"
        assert self.objective is not None, "a solution has an objective value"
        return write_sol(path, self.problem, self.x, self.objective, format)

    def __repr__(self) -> str:
        """One line: instance, method (and selector), status, objective, runtime, iterations."""
        method = self.method + (f"/{self.selector}" if self.selector else "")
        objective = "None" if self.objective is None else f"{self.objective:.10g}"
        return (
            f"Result(instance={self.instance!r}, method={method!r}, status={self.status!r}, "
            f"objective={objective}, runtime={self.runtime:.2f}s, "
            f"iterations={len(self.iterations)})"
        )

    def statistics(self) -> dict:
        """Per-iteration records as numpy arrays, one per :class:`IterationRecord` field."""
        names = IterationRecord.__dataclass_fields__
        return {name: np.array([getattr(r, name) for r in self.iterations]) for name in names}

    def to_dataframe(self):
        """Per-iteration records as a ``pandas.DataFrame`` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(
            [asdict(r) for r in self.iterations], columns=list(IterationRecord.__dataclass_fields__)
        )


def build_result(
    incumbent,
    *,
    method: str,
    stop_reason,
    seed: int,
    time_limit: float | None,
    selector: str | None = None,
    sub_solver: str | None = None,
    iterations: list | None = None,
    dual_bound: float | None = None,
    solver_time: float = 0.0,
    workers: list | None = None,
) -> Result:
    """The :class:`Result` of a run (LNS, plain SCIP or CP-SAT) from its final incumbent.

    ``incumbent`` is the run's :class:`lns.core.search.incumbent.Incumbent`; the status follows from
    it and ``stop_reason``, and ``runtime`` is measured from its start until now.
    """
    x, problem = incumbent.x, incumbent.problem
    if x is None:
        status = Status.NO_SOLUTION
    else:
        status = Status.OPTIMAL if stop_reason in PROVEN else Status.FEASIBLE
    return Result(
        instance=problem.name,
        method=method,
        selector=selector,
        status=status,
        stop_reason=stop_reason,
        objective=incumbent.objective,
        x=x,
        trajectory=incumbent.trajectory,
        iterations=list(iterations or []),
        runtime=incumbent.elapsed(),
        feasibility=problem.check(x) if x is not None else None,
        seed=seed,
        time_limit=time_limit,
        dual_bound=dual_bound,
        solver_time=solver_time,
        problem=problem,
        found_by=_finder(incumbent.found_by),
        sub_solver=sub_solver,
        workers=list(workers or []),
    )


def _finder(source: str | None) -> str | None:
    """The kind in a portfolio's source (``"worker 2/4 (lns/rins, arm rins@2)"``:
    ``"lns/rins"``), or the source as it is."""
    if source is None or not source.startswith("worker "):
        return source
    return source.partition("(")[2].rstrip(")").partition(",")[0]
