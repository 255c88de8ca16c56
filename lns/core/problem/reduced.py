"""The sub-MIP of a neighborhood: its free variables and the rows that hold them, nothing else.

Fixing the integer variables outside a neighborhood at the incumbent leaves a MIP over the free
variables. Built from the whole model, a solver pays for every variable and row of the problem at
each iteration (copying, presolving and freeing them), whatever the neighborhood's size. A
:class:`ReducedProblem` is that MIP written out on its own, as CP-SAT's LNS builds its
neighborhood models from the active constraints only:

- its variables are the free ones; the fixed ones are folded into the row bounds,
  :math:`\\ell_i - \\sum_{j \\notin F} a_{ij} x^*_j \\le \\sum_{j \\in F} a_{ij} x_j \\le u_i
  - \\sum_{j \\notin F} a_{ij} x^*_j`;
- a row without a free variable is dropped (it holds at the incumbent ``x*``, which is feasible),
  and so is one that no values within the free variables' bounds can violate;
- a row with one free variable becomes a bound of that variable (rounded inwards for an integer
  one), widened where needed to keep the incumbent's value: the incumbent satisfies the original
  row within SCIP's tolerance, and it must stay a solution of the sub-MIP;
- the objective keeps the fixed variables' share as its offset, so that objective values are
  those of the original problem.

Continuous variables stay free, as in the whole-model sub-problem (fixing those that share no row
with a free integer variable made the sub-MIPs of a facility location problem slower and worse:
``benchmarks/results/scaling.md``). The work is numpy over the problem's sparse columns: it costs
what the free columns hold, plus what a new incumbent changed.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from lns.core.problem.mip import Change, Problem, Scope
from lns.core.problem.names import Names

#: What a sub-solve with fixed variables solves: the whole model with the fixed variables' bounds
#: changed, the :class:`ReducedProblem`, or either, chosen per solve by the share of the
#: constraint matrix that the free variables hold
#: (:func:`lns.core.solvers.scip.subsolver.prefers_reduced`).
SUB_PROBLEMS = ("whole", "reduced", "auto")

#: Points whose activities a :class:`Reducer` keeps: the incumbent and the last solution found.
KNOWN_POINTS = 2

#: :func:`_rows_held` maps the rows of a neighborhood's entries by a count over all the problem's
#: rows where there is at least one entry per ``DENSE_ROW_MAP`` rows, else by a sort of the
#: entries: the count's time grows with the rows (and its arrays leave the caches on a large
#: problem), the sort's with the entries.
DENSE_ROW_MAP = 2

#: Slack by which a bound from a one-variable row may exceed an integer before it is rounded
#: inwards (SCIP's default feasibility tolerance).
BOUND_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ReducedProblem:
    """The sub-MIP of one neighborhood and the map from its variables to the original ones.

    Attributes
    ----------
    problem : Problem
        The sub-MIP; its variable ``k`` is the original variable ``scope.columns[k]``, with the
        name it has there.
    scope : Scope
        Its variables (``columns``, ascending) and the original rows that hold any of them,
        with the original problem's data on both.
    base : numpy.ndarray, shape (n,)
        The incumbent: the values of the original variables outside ``scope.columns``.
    start : numpy.ndarray, shape (k,)
        The incumbent's values of ``scope.columns`` (a solution of the sub-MIP).
    row_matrix : scipy.sparse.csc_matrix, shape (len(rows), k)
        The original matrix on ``scope.rows`` and ``scope.columns``.
    base_row_activity : numpy.ndarray, shape (len(rows),)
        The activities of ``rows`` at ``base``.
    """

    problem: Problem
    scope: Scope
    base: np.ndarray
    start: np.ndarray
    row_matrix: sp.csc_matrix
    base_row_activity: np.ndarray

    def lift(self, values: np.ndarray) -> np.ndarray:
        """The original problem's point with ``values`` on ``scope.columns`` and ``base``
        elsewhere."""
        x = self.base.copy()
        x[self.scope.columns] = values
        return x

    def change(self, values: np.ndarray) -> Change:
        """How :meth:`lift` ``(values)`` differs from the base: its activities on the rows that
        hold the columns and its objective, from what the columns hold alone."""
        activity = self.base_row_activity + self.row_matrix @ (values - self.start)
        objective = self.problem.objective_value(values)
        return Change(self.base, self.scope, values, activity, objective)


@dataclass
class _Point:
    """A point a :class:`Reducer` knows: its row activities, objective and feasibility
    (``None``: not checked yet)."""

    x: np.ndarray
    activity: np.ndarray
    objective: float
    feasible: bool | None = None


class Reducer:
    """Builds the :class:`ReducedProblem` of each neighborhood of one problem.

    Parameters
    ----------
    problem : Problem

    Notes
    -----
    It reads the constraint matrix by columns (:attr:`Problem.by_column`, a second sparse copy
    of the problem, made once per problem and shared with a portfolio's workers), and holds the row
    activities ``A x*`` of the incumbents it was given: a solution found in a reduced problem
    (:meth:`remember`) that becomes the next incumbent has them updated on the rows it changed,
    anything else gets a product with the whole matrix.
    """

    def __init__(self, problem: Problem):
        self.problem = problem
        self.by_column = problem.by_column
        self._continuous = np.flatnonzero(~problem.integer_mask)
        self._known: list[_Point] = []  # the last :data:`KNOWN_POINTS` incumbents, newest first
        self._found: tuple[np.ndarray, Change] | None = None  # the last solution remembered

    def free_columns(self, free: np.ndarray) -> np.ndarray:
        """The variables a reduced problem keeps, ascending, when the integer variables
        outside ``free`` are fixed: ``free`` and the continuous variables."""
        return np.union1d(np.asarray(free, dtype=np.int64), self._continuous)

    def nonzeros(self, columns: np.ndarray) -> int:
        """How many nonzeros of the constraint matrix the variables ``columns`` hold."""
        indptr = self.by_column.indptr
        return int((indptr[columns + 1] - indptr[columns]).sum())

    def kept_nonzeros(self, columns: np.ndarray) -> int:
        """How many nonzeros the reduced problem over ``columns`` can keep: those of ``columns``
        in the rows that hold two of them or more (a row that holds one becomes a bound). On a
        graph problem whose rows are edges, half of the nodes free hold half of the nonzeros but
        keep a quarter."""
        rows = _column_entries(self.by_column, columns).row
        per_row = np.bincount(rows, minlength=self.problem.n_rows)
        return int(per_row[per_row >= 2].sum())

    def activity(self, incumbent: np.ndarray) -> np.ndarray:
        """The row activities ``A x*`` of ``incumbent``."""
        return self._entry(incumbent).activity

    def holds(self, incumbent: np.ndarray) -> bool:
        """Whether ``incumbent`` is feasible: a reduced problem drops the rows that hold at it,
        which is right only then (a start handed in to be completed may not be)."""
        point = self._entry(incumbent)
        if point.feasible is None:
            point.feasible = self.problem.check(point.x, activity=point.activity).feasible
        return point.feasible

    def remember(self, x: np.ndarray, change: Change) -> None:
        """Keep ``x``, a solution found in a reduced problem, and how it differs from its base:
        if it becomes the next incumbent, its activities come from its base's and the change."""
        self._found = (x, change)

    def _entry(self, x: np.ndarray) -> _Point:
        """The known point ``x``: kept, the remembered solution moved on from its base (whose
        activities it takes over, updated on the changed rows), or computed. Identity is
        looked for before equality, which costs a pass over the point."""
        point = None
        for same in (operator.is_, np.array_equal):
            point = next((known for known in self._known if same(known.x, x)), None)
            if point is not None:
                return point
            if self._found is not None and same(self._found[0], x):
                point = self._advanced(x)
                if point is not None:
                    break
        if point is None:
            x = np.asarray(x, dtype=float)  # the caller's array where it can: identity counts
            point = _Point(x, self.problem.matrix @ x, self.problem.objective_value(x))
        self._known = [point, *self._known][:KNOWN_POINTS]
        return point

    def _advanced(self, x: np.ndarray) -> _Point | None:
        """The remembered solution, equal to ``x``, as a known point if its base is known."""
        assert self._found is not None, "_entry asks only with a remembered solution"
        found, change = self._found
        x = np.asarray(x, dtype=float)  # the caller's array, equal to the one found
        base = next((p for p in self._known if p.x is change.base), None)
        if base is None:
            return None
        self._known.remove(base)  # its activities become the solution's
        base.activity[change.rows] = change.row_activity
        feasible = None
        if base.feasible:
            feasible = self.problem.check(found, change=change).feasible
        return _Point(x, base.activity, change.objective, feasible)

    def reduce(self, columns: np.ndarray, incumbent: np.ndarray) -> ReducedProblem:
        """The sub-MIP over ``columns`` (from :meth:`free_columns`), every other variable fixed
        at its value in ``incumbent``."""
        problem = self.problem
        incumbent = np.asarray(incumbent, dtype=float)
        start = incumbent[columns]
        entries = _column_entries(self.by_column, columns)
        rows, inverse, per_row = _rows_held(entries.row, problem.n_rows)
        held = entries.data * start[entries.col]
        point = self._entry(incumbent)
        base_row_activity = point.activity[rows]
        fixed_activity = base_row_activity - np.bincount(inverse, weights=held, minlength=len(rows))
        scope = problem.scope(columns, rows)
        with np.errstate(invalid="ignore"):  # inf - finite stays inf
            row_lower = scope.row_lower - fixed_activity
            row_upper = scope.row_upper - fixed_activity
        # Entries picked by index arrays made once: a boolean mask per array costs several
        # times more on the scattered entries of a large neighborhood.
        alone = per_row[inverse] == 1
        single, shared = np.flatnonzero(alone), np.flatnonzero(~alone)
        lower, upper = _bounds(scope, start, entries, inverse, single, row_lower, row_upper)
        binding = _binding(entries, inverse, shared, lower, upper, row_lower, row_upper)
        kept = shared[binding[inverse[shared]]]
        kept_rows, local = np.unique(inverse[kept], return_inverse=True)
        shape = (len(kept_rows), len(columns))
        matrix = _by_column(entries.data[kept], local, entries.col[kept], shape).tocsr()
        objective = problem.objective[columns]
        sub = Problem(
            name=f"{problem.name}_neighborhood",
            var_names=Names.of(problem.var_names).take(columns),
            var_types=problem.var_types[columns],
            lower=lower,
            upper=upper,
            objective=objective,
            objective_offset=point.objective - float(objective @ start),
            sense=problem.sense,
            matrix=matrix,
            row_lower=row_lower[kept_rows],
            row_upper=row_upper[kept_rows],
            row_names=Names.of(problem.row_names).take(rows[kept_rows]),
        )
        row_matrix = _by_column(entries.data, inverse, entries.col, (len(rows), len(columns)))
        return ReducedProblem(sub, scope, point.x, start, row_matrix, base_row_activity)


class _Entries(NamedTuple):
    """Nonzeros of some columns of the constraint matrix, by column and, within one, by row:
    their rows, their columns' positions among those columns, and their values."""

    row: np.ndarray
    col: np.ndarray
    data: np.ndarray


def _column_entries(by_column: sp.csc_matrix, columns: np.ndarray) -> _Entries:
    """The nonzeros of ``columns`` (ascending) in ``by_column``, gathered from its arrays (a
    scipy column slice costs several times more on the few hundred nonzeros of a neighborhood)."""
    starts = by_column.indptr[columns]
    counts = by_column.indptr[columns + 1] - starts
    ends = np.cumsum(counts)
    at = np.repeat(starts - (ends - counts), counts) + np.arange(ends[-1] if len(ends) else 0)
    return _Entries(
        by_column.indices[at], np.repeat(np.arange(len(columns)), counts), by_column.data[at]
    )


def _rows_held(row: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows that the entries ``row`` name, ascending, each entry's position among them, and
    how many entries each holds: ``np.unique`` with its inverse and counts, by a count over all
    the rows where the entries are many enough to pay for it (a sort costs several times more
    on the hundred thousand entries of half a dense graph's nodes), else by the sort."""
    if len(row) * DENSE_ROW_MAP < n_rows:
        return np.unique(row, return_inverse=True, return_counts=True)
    count = np.bincount(row, minlength=n_rows)
    rows = np.flatnonzero(count)
    position = np.empty(n_rows, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    return rows, position[row], count[rows]


def _by_column(
    data: np.ndarray, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]
) -> sp.csc_matrix:
    """The CSC matrix of entries listed by column and, within one, by row (as
    :func:`_column_entries` gives them): its arrays are theirs, without a sort or a conversion
    from coordinates."""
    indptr = np.zeros(shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=shape[1]), out=indptr[1:])
    return sp.csc_matrix((data, rows, indptr), shape=shape)


def _binding(
    entries: _Entries,
    inverse: np.ndarray,
    kept: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
) -> np.ndarray:
    """Per row, whether some values within the bounds ``lower`` and ``upper`` of the entries'
    columns (only the entries at the positions ``kept`` count) violate it: a set-cover row
    already covered by a fixed column is not, and is left out of the sub-MIP rather than built
    and presolved away."""
    a, j, i = entries.data[kept], entries.col[kept], inverse[kept]
    low, high = a * lower[j], a * upper[j]
    n = len(row_lower)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, which counts as binding
        least = np.bincount(i, weights=np.minimum(low, high), minlength=n)
        most = np.bincount(i, weights=np.maximum(low, high), minlength=n)
    return ~((least >= row_lower) & (most <= row_upper))


def _bounds(
    scope: Scope,
    start: np.ndarray,
    entries: _Entries,
    inverse: np.ndarray,
    single: np.ndarray,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The bounds of ``scope``'s variables tightened by their one-variable rows (the entries at
    the positions ``single``), integers rounded inwards, the incumbent's values ``start`` kept
    inside."""
    lower, upper = scope.lower.copy(), scope.upper.copy()
    a, j, i = entries.data[single], entries.col[single], inverse[single]
    with np.errstate(invalid="ignore"):
        from_lower, from_upper = row_lower[i] / a, row_upper[i] / a
    # The entries come by column: each column's bound is a reduction over one segment.
    segments = np.flatnonzero(np.diff(j, prepend=-1))
    held = j[segments]
    if len(segments):
        tightest = np.maximum.reduceat(np.where(a > 0, from_lower, from_upper), segments)
        lower[held] = np.maximum(lower[held], tightest)
        tightest = np.minimum.reduceat(np.where(a > 0, from_upper, from_lower), segments)
        upper[held] = np.minimum(upper[held], tightest)
    integer = scope.integer
    lower[integer] = np.ceil(lower[integer] - BOUND_TOLERANCE)
    upper[integer] = np.floor(upper[integer] + BOUND_TOLERANCE)
    return np.minimum(lower, start), np.maximum(upper, start)
