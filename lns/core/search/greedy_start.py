"""Greedy first solutions of covering and packing problems.

Set cover, vertex cover, independent set and combinatorial auctions share a shape: binary
variables and rows whose coefficients all have one sign, so that raising a variable only helps
a covering row (``p x >= b``, ``p >= 0``) and only uses up a packing row (``p x <= b``). On such
a problem a greedy pass finds a good solution in a fraction of a second, where SCIP finds its
first good one only after presolving and the root LP (seconds on a set cover of the paper's
size), so the LNS can begin at once.

- Covering (every binding row ``p x >= b``): Chvátal's rule, the column of least cost per unit of
  the coverage still missing, its coverage re-evaluated lazily (it only shrinks); then the
  columns a later choice made redundant are dropped, the costliest first.
- Packing (every binding row ``p x <= b``): the column of most value per unit of the contention
  it adds, the contention of a row being how far its free columns' demand exceeds what it has
  left; the scores are refreshed after each tenth of the free columns is walked, and the pass
  ends when no column with a value still fits.

Any other problem has no greedy point here (:func:`greedy_point` returns ``None``).
"""

from __future__ import annotations

import heapq
import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lns.core.problem.mip import Problem
from lns.core.search.start import StartStrategy, StartTask
from lns.core.search.trivial_start import rounded_bounds, start_from
from lns.core.solvers.protocol import SolveOutcome

log = logging.getLogger("lns")

_TOL = 1e-9

#: Share of the free columns a packing pass walks between two refreshes of the scores.
PACKING_REFRESH_SHARE = 0.1


@dataclass(frozen=True)
class SignedRows:
    """A problem's binding rows written with nonnegative coefficients.

    Attributes
    ----------
    kind : {"covering", "packing"}
        ``p x >= b`` for every row (covering) or ``p x <= b`` for every row (packing).
    coefficients : scipy.sparse.csc_matrix
        ``p``, one row per binding row, nonnegative.
    bounds : numpy.ndarray
        ``b``.
    """

    kind: str
    coefficients: sp.csc_matrix
    bounds: np.ndarray


def binary_bounds(problem: Problem) -> tuple[np.ndarray, np.ndarray] | None:
    """The bounds of a problem whose variables are all integers within [0, 1], rounded, or
    ``None``."""
    if not problem.integer_mask.all():
        return None
    lower, upper = rounded_bounds(problem)
    if (lower < 0).any() or (upper > 1).any() or (lower > upper).any():
        return None
    return lower, upper


def signed_rows(problem: Problem) -> SignedRows | None:
    """The problem's binding rows as covering or packing rows, or ``None`` when its rows are of
    neither kind alone (a row with coefficients of both signs, an equality, covering rows beside
    packing ones) or none binds.

    A row is read on its sign: with nonnegative coefficients ``l <= a x <= u`` is a covering row
    ``a x >= l`` when ``u`` cannot bind (``u >= sum(a)``) and a packing row ``a x <= u`` when
    ``l`` cannot (``l <= 0``); with nonpositive coefficients the same holds of ``-a``. A side
    that no binary point can violate does not bind.
    """
    matrix = problem.matrix.tocsr()
    counts = np.diff(matrix.indptr)
    rows = np.repeat(np.arange(problem.n_rows), counts)
    negative = np.zeros(problem.n_rows, dtype=bool)
    positive = np.zeros(problem.n_rows, dtype=bool)
    negative[rows[matrix.data < 0]] = True
    positive[rows[matrix.data > 0]] = True
    if (negative & positive).any():
        return None
    sign = np.where(negative, -1.0, 1.0)
    # Each row as l' <= p x <= u' with p >= 0: a nonpositive row negated swaps its sides.
    low = np.where(negative, -problem.row_upper, problem.row_lower)
    high = np.where(negative, -problem.row_lower, problem.row_upper)
    total = np.abs(matrix).sum(axis=1).A1
    covering = low > _TOL
    packing = high < total - _TOL
    if (covering & packing).any() or (covering.any() and packing.any()):
        return None
    binding = covering if covering.any() else packing
    if not binding.any():
        return None
    coefficients = sp.diags(sign[binding]) @ matrix[binding]
    bounds = low[binding] if covering.any() else high[binding]
    kind = "covering" if covering.any() else "packing"
    return SignedRows(kind, sp.csc_matrix(coefficients), bounds)


def greedy_point(problem: Problem) -> np.ndarray | None:
    """A greedy solution of a covering or packing problem with binary variables (see the
    module), or ``None`` for any other problem or when the greedy pass finds none."""
    bounds = binary_bounds(problem)
    rows = signed_rows(problem) if bounds is not None else None
    if bounds is None or rows is None:
        return None
    lower, upper = bounds
    cost = problem.min_objective
    if rows.kind == "covering":
        x = greedy_cover(rows, cost, lower, upper)
    else:
        x = greedy_pack(rows, cost, lower, upper)
    if x is None or not problem.check(x).feasible:
        return None
    return x


def _column(matrix: sp.csc_matrix, j: int) -> tuple[np.ndarray, np.ndarray]:
    start, end = matrix.indptr[j], matrix.indptr[j + 1]
    return matrix.indices[start:end], matrix.data[start:end]


def greedy_cover(
    rows: SignedRows, cost: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> np.ndarray | None:
    """Chvátal's greedy cover of ``rows`` (covering) at least ``cost``, from ``lower`` (the
    columns of no positive cost taken at once), then its redundant columns dropped, the
    costliest first; ``None`` if no cover exists within ``upper``."""
    p, b = rows.coefficients, rows.bounds
    x = lower.copy()
    x[(upper > lower) & (cost <= 0)] = 1.0
    missing = b - p @ x
    open_rows = int((missing > _TOL).sum())

    def gain(j: int) -> float:
        index, values = _column(p, j)
        need = missing[index]
        short = need > _TOL
        return float((np.minimum(values[short], need[short]) / b[index[short]]).sum())

    heap: list[tuple[float, int]] = []
    for column in np.flatnonzero((upper > x) & (cost > 0)).tolist():
        covered = gain(column)
        if covered > 0:
            heap.append((float(cost[column]) / covered, column))
    heapq.heapify(heap)
    while open_rows and heap:
        _, j = heapq.heappop(heap)
        covered = gain(j)
        if covered <= 0:
            continue
        current = float(cost[j]) / covered
        if heap and current > heap[0][0] + _TOL:
            heapq.heappush(heap, (current, j))
            continue
        x[j] = 1.0
        index, values = _column(p, j)
        was_open = missing[index] > _TOL
        missing[index] -= values
        open_rows -= int((was_open & (missing[index] <= _TOL)).sum())
    if open_rows:
        return None
    return _drop_redundant(rows, cost, x, lower)


def _drop_redundant(
    rows: SignedRows, cost: np.ndarray, x: np.ndarray, lower: np.ndarray
) -> np.ndarray:
    """``x`` without the columns of positive cost whose rows stay covered without them, the
    costliest first."""
    p, b = rows.coefficients, rows.bounds
    activity = p @ x
    taken = np.flatnonzero((x > lower) & (cost > 0))
    for j in taken[np.argsort(-cost[taken], kind="stable")]:
        index, values = _column(p, j)
        if (activity[index] - values >= b[index] - _TOL).all():
            x[j] = lower[j]
            activity[index] -= values
    return x


def greedy_pack(
    rows: SignedRows, cost: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> np.ndarray | None:
    """A greedy packing of ``rows`` (packing) of most value ``-cost``, from ``lower``: columns
    taken by value per unit of contention (see the module) while any fits; ``None`` if
    ``lower`` itself does not fit."""
    p, b = rows.coefficients, rows.bounds
    by_row = p.tocsr()
    x = lower.copy()
    left = b - p @ x
    if (left < -_TOL).any():
        return None
    value = -cost
    candidate = (upper > x) & (value > 0)
    free = candidate & _fits(p, left)
    while free.any():
        room = np.maximum(left, _TOL)
        demand = by_row @ free.astype(float)
        contention = np.maximum(demand - left, 0.0) / room
        score = value / (1.0 + p.T @ (contention / room))
        order = np.flatnonzero(free)
        order = order[np.argsort(-score[order], kind="stable")]
        for j in order[: max(1, math.ceil(PACKING_REFRESH_SHARE * len(order)))]:
            index, values = _column(p, j)
            if (values <= left[index] + _TOL).all():
                x[j] = 1.0
                left[index] -= values
        free = candidate & (x == 0) & _fits(p, left)
    return x


def _fits(p: sp.csc_matrix, left: np.ndarray) -> np.ndarray:
    """Whether each column, raised by one, stays within ``left`` in every row."""
    over = p.data > left[p.indices] + _TOL
    counts = np.diff(p.indptr)
    columns = np.repeat(np.arange(p.shape[1]), counts)
    fits = np.ones(p.shape[1], dtype=bool)
    fits[columns[over]] = False
    return fits


@dataclass(frozen=True)
class GreedyFirst:
    """``then`` as it is, unless the problem is a covering or packing problem with binary
    variables (:func:`greedy_point`): then the greedy solution is the start and the LNS begins
    from it.

    Parameters
    ----------
    then : StartStrategy
        The strategy it stands in for (its name is this one's).
    """

    then: StartStrategy

    @property
    def name(self) -> str:
        return self.then.name

    def __call__(self, task: StartTask) -> SolveOutcome:
        began = time.perf_counter()
        x = greedy_point(task.problem)
        if x is None:
            return self.then(task)
        log.info(
            "%s: starts from a greedy solution (objective %g, %.2fs)",
            task.problem.name,
            task.problem.objective_value(x),
            time.perf_counter() - began,
        )
        return start_from(task, x)
