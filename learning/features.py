"""The variable–constraint bipartite graph of a problem at its current incumbent.

The state representation of CL-LNS (Huang et al., ICML 2023), in the spirit of
Gasse et al. (NeurIPS 2019) and Khalil et al. (AAAI 2016), computed without Ecole:

* every row ``l <= a x <= u`` becomes one or two constraint nodes of the form
  ``a' x <= b'`` (``a x <= u`` and ``-a x <= -l``; an equality gives both), so that
  duals, slacks and tightness have one meaning for every node;
* one edge per non-zero of those rows, from the constraint node to the variable;
* the LP relaxation (HiGHS through :func:`lns.core.lp.solve_lp`) is solved once per
  problem and gives the LP value, fractionality, reduced cost, dual and slack features.

Static columns are computed once in :class:`FeatureExtractor` (``__init__``); the dynamic
columns (incumbent, last three incumbents, slack at the incumbent) are filled in by
:meth:`FeatureExtractor.observe` each LNS iteration, which costs ``O(n + nnz)``.

Scales: objective coefficients, reduced costs and duals are divided by ``max |c|``; row
data are divided by the row's Euclidean norm; values that can be arbitrarily large
(bounds, LP and incumbent values) pass through ``sign(x) log(1 + |x|)``. The model
additionally standardises each column with statistics of its training set.

The columns are named by :class:`VarFeature`, :class:`ConsFeature` and :class:`EdgeFeature`;
a checkpoint stores the names so that a model is never fed columns it was not trained on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import scipy.sparse as sp

from lns.core.problem import BINARY, CONTINUOUS, INTEGER, Problem

#: Bumped whenever a column changes meaning; checkpoints record it.
FEATURE_VERSION = 1
#: Number of earlier incumbents whose values are features.
HISTORY_LENGTH = 3
_TIGHT_TOL = 1e-6


class VarFeature(IntEnum):
    """Columns of the variable feature matrix (static first, then dynamic)."""

    OBJECTIVE = 0  # c_j / max|c| (minimisation sense)
    IS_BINARY = 1
    IS_INTEGER = 2  # general integer
    IS_CONTINUOUS = 3
    HAS_LOWER = 4  # finite lower bound
    HAS_UPPER = 5
    LOWER = 6  # slog(l_j), 0 if infinite
    UPPER = 7
    LP_VALUE = 8  # slog(x_lp)
    LP_FRACTIONALITY = 9  # |x_lp - round(x_lp)| for integer variables
    LP_AT_LOWER = 10
    LP_AT_UPPER = 11
    REDUCED_COST = 12  # d_j / max|c|
    DEGREE = 13  # non-zeros in the column / max over columns (Khalil: constraint degree)
    COEF_MEAN = 14  # mean, min, max of a_ij / ||a_i|| over its rows (Khalil: coefficient stats)
    COEF_MIN = 15
    COEF_MAX = 16
    INCUMBENT = 17  # slog(x*), dynamic from here on
    INCUMBENT_LP_DISTANCE = 18  # slog(|x* - x_lp|)
    HISTORY_1_PRESENT = 19
    HISTORY_1_VALUE = 20
    HISTORY_2_PRESENT = 21
    HISTORY_2_VALUE = 22
    HISTORY_3_PRESENT = 23
    HISTORY_3_VALUE = 24


class ConsFeature(IntEnum):
    """Columns of the constraint feature matrix; each node is a row ``a x <= b``."""

    RHS = 0  # b / ||a||
    IS_EQUALITY = 1  # split from an equality row
    IS_LOWER_SIDE = 2  # the ``-a x <= -l`` half of a row
    OBJ_COSINE = 3  # cosine between a and c (Gasse)
    DEGREE = 4  # non-zeros / max over rows
    LP_DUAL = 5  # dual / max|c| scaled by ||a||, i.e. the dual of the normalised row
    LP_SLACK = 6  # (b - a x_lp) / ||a||
    LP_TIGHT = 7
    INCUMBENT_SLACK = 8  # (b - a x*) / ||a||, dynamic from here on
    INCUMBENT_TIGHT = 9


class EdgeFeature(IntEnum):
    """Columns of the edge feature matrix (one edge per non-zero of a constraint node)."""

    COEF = 0  # slog(a_ij)
    COEF_NORMALIZED = 1  # a_ij / ||a_i||
    COEF_OVER_RHS = 2  # slog(a_ij / max(1e-6, |b_i|)), the paper's second edge feature


VAR_DYNAMIC_START = VarFeature.INCUMBENT
CONS_DYNAMIC_START = ConsFeature.INCUMBENT_SLACK


def feature_spec() -> dict:
    """Plain description of the columns, stored in checkpoints and compared when loading."""
    return {
        "version": FEATURE_VERSION,
        "variable": [f.name for f in VarFeature],
        "constraint": [f.name for f in ConsFeature],
        "edge": [f.name for f in EdgeFeature],
    }


def slog(x):
    """``sign(x) * log(1 + |x|)``: keeps order and sign, tames large magnitudes."""
    return np.sign(x) * np.log1p(np.abs(x))


@dataclass
class Observation:
    """The bipartite graph at one incumbent (float32 arrays, ready for torch).

    Attributes
    ----------
    variable_features : numpy.ndarray, shape (n, len(VarFeature))
    constraint_features : numpy.ndarray, shape (m', len(ConsFeature))
        ``m'`` constraint nodes after splitting two-sided rows.
    edge_index : numpy.ndarray of int64, shape (2, nnz')
        Row 0: constraint node, row 1: variable.
    edge_features : numpy.ndarray, shape (nnz', len(EdgeFeature))
    """

    variable_features: np.ndarray
    constraint_features: np.ndarray
    edge_index: np.ndarray
    edge_features: np.ndarray


@dataclass
class RootLP:
    """The LP relaxation's solution in the split-row form ``A' x <= b'``.

    ``ok`` is False when HiGHS found no optimal LP solution; the LP columns are then zero.
    """

    x: np.ndarray
    reduced_costs: np.ndarray
    duals: np.ndarray
    ok: bool


def split_rows(problem: Problem) -> tuple:
    """Rewrite ``l <= A x <= u`` as ``A' x <= b'``.

    The rows with a finite ``u`` come first (``a x <= u``), then those with a finite ``l``
    (``-a x <= -l``).

    Returns
    -------
    matrix : scipy.sparse.csr_matrix, shape (m', n)
    rhs : numpy.ndarray, shape (m',)
    is_equality, is_lower_side : numpy.ndarray of bool, shape (m',)
    upper_rows, lower_rows : numpy.ndarray of int
        The original rows of the two halves.
    """
    upper = np.flatnonzero(np.isfinite(problem.row_upper))
    lower = np.flatnonzero(np.isfinite(problem.row_lower))
    equality = problem.row_lower == problem.row_upper
    matrix = sp.vstack([problem.matrix[upper], -problem.matrix[lower]]).tocsr()
    rhs = np.concatenate([problem.row_upper[upper], -problem.row_lower[lower]])
    is_equality = np.concatenate([equality[upper], equality[lower]])
    is_lower_side = np.concatenate([np.zeros(len(upper), bool), np.ones(len(lower), bool)])
    return matrix, rhs, is_equality, is_lower_side, upper, lower


def solve_root_lp(
    problem: Problem,
    upper_rows: np.ndarray,
    lower_rows: np.ndarray,
    time_limit: float,
    cancel: threading.Event | None = None,
) -> RootLP:
    """The LP relaxation (:func:`lns.core.lp.solve_lp`, HiGHS), minimisation sense, split rows;
    ``cancel``, set by another thread, ends the solve (its columns are then zero).

    A row's dual ``d`` (minimisation sense) is ``<= 0`` when its upper side binds and ``>= 0``
    when its lower side does; its ``a x <= u`` node gets ``min(d, 0)`` and its ``-a x <= -l``
    node ``-max(d, 0)``, both ``<= 0`` like the duals of ``<=`` rows of a minimisation.
    """
    # scipy.optimize, imported late: learning.selector starts it in the background
    from lns.core.lp import solve_lp

    lp = solve_lp(problem, time_limit=time_limit, cancel=cancel)
    n = problem.n_vars
    if not lp.optimal:
        return RootLP(np.zeros(n), np.zeros(n), np.zeros(len(upper_rows) + len(lower_rows)), False)
    sign = 1.0 if problem.sense == "minimize" else -1.0
    duals = sign * lp.row_duals
    split_duals = np.concatenate(
        [np.minimum(duals[upper_rows], 0.0), -np.maximum(duals[lower_rows], 0.0)]
    )
    return RootLP(lp.x[:n], sign * lp.reduced_costs[:n], split_duals, True)


class FeatureExtractor:
    """Static features of a problem, computed once, and per-iteration observations.

    Parameters
    ----------
    problem : Problem
    lp_time_limit : float
        Seconds for the root LP.
    cancel : threading.Event, optional
        Set by another thread, it ends the root LP (:func:`solve_root_lp`).
    """

    def __init__(
        self,
        problem: Problem,
        lp_time_limit: float = 60.0,
        cancel: threading.Event | None = None,
    ):
        self.problem = problem
        matrix, rhs, is_equality, is_lower_side, upper_rows, lower_rows = split_rows(problem)
        self.matrix = matrix
        self.rhs = rhs
        self.lp = solve_root_lp(problem, upper_rows, lower_rows, lp_time_limit, cancel)
        row_norm = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        self.row_norm = np.where(row_norm > 0, row_norm, 1.0)
        coo = matrix.tocoo()
        self.edge_index = np.vstack([coo.row, coo.col]).astype(np.int64)
        normalized = coo.data / self.row_norm[coo.row]
        self.edge_features = np.column_stack(
            [slog(coo.data), normalized, slog(coo.data / np.maximum(1e-6, np.abs(rhs[coo.row])))]
        ).astype(np.float32)
        self.var_static = self._variable_static(coo, normalized)
        self.cons_static = self._constraint_static(is_equality, is_lower_side)

    def _variable_static(self, coo: sp.coo_matrix, normalized: np.ndarray) -> np.ndarray:
        p, lp = self.problem, self.lp
        n = p.n_vars
        scale = max(np.abs(p.min_objective).max(initial=0.0), 1e-12)
        features = np.zeros((n, len(VarFeature)), dtype=np.float64)
        features[:, VarFeature.OBJECTIVE] = p.min_objective / scale
        features[:, VarFeature.IS_BINARY] = p.var_types == BINARY
        features[:, VarFeature.IS_INTEGER] = p.var_types == INTEGER
        features[:, VarFeature.IS_CONTINUOUS] = p.var_types == CONTINUOUS
        has_lower, has_upper = np.isfinite(p.lower), np.isfinite(p.upper)
        features[:, VarFeature.HAS_LOWER] = has_lower
        features[:, VarFeature.HAS_UPPER] = has_upper
        features[:, VarFeature.LOWER] = np.where(
            has_lower, slog(np.where(has_lower, p.lower, 0.0)), 0.0
        )
        features[:, VarFeature.UPPER] = np.where(
            has_upper, slog(np.where(has_upper, p.upper, 0.0)), 0.0
        )
        features[:, VarFeature.LP_VALUE] = slog(lp.x)
        features[:, VarFeature.LP_FRACTIONALITY] = np.where(
            p.integer_mask, np.abs(lp.x - np.round(lp.x)), 0.0
        )
        if lp.ok:
            features[:, VarFeature.LP_AT_LOWER] = has_lower & (
                np.abs(lp.x - np.where(has_lower, p.lower, 0)) < _TIGHT_TOL
            )
            features[:, VarFeature.LP_AT_UPPER] = has_upper & (
                np.abs(lp.x - np.where(has_upper, p.upper, 0)) < _TIGHT_TOL
            )
        features[:, VarFeature.REDUCED_COST] = lp.reduced_costs / scale
        degree = np.bincount(coo.col, minlength=n)
        features[:, VarFeature.DEGREE] = degree / max(degree.max(initial=0), 1)
        features[:, VarFeature.COEF_MEAN] = np.bincount(
            coo.col, normalized, minlength=n
        ) / np.maximum(degree, 1)
        coef_min, coef_max = np.zeros(n), np.zeros(n)
        if len(normalized):
            coef_min[:] = np.inf
            coef_max[:] = -np.inf
            np.minimum.at(coef_min, coo.col, normalized)
            np.maximum.at(coef_max, coo.col, normalized)
            coef_min[degree == 0] = 0.0
            coef_max[degree == 0] = 0.0
        features[:, VarFeature.COEF_MIN] = coef_min
        features[:, VarFeature.COEF_MAX] = coef_max
        return features.astype(np.float32)

    def _constraint_static(self, is_equality: np.ndarray, is_lower_side: np.ndarray) -> np.ndarray:
        p, lp, matrix = self.problem, self.lp, self.matrix
        m = matrix.shape[0]
        c = p.min_objective
        c_norm = np.linalg.norm(c)
        scale = max(np.abs(c).max(initial=0.0), 1e-12)
        features = np.zeros((m, len(ConsFeature)), dtype=np.float64)
        features[:, ConsFeature.RHS] = self.rhs / self.row_norm
        features[:, ConsFeature.IS_EQUALITY] = is_equality
        features[:, ConsFeature.IS_LOWER_SIDE] = is_lower_side
        features[:, ConsFeature.OBJ_COSINE] = (
            (matrix @ c) / (self.row_norm * c_norm) if c_norm > 0 else 0.0
        )
        degree = np.diff(matrix.indptr)
        features[:, ConsFeature.DEGREE] = degree / max(degree.max(initial=0), 1)
        features[:, ConsFeature.LP_DUAL] = lp.duals * self.row_norm / scale
        if lp.ok:
            slack = (self.rhs - matrix @ lp.x) / self.row_norm
            features[:, ConsFeature.LP_SLACK] = slog(slack)
            features[:, ConsFeature.LP_TIGHT] = np.abs(slack) < _TIGHT_TOL
        return features.astype(np.float32)

    def observe(self, incumbent: np.ndarray, history: list | tuple = ()) -> Observation:
        """The graph at ``incumbent`` with up to :data:`HISTORY_LENGTH` earlier incumbents.

        ``history`` lists the earlier incumbents, most recent first. Only the dynamic columns are
        computed; the static ones are copied.
        """
        incumbent = np.asarray(incumbent, dtype=np.float64)
        variables = self.var_static.copy()
        variables[:, VarFeature.INCUMBENT] = slog(incumbent)
        variables[:, VarFeature.INCUMBENT_LP_DISTANCE] = slog(np.abs(incumbent - self.lp.x))
        for i, earlier in enumerate(list(history)[:HISTORY_LENGTH]):
            variables[:, VarFeature[f"HISTORY_{i + 1}_PRESENT"]] = 1.0
            variables[:, VarFeature[f"HISTORY_{i + 1}_VALUE"]] = slog(
                np.asarray(earlier, dtype=np.float64)
            )
        constraints = self.cons_static.copy()
        slack = (self.rhs - self.matrix @ incumbent) / self.row_norm
        constraints[:, ConsFeature.INCUMBENT_SLACK] = slog(slack)
        constraints[:, ConsFeature.INCUMBENT_TIGHT] = np.abs(slack) < _TIGHT_TOL
        return Observation(variables, constraints, self.edge_index, self.edge_features)
