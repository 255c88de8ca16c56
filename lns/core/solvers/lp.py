"""The LP relaxation of a :class:`~lns.core.problem.mip.Problem`, solved with HiGHS.

:func:`solve_lp` drops integrality, optionally appends extra columns (auxiliary
variables) and extra linear rows (e.g. the local-branching distance row), and
returns the primal point, the objective, the row duals and the reduced costs in
one :class:`LPSolution`. :class:`WarmLP` keeps such an LP in HiGHS between solves:
after changing some rows or bounds in place, HiGHS restarts from the last optimal
basis (a hot start).

Why HiGHS: measured on this machine (single thread, cold start, model building
included; ``benchmarks/test_root_lp.py``) the root LP of ``air05`` takes 0.4-0.8 s with
HiGHS (``"highs"`` lets HiGHS choose, ``"highs-ds"`` is its dual simplex) against
2.2-3.0 s with SCIP's LP solver (presolving off; 3.5 s with presolving); on ``seymour``
0.34-0.39 s with HiGHS's interior point (``"highs-ipm"``, with crossover, so duals are
vertex duals), 1.1-1.5 s with HiGHS's simplex and 1.4-1.6 s with SCIP. Re-solving the
Local Branching LP of air05 or seymour for the next incumbent of a run (only the
distance row changes) takes 0.01-0.1 s hot against 0.6-1.8 s cold
(``benchmarks/test_lb_lp.py``).

HiGHS is driven through its public Python package ``highspy`` (until ac26bdc: SciPy's
private copy, ``scipy.optimize._highspy``). Side by side in one run (3 solves each, median;
``benchmarks/test_root_lp.py`` and ``benchmarks/test_lb_lp.py`` compare with a saved run of an
earlier checkout), the cold root LPs of air05 and seymour took 0.57-2.44 s with highspy 1.16
against 0.58-2.55 s with SciPy 1.17's HiGHS (per method, highspy/SciPy between 0.93 and 1.17),
and the hot re-solves after an incumbent change 0.08-0.09 s against 0.07-0.10 s. Every solve
registers with the run's :class:`~lns.core.interrupt.InterruptGuard`, so that Ctrl-C (or SIGTERM,
SIGHUP) stops an LP at its next simplex or interior-point iteration; the LP then
reports the status ``"interrupted"``.

Sign conventions
----------------
Let ``z`` be the optimal objective in the problem's own sense (maximisation
stays a maximisation) and write every row as ``lower <= a x <= upper``.

- ``row_duals[i] = dz / db_i`` where ``b_i`` is the side of row ``i`` that is
  active (0 for a row active at neither side). For a minimisation, a row
  binding at its upper side has a dual <= 0 and one binding at its lower side a
  dual >= 0; for a maximisation the signs flip.
- ``reduced_costs = c - A^T row_duals`` (over every column, extra ones
  included), which is also ``dz / d(bound)`` of the bound a column sits at.
  For a minimisation a column at its lower bound has a reduced cost >= 0.

These are SCIP's conventions for a minimisation (``getDualsolLinear``,
``getVarRedcost``).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from lns.core.errors import InvalidArgumentError
from lns.core.interrupt import active_guard
from lns.core.problem.mip import Problem

_MODEL_STATUS = highspy.HighsModelStatus
#: Our status names of HiGHS model statuses (any other is "error").
_STATUS = {
    _MODEL_STATUS.kOptimal: "optimal",
    _MODEL_STATUS.kInfeasible: "infeasible",
    _MODEL_STATUS.kUnbounded: "unbounded",
    _MODEL_STATUS.kUnboundedOrInfeasible: "infeasible",
    _MODEL_STATUS.kTimeLimit: "limit",
    _MODEL_STATUS.kIterationLimit: "limit",
    _MODEL_STATUS.kInterrupt: "interrupted",
}
#: Seconds of simplex in a cold solve of method ``"highs"`` before the interior point method
#: (with crossover) takes over for the rest of the time limit. HiGHS's simplex is the faster
#: method on most root LPs here, the interior point by far on a few, such as the auctions of
#: the paper's size (``docs/cl_lns.md``, "The root LP of the auctions"). Seconds of the solving
#: thread's CPU time, not of the wall clock: on a loaded machine a simplex within the limit on
#: a core of its own ran past it on the wall clock, and the interior point method, far slower
#: on some LPs where the simplex is fast, took over (``docs/cl_lns.md``, "A loaded machine").
SIMPLEX_FIRST = 5.0
#: HiGHS options of each method: automatic choice (simplex, then the interior point after
#: :data:`SIMPLEX_FIRST` seconds), dual simplex, interior point with crossover.
_METHOD_OPTIONS: dict[str, dict[str, str | int]] = {
    "highs": {},
    "highs-ds": {"solver": "simplex", "simplex_strategy": 1},
    "highs-ipm": {"solver": "ipm", "run_crossover": "on"},
}
METHODS = tuple(_METHOD_OPTIONS)
#: Column statuses of :attr:`LPSolution.column_basis` (HiGHS's ``HighsBasisStatus`` values):
#: nonbasic at the lower bound, basic, nonbasic at the upper bound (HiGHS also has 3, a free
#: column at zero, and 4, nonbasic).
BASIS_LOWER, BASIS_BASIC, BASIS_UPPER = (
    int(highspy.HighsBasisStatus.kLower),
    int(highspy.HighsBasisStatus.kBasic),
    int(highspy.HighsBasisStatus.kUpper),
)


@dataclass(frozen=True)
class ExtraColumns:
    """Columns appended after the problem's ``n`` variables (they appear in no original row).

    Attributes
    ----------
    objective : numpy.ndarray, shape (p,)
        Objective coefficients, in the problem's own sense.
    lower, upper : numpy.ndarray, shape (p,)
        Bounds, ``±inf`` allowed.
    """

    objective: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __len__(self) -> int:
        return len(self.objective)


@dataclass(frozen=True)
class ExtraRows:
    """Rows ``lower <= matrix [x; extra columns] <= upper`` appended to the problem's rows.

    Attributes
    ----------
    matrix : scipy.sparse matrix, shape (r, n + p)
        Coefficients over the problem's variables followed by the extra columns.
    lower, upper : numpy.ndarray, shape (r,)
        Row sides, ``±inf`` where a side is absent.
    """

    matrix: sp.spmatrix
    lower: np.ndarray
    upper: np.ndarray

    def __len__(self) -> int:
        return self.matrix.shape[0]


@dataclass
class LPSolution:
    """The outcome of one LP solve.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"infeasible"``, ``"unbounded"``, ``"limit"`` (time or iteration
        limit), ``"interrupted"`` (stopped by the interrupt guard) or ``"error"``.
    x : numpy.ndarray, shape (n + p,)
        Primal values of the problem's variables, then of the extra columns (NaN unless optimal).
    objective : float
        ``c x`` plus the problem's offset, in the problem's own sense (NaN unless optimal).
    row_duals : numpy.ndarray, shape (m + r,)
        ``dz/db`` of the problem's rows, then of the extra rows (module docstring for signs).
    reduced_costs : numpy.ndarray, shape (n + p,)
        ``c - A^T row_duals`` for every column.
    solve_time : float
        Wall-clock seconds, building the LP included.
    column_basis : numpy.ndarray of int8, shape (n + p,), or None
        The optimal basis status of every column (:data:`BASIS_LOWER`, :data:`BASIS_BASIC`,
        :data:`BASIS_UPPER`, ...), when asked for (``basis=True``) and HiGHS has a valid basis.
    """

    status: str
    x: np.ndarray
    objective: float
    row_duals: np.ndarray
    reduced_costs: np.ndarray
    solve_time: float
    column_basis: np.ndarray | None = None

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


def solve_lp(
    problem: Problem,
    *,
    extra_rows: ExtraRows | None = None,
    extra_columns: ExtraColumns | None = None,
    time_limit: float | None = None,
    method: str = "highs",
    cancel: threading.Event | None = None,
    basis: bool = False,
) -> LPSolution:
    """Solve the LP relaxation of ``problem``, with optional extra rows and columns.

    Parameters
    ----------
    problem : Problem
        The problem; integrality of every variable is dropped.
    extra_rows : ExtraRows, optional
        Rows over ``[x; extra columns]`` added to the problem's rows.
    extra_columns : ExtraColumns, optional
        Auxiliary columns appended after the problem's variables.
    time_limit : float, optional
        Seconds for HiGHS; on expiry the status is ``"limit"``.
    method : {"highs", "highs-ds", "highs-ipm"}
        HiGHS algorithm: automatic choice (its simplex, then the interior point method after
        :data:`SIMPLEX_FIRST` seconds of CPU time), dual simplex, interior point with crossover.
    cancel : threading.Event, optional
        Set by another thread, it ends the solve (status ``"interrupted"``).
    basis : bool
        Also return the optimal basis status of each column (``LPSolution.column_basis``).

    Returns
    -------
    LPSolution

    Raises
    ------
    ValueError
        ``method`` is not one of :data:`METHODS`, or the extra rows have the wrong width.
    """
    began = time.perf_counter()
    lp = WarmLP(problem, extra_rows=extra_rows, extra_columns=extra_columns, method=method)
    solution = lp.solve(time_limit, cancel, basis=basis)
    solution.solve_time = time.perf_counter() - began
    return solution


def _assemble(problem: Problem, extra_rows: ExtraRows | None, extra_columns: ExtraColumns | None):
    """Objective (own sense), column bounds, CSR matrix and row sides of problem and extras."""
    n, m = problem.n_vars, problem.n_rows
    p = len(extra_columns) if extra_columns is not None else 0
    objective = np.asarray(problem.objective, dtype=float)
    lower, upper = problem.lower, problem.upper
    matrix = sp.csr_matrix(problem.matrix)
    if extra_columns is not None and p:
        objective = np.concatenate([objective, np.asarray(extra_columns.objective, dtype=float)])
        lower = np.concatenate([lower, np.asarray(extra_columns.lower, dtype=float)])
        upper = np.concatenate([upper, np.asarray(extra_columns.upper, dtype=float)])
        matrix = sp.hstack([matrix, sp.csr_matrix((m, p))], format="csr")
    row_lower, row_upper = problem.row_lower, problem.row_upper
    if extra_rows is not None and len(extra_rows):
        if extra_rows.matrix.shape[1] != n + p:
            raise InvalidArgumentError(
                f"extra rows have {extra_rows.matrix.shape[1]} columns, expected n + p = {n + p}"
            )
        matrix = sp.vstack([matrix, sp.csr_matrix(extra_rows.matrix)], format="csr")
        row_lower = np.concatenate([row_lower, np.asarray(extra_rows.lower, dtype=float)])
        row_upper = np.concatenate([row_upper, np.asarray(extra_rows.upper, dtype=float)])
    return (
        objective,
        np.asarray(lower, float),
        np.asarray(upper, float),
        matrix,
        row_lower,
        row_upper,
    )


_INTERRUPT_CALLBACKS = (
    highspy.cb.HighsCallbackType.kCallbackSimplexInterrupt,
    highspy.cb.HighsCallbackType.kCallbackIpmInterrupt,
)


def _interrupt_if_stopped(callback_type, message, data_out, data_in, highs) -> None:
    cancelled = highs.cancel is not None and highs.cancel.is_set()
    if (highs.stop_requested or cancelled or highs.out_of_cpu) and data_in is not None:
        data_in.user_interrupt = True


def _thread_cpu_seconds() -> Callable[[], float]:
    """A clock of the calling thread's CPU seconds that other threads can read (the wall clock
    where the platform has no per-thread CPU clock for other threads to read)."""
    if not hasattr(time, "pthread_getcpuclockid"):
        return time.perf_counter
    clock = time.pthread_getcpuclockid(threading.get_ident())
    return functools.partial(time.clock_gettime, clock)


class _StoppableHighs(highspy.Highs):
    """A silent :class:`highspy.Highs` that another thread can stop (:meth:`stop`).

    HiGHS runs without Python's lock and calls its interrupt callback at every simplex and
    interior-point iteration; a Python callback needs the lock, so while another thread holds
    it each iteration waits for it (up to the interpreter's switch interval, 5 ms): a root LP
    of 0.5 s took 7.4 s beside a busy Python thread (``benchmarks/test_root_lp.py``). So
    the callback is installed but started only once a stop is asked for: :meth:`stop` starts
    it and HiGHS, which reads whether it is active at each iteration, calls it at its next one.
    :meth:`run_guarded` registers the object with the run's interrupt guard for the duration
    of the solve (its watcher thread calls ``stop``), and a thread watches the run's
    ``cancel`` event, to call ``stop`` when it is set, and the solving thread's CPU time, to end
    the solve once it has had ``cpu_limit`` seconds of it (:attr:`out_of_cpu`). The callback is
    a plain function handed to HiGHS (``setCallback``), not highspy's event objects.
    """

    stop_requested = False
    #: The last solve was ended by its ``cpu_limit``.
    out_of_cpu = False
    cancel: threading.Event | None = None
    #: Seconds between two looks of the watcher at the cancel event and the CPU time.
    WATCH_POLL = 0.02

    def enableCallbacks(self):
        # highspy.Highs.__init__ calls this before an option can be set; HiGHS prints its banner
        # on stdout when a callback is installed with output on.
        self.setOptionValue("output_flag", False)
        self.setCallback(_interrupt_if_stopped, self)

    def stop(self) -> None:
        """Ask the running solve to end at its next iteration (thread-safe)."""
        self.stop_requested = True
        self._start_callbacks()

    def _start_callbacks(self) -> None:
        for callback_type in _INTERRUPT_CALLBACKS:
            self.startCallback(callback_type)

    def run_guarded(self, cpu_limit: float | None = None) -> bool:
        """Solve unless the run is already being stopped; returns ``False`` if it was stopped.

        ``cpu_limit``: seconds of this thread's CPU time after which the solve ends (HiGHS's
        status is then an interrupt, and :attr:`out_of_cpu` is set); HiGHS runs in the calling
        thread.
        """
        for callback_type in _INTERRUPT_CALLBACKS:
            self.stopCallback(callback_type)
        self.stop_requested = self.out_of_cpu = False
        guard = active_guard()
        if (guard is not None and guard.requested) or (self.cancel and self.cancel.is_set()):
            return False
        with contextlib.ExitStack() as stack:
            if guard is not None:
                stack.enter_context(guard.solving(self))
            if self.cancel is not None or cpu_limit is not None:
                stack.enter_context(self._watched(self.cancel, cpu_limit))
            self.run()
        return not self.stop_requested and not (guard is not None and guard.requested)

    @contextlib.contextmanager
    def _watched(self, cancel: threading.Event | None, cpu_limit: float | None):
        """For the block, a thread that calls :meth:`stop` once ``cancel`` is set, and ends the
        solve once the calling thread has used ``cpu_limit`` seconds of CPU time in it."""
        ended = threading.Event()
        cpu_seconds = _thread_cpu_seconds()
        began = cpu_seconds()

        def watch() -> None:
            limit = cpu_limit
            while not ended.wait(self.WATCH_POLL):
                if cancel is not None and cancel.is_set():
                    self.stop()
                    return
                if limit is not None and cpu_seconds() - began >= limit:
                    self.out_of_cpu = True
                    self._start_callbacks()
                    limit = None  # a cancel may still come

        watcher = threading.Thread(target=watch, name="highs watcher", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            ended.set()
            watcher.join()


class WarmLP:
    """An LP relaxation held in HiGHS between solves, changed in place and hot-started.

    Built like :func:`solve_lp` (the problem's rows and columns, then the extras); the
    ``change_*`` methods modify it and :meth:`solve` restarts the dual simplex from the
    last optimal basis. Results follow the conventions of the module docstring.

    Parameters
    ----------
    problem : Problem
    extra_rows : ExtraRows, optional
    extra_columns : ExtraColumns, optional
    method : {"highs", "highs-ds", "highs-ipm"}
        HiGHS algorithm of the first solve (``"highs"``: its simplex, then the interior point
        method after :data:`SIMPLEX_FIRST` seconds). Later solves start from the last basis with the
        simplex method (after ``"highs-ipm"``, whose crossover gives that basis, HiGHS is told
        to choose: left at ``"ipm"`` it would solve each change from scratch).

    Raises
    ------
    ValueError
        ``method`` is not one of :data:`METHODS`, or the extra rows have the wrong width.
    """

    def __init__(
        self,
        problem: Problem,
        *,
        extra_rows: ExtraRows | None = None,
        extra_columns: ExtraColumns | None = None,
        method: str = "highs",
    ):
        if method not in METHODS:
            raise InvalidArgumentError(f"LP method {method!r} is not one of {list(METHODS)}")
        self.problem = problem
        self.objective, lower, upper, matrix, row_lower, row_upper = _assemble(
            problem, extra_rows, extra_columns
        )
        self.sign = 1.0 if problem.sense == "minimize" else -1.0
        self.n_columns, self.n_rows = matrix.shape[1], matrix.shape[0]
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = self.n_columns, self.n_rows
        lp.col_cost_ = self.sign * self.objective
        lp.col_lower_, lp.col_upper_ = lower, upper
        lp.row_lower_, lp.row_upper_ = row_lower, row_upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = self.n_columns, self.n_rows
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = (
            matrix.indptr,
            matrix.indices,
            matrix.data,
        )
        self._highs = _StoppableHighs()
        self._highs.setOptionValue("threads", 1)
        for name, value in _METHOD_OPTIONS[method].items():
            self._highs.setOptionValue(name, value)
        self._cold_solver = _METHOD_OPTIONS[method].get("solver") == "ipm"
        self._switch_to_ipm = method == "highs"
        self._highs.passModel(lp)

    def change_coefficients(self, row: int, columns: np.ndarray, values: np.ndarray) -> None:
        """Set ``A[row, columns] = values`` (``row`` counts the problem's rows, then the extras)."""
        for j, value in zip(
            np.asarray(columns).tolist(), np.asarray(values, dtype=float).tolist(), strict=True
        ):
            self._highs.changeCoeff(int(row), int(j), value)

    def change_row_bounds(
        self, rows: np.ndarray, lower: np.ndarray | float, upper: np.ndarray | float
    ) -> None:
        """Set the sides of ``rows``."""
        for i, lo, up in zip(
            np.asarray(rows).tolist(),
            np.broadcast_to(lower, np.shape(rows)).tolist(),
            np.broadcast_to(upper, np.shape(rows)).tolist(),
            strict=True,
        ):
            self._highs.changeRowBounds(int(i), float(lo), float(up))

    def change_column_bounds(
        self, columns: np.ndarray, lower: np.ndarray | float, upper: np.ndarray | float
    ) -> None:
        """Set the bounds of ``columns`` (problem variables, then extra columns)."""
        for j, lo, up in zip(
            np.asarray(columns).tolist(),
            np.broadcast_to(lower, np.shape(columns)).tolist(),
            np.broadcast_to(upper, np.shape(columns)).tolist(),
            strict=True,
        ):
            self._highs.changeColBounds(int(j), float(lo), float(up))

    def replace_last_row(
        self, columns: np.ndarray, values: np.ndarray, lower: float, upper: float
    ) -> None:
        """Delete the last row and add ``lower <= values · x[columns] <= upper`` in its place.

        Unlike :meth:`change_coefficients`, this starts the next solve with the row's slack
        basic: HiGHS keeps the last basis (with one basic variable too many if the old slack
        was nonbasic: its factorization then drops a column). After any change of the matrix
        HiGHS computes its dual steepest-edge weights anew, one solve with the transposed basis
        matrix per row; through a dense row whose slack is nonbasic each of them fills in
        (seconds for 24 000 rows, :class:`heuristics.lb_relax.DistanceLP`), through a basic
        slack none does.
        """
        self._highs.deleteRows(1, np.array([self.n_rows - 1], dtype=np.int32))
        self._highs.addRow(
            float(lower),
            float(upper),
            len(columns),
            np.asarray(columns, dtype=np.int32),
            np.asarray(values, dtype=float),
        )

    def solve(
        self,
        time_limit: float | None = None,
        cancel: threading.Event | None = None,
        basis: bool = False,
    ) -> LPSolution:
        """Solve from the last basis; ``time_limit`` in seconds (``"limit"`` status on expiry).

        A stop request of the interrupt guard, or ``cancel`` set by another thread (before or
        during the solve), ends it with the status ``"interrupted"``. With ``basis``, the
        solution carries the optimal basis status of each column (``column_basis``; 3 ms for
        6000 columns).
        """
        began = time.perf_counter()
        self._highs.cancel = cancel
        limit = max(0.01, float(time_limit)) if time_limit is not None else np.inf
        status = self._run(limit, SIMPLEX_FIRST if self._switch_to_ipm else None)
        if status == "cpu_limit":
            for name, value in _METHOD_OPTIONS["highs-ipm"].items():
                self._highs.setOptionValue(name, value)
            self._cold_solver = True
            status = self._run(limit - (time.perf_counter() - began))
        self._switch_to_ipm = False
        if status == "optimal" and self._cold_solver:
            self._highs.setOptionValue("solver", "choose")
            self._cold_solver = False
        if status != "optimal":
            nan_cols, nan_rows = np.full(self.n_columns, np.nan), np.full(self.n_rows, np.nan)
            return LPSolution(
                status,
                nan_cols,
                float("nan"),
                nan_rows,
                nan_cols.copy(),
                time.perf_counter() - began,
            )
        solution = self._highs.getSolution()
        x = np.asarray(solution.col_value, dtype=float)
        return LPSolution(
            status,
            x,
            float(self.objective @ x + self.problem.objective_offset),
            self.sign * np.asarray(solution.row_dual, dtype=float),
            self.sign * np.asarray(solution.col_dual, dtype=float),
            time.perf_counter() - began,
            self._column_basis() if basis else None,
        )

    @property
    def interior_point_iterations(self) -> int:
        """Interior point iterations of the last solve (0 where the simplex alone solved it)."""
        return int(self._highs.getInfo().ipm_iteration_count)

    def _run(self, time_limit: float, cpu_limit: float | None = None) -> str:
        """One run of HiGHS within ``time_limit`` seconds and ``cpu_limit`` seconds of this
        thread's CPU time; its status, ``"cpu_limit"`` when the second ended it.

        HiGHS's ``time_limit`` bounds the run time summed over every run of its object (a warm
        LP's earlier solves, the simplex before a hand-over): the limit is set past that sum.
        """
        spent = self._highs.getRunTime()
        self._highs.setOptionValue("time_limit", spent + max(0.01, time_limit))
        if not self._highs.run_guarded(cpu_limit):
            return "interrupted"
        status = _STATUS.get(self._highs.getModelStatus(), "error")
        return "cpu_limit" if status == "interrupted" and self._highs.out_of_cpu else status

    def _column_basis(self) -> np.ndarray | None:
        """HiGHS's basis status of each column, or ``None`` without a valid basis."""
        basis = self._highs.getBasis()
        if not basis.valid:
            return None
        return np.fromiter(map(int, basis.col_status), dtype=np.int8, count=self.n_columns)
