"""The variable–constraint bipartite graph of a problem at its current incumbent.

The state representation of CL-LNS (Huang et al., ICML 2023), in the spirit of
Gasse et al. (NeurIPS 2019) and Khalil et al. (AAAI 2016), computed without Ecole:

* every row ``l <= a x <= u`` becomes one or two constraint nodes of the form
  ``a' x <= b'`` (``a x <= u`` and ``-a x <= -l``; an equality gives both), so that
  duals, slacks and tightness have one meaning for every node;
* one edge per non-zero of those rows, from the constraint node to the variable;
* the LP relaxation (HiGHS through :func:`lns.core.solvers.lp.solve_lp`) is solved once per
  problem and gives the LP value, fractionality, reduced cost, dual and slack features.

Static columns are computed once in :class:`FeatureExtractor` (``__init__``); the dynamic
columns (incumbent, last three incumbents, slack at the incumbent) are filled in by
:meth:`FeatureExtractor.observe` each LNS iteration, which costs ``O(n + nnz)``. Beyond these
base columns, :class:`ExtraVarFeature` names variable columns computed only when asked for: the
root LP's basis status, and the LP relaxation of the Local Branching problem around the
incumbent (the LP of LB-RELAX, hot-started from one observation to the next), with its value for
each of the last three incumbents (the paper's third history slot).

Scales: objective coefficients, reduced costs and duals are divided by ``max |c|``; row
data are divided by the row's Euclidean norm; values that can be arbitrarily large
(bounds, LP and incumbent values) pass through ``sign(x) log(1 + |x|)``. The model
additionally standardises each column with statistics of its training set.

The columns are named by :class:`VarFeature` (and :class:`ExtraVarFeature`),
:class:`ConsFeature` and :class:`EdgeFeature`; a checkpoint stores the names (:func:`feature_spec`)
so that a model is fed exactly the columns it was trained on.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.problem.mip import BINARY, CONTINUOUS, INTEGER, Problem
from lns.core.search.neighborhood_size import AdaptiveSize

if TYPE_CHECKING:
    from heuristics.lb_relax import DistanceLP

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


class ExtraVarFeature(IntEnum):
    """Variable columns beyond :class:`VarFeature`, computed only when asked for by name.

    Numbered after :class:`VarFeature` (``VARIABLE_COLUMNS[f] == f.name``). The first three come
    from the root LP's optimal basis (HiGHS); the others from the LP relaxation of the Local
    Branching problem around the incumbent, ``min c x`` over the problem's rows and bounds with
    ``sum_{j integer} |x_j - x*_j| <= k`` (the LP that the ``lb_relax`` selector solves,
    :class:`heuristics.lb_relax.DistanceLP`), whose solution is ``x_lb``.
    """

    LP_BASIS_BASIC = 25  # root LP basis status of the column (Gasse): basic
    LP_BASIS_LOWER = 26  # nonbasic at its lower bound
    LP_BASIS_UPPER = 27  # nonbasic at its upper bound
    LB_LP_VALUE = 28  # slog(x_lb), dynamic from here on
    LB_LP_DELTA = 29  # |x_lb - x*| for integer variables (LB-RELAX's Δ), 0 for continuous ones
    LB_LP_REDUCED_COST = 30  # reduced cost in the LB LP / max|c| (minimisation sense)
    HISTORY_1_LB_VALUE = 31  # slog(x_lb) of the LB LP solved when that incumbent was current
    HISTORY_2_LB_VALUE = 32
    HISTORY_3_LB_VALUE = 33


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
#: The variable columns of the shipped models, and of any extractor not told otherwise.
BASE_VARIABLE_COLUMNS = tuple(f.name for f in VarFeature)
#: Every variable column this code computes, in the order of the ``all`` selection.
VARIABLE_COLUMNS = BASE_VARIABLE_COLUMNS + tuple(f.name for f in ExtraVarFeature)
#: Named selections of variable columns (:func:`resolve_columns`).
COLUMN_SETS = {"base": BASE_VARIABLE_COLUMNS, "all": VARIABLE_COLUMNS}
_BASIS_COLUMNS = (
    ExtraVarFeature.LP_BASIS_BASIC,
    ExtraVarFeature.LP_BASIS_LOWER,
    ExtraVarFeature.LP_BASIS_UPPER,
)
_LB_HISTORY_COLUMNS = tuple(ExtraVarFeature[f"HISTORY_{i + 1}_LB_VALUE"] for i in range(3))
#: Columns that need the Local Branching LP at each observation.
LB_LP_COLUMNS = frozenset(
    f.name
    for f in (
        ExtraVarFeature.LB_LP_VALUE,
        ExtraVarFeature.LB_LP_DELTA,
        ExtraVarFeature.LB_LP_REDUCED_COST,
        *_LB_HISTORY_COLUMNS,
    )
)


def resolve_columns(selection: str | Sequence[str] = "base") -> tuple[str, ...]:
    """The variable column names of a selection, in order.

    Parameters
    ----------
    selection : str or sequence of str
        A name of :data:`COLUMN_SETS` (``"base"``: the 25 columns of :class:`VarFeature`;
        ``"all"``: those and :class:`ExtraVarFeature`), or column names of
        :data:`VARIABLE_COLUMNS` in the order wanted.

    Raises
    ------
    UnknownNameError
        An unknown selection or column name.
    ValueError
        No column, or one named twice.
    """
    if isinstance(selection, str):
        if selection not in COLUMN_SETS:
            raise UnknownNameError("variable column selection", selection, COLUMN_SETS)
        return COLUMN_SETS[selection]
    columns = tuple(str(name) for name in selection)
    for name in columns:
        if name not in VARIABLE_COLUMNS:
            raise UnknownNameError("variable column", name, VARIABLE_COLUMNS)
    if not columns or len(set(columns)) < len(columns):
        raise InvalidArgumentError(
            f"variable columns must be distinct and at least one, got {columns}"
        )
    return columns


def uses_lb_lp(columns: Sequence[str]) -> bool:
    """Whether ``columns`` need the Local Branching LP (its values then depend on its radius)."""
    return not LB_LP_COLUMNS.isdisjoint(columns)


def feature_spec(columns: Sequence[str] = BASE_VARIABLE_COLUMNS) -> dict:
    """Plain description of the columns, stored in checkpoints and compared when loading.

    ``columns``: the variable columns used, in order (the constraint and edge blocks are fixed).
    """
    return {
        "version": FEATURE_VERSION,
        "variable": list(columns),
        "constraint": [f.name for f in ConsFeature],
        "edge": [f.name for f in EdgeFeature],
    }


def _block_difference(block: str, names: list, wanted: list) -> str:
    """The first difference between two lists of column names, in words ('' if equal)."""
    if names == wanted:
        return ""
    where = next(
        (i for i, (a, b) in enumerate(zip(names, wanted, strict=False)) if a != b),
        min(len(names), len(wanted)),
    )
    had = names[where] if where < len(names) else "nothing"
    want = wanted[where] if where < len(wanted) else "nothing"
    return (
        f"{len(names)} {block} columns, this code computes {len(wanted)}; "
        f"column {where} is {had}, expected {want}"
    )


def spec_difference(spec: dict) -> str:
    """How a stored :func:`feature_spec` differs from what this code computes, in words.

    The version and the constraint and edge columns must be this code's; the variable columns
    may be any distinct names of :data:`VARIABLE_COLUMNS`, in any order. ``''`` when it fits.
    """
    if spec.get("version") != FEATURE_VERSION:
        return (
            f"features version {spec.get('version')}, this code computes version {FEATURE_VERSION}"
        )
    names = [str(name) for name in spec.get("variable", [])]
    unknown = [(i, name) for i, name in enumerate(names) if name not in VARIABLE_COLUMNS]
    if unknown:
        where, name = unknown[0]
        return f"variable column {name} (column {where}), which this code does not compute"
    if not names or len(set(names)) < len(names):
        return f"variable columns {names}: they must be distinct and at least one"
    current = feature_spec()
    for block in ("constraint", "edge"):
        difference = _block_difference(block, list(spec.get(block, [])), current[block])
        if difference:
            return difference
    return ""


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
    ``basis``, shape (n, 3), flags each variable as basic, nonbasic at its lower bound or at its
    upper bound in the optimal basis (``None`` when not asked for or HiGHS has no basis).
    """

    x: np.ndarray
    reduced_costs: np.ndarray
    duals: np.ndarray
    ok: bool
    basis: np.ndarray | None = None


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
    basis: bool = False,
) -> RootLP:
    """The LP relaxation (:func:`lns.core.solvers.lp.solve_lp`, HiGHS), minimisation sense, split
    rows;
    ``cancel``, set by another thread, ends the solve (its columns are then zero); ``basis``
    reads the optimal basis too (``RootLP.basis``).

    A row's dual ``d`` (minimisation sense) is ``<= 0`` when its upper side binds and ``>= 0``
    when its lower side does; its ``a x <= u`` node gets ``min(d, 0)`` and its ``-a x <= -l``
    node ``-max(d, 0)``, both ``<= 0`` like the duals of ``<=`` rows of a minimisation.
    """
    # scipy.optimize, imported late: learning.selector starts it in the background
    from lns.core.solvers.lp import BASIS_BASIC, BASIS_LOWER, BASIS_UPPER, solve_lp

    lp = solve_lp(problem, time_limit=time_limit, cancel=cancel, basis=basis)
    n = problem.n_vars
    if not lp.optimal:
        return RootLP(np.zeros(n), np.zeros(n), np.zeros(len(upper_rows) + len(lower_rows)), False)
    sign = 1.0 if problem.sense == "minimize" else -1.0
    duals = sign * lp.row_duals
    split_duals = np.concatenate(
        [np.minimum(duals[upper_rows], 0.0), -np.maximum(duals[lower_rows], 0.0)]
    )
    status = None
    if lp.column_basis is not None:
        status = lp.column_basis[:n, None] == np.array([BASIS_BASIC, BASIS_LOWER, BASIS_UPPER])
    return RootLP(lp.x[:n], sign * lp.reduced_costs[:n], split_duals, True, status)


@dataclass
class GraphEdges:
    """What the features need of a problem before its LP: the split-row matrix and the edges.

    Built by :meth:`of`; the graph cache of :mod:`learning.inference` needs only this, so it
    can be built while the root LP is solved.

    Attributes
    ----------
    matrix : scipy.sparse.csr_matrix, shape (m', n)
    rhs, is_equality, is_lower_side, upper_rows, lower_rows
        As :func:`split_rows` returns them.
    row_norm : numpy.ndarray, shape (m',)
        Euclidean norm of each row of ``matrix`` (1 for an empty row).
    edge_index : numpy.ndarray of int64, shape (2, nnz')
        Row 0: constraint node, row 1: variable.
    edge_features : numpy.ndarray of float32, shape (nnz', len(EdgeFeature))
    coefficients : scipy.sparse.coo_matrix
        ``matrix`` in the edges' order.
    normalized : numpy.ndarray, shape (nnz',)
        Each edge's coefficient over its row's norm.
    """

    matrix: sp.csr_matrix
    rhs: np.ndarray
    is_equality: np.ndarray
    is_lower_side: np.ndarray
    upper_rows: np.ndarray
    lower_rows: np.ndarray
    row_norm: np.ndarray
    edge_index: np.ndarray
    edge_features: np.ndarray
    coefficients: sp.coo_matrix
    normalized: np.ndarray

    @classmethod
    def of(cls, problem: Problem) -> GraphEdges:
        matrix, rhs, is_equality, is_lower_side, upper_rows, lower_rows = split_rows(problem)
        row_norm = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        row_norm = np.where(row_norm > 0, row_norm, 1.0)
        coo = matrix.tocoo()
        normalized = coo.data / row_norm[coo.row]
        edge_features = np.column_stack(
            [slog(coo.data), normalized, slog(coo.data / np.maximum(1e-6, np.abs(rhs[coo.row])))]
        ).astype(np.float32)
        return cls(
            matrix,
            rhs,
            is_equality,
            is_lower_side,
            upper_rows,
            lower_rows,
            row_norm,
            np.vstack([coo.row, coo.col]).astype(np.int64),
            edge_features,
            coo,
            normalized,
        )


def default_radius(problem: Problem) -> int:
    """The Local Branching radius ``k`` of an observation given none: the first neighborhood size
    of the LNS loop with its default settings (20% of the integer variables, at least 1)."""
    return AdaptiveSize(len(problem.integer_indices)).size


class FeatureExtractor:
    """Static features of a problem, computed once, and per-iteration observations.

    Parameters
    ----------
    problem : Problem
    lp_time_limit : float
        Seconds for the root LP, and for each Local Branching LP that :meth:`observe` is given
        no limit for.
    cancel : threading.Event, optional
        Set by another thread, it ends the root LP (:func:`solve_root_lp`).
    variable_columns : str or sequence of str
        The variable columns to compute, in order (:func:`resolve_columns`: ``"base"``, ``"all"``
        or names of :data:`VARIABLE_COLUMNS`). The root LP's basis is read only for the
        ``LP_BASIS_*`` columns, the Local Branching LP solved only for :data:`LB_LP_COLUMNS`.
    edges : GraphEdges, optional
        ``GraphEdges.of(problem)``, when the caller built it already (to build the graph cache
        while the root LP is solved).

    Attributes
    ----------
    variable_columns : tuple of str
        The names of the columns of ``Observation.variable_features``.
    spec : dict
        :func:`feature_spec` of these columns, stored with anything computed from them.
    uses_lb_lp : bool
        Whether :meth:`observe` solves the Local Branching LP (its radius then matters).
    edges : GraphEdges
        The split-row matrix and the edges; ``matrix``, ``rhs``, ``row_norm``, ``edge_index``
        and ``edge_features`` are its fields.
    """

    def __init__(
        self,
        problem: Problem,
        lp_time_limit: float = 60.0,
        cancel: threading.Event | None = None,
        variable_columns: str | Sequence[str] = "base",
        edges: GraphEdges | None = None,
    ):
        self.problem = problem
        self.lp_time_limit = lp_time_limit
        self.variable_columns = resolve_columns(variable_columns)
        self.spec = feature_spec(self.variable_columns)
        self.uses_lb_lp = uses_lb_lp(self.variable_columns)
        self._column_index = np.array([VARIABLE_COLUMNS.index(c) for c in self.variable_columns])
        self.edges = edges = GraphEdges.of(problem) if edges is None else edges
        self.matrix, self.rhs, self.row_norm = edges.matrix, edges.rhs, edges.row_norm
        self.edge_index, self.edge_features = edges.edge_index, edges.edge_features
        basis = not {f.name for f in _BASIS_COLUMNS}.isdisjoint(self.variable_columns)
        self.lp = solve_root_lp(
            problem, edges.upper_rows, edges.lower_rows, lp_time_limit, cancel, basis
        )
        self.objective_scale = max(np.abs(problem.min_objective).max(initial=0.0), 1e-12)
        self.var_static = self._variable_static(edges.coefficients, edges.normalized)
        self.cons_static = self._constraint_static(edges.is_equality, edges.is_lower_side)
        self._lb_lp: DistanceLP | None = None  # built by the first observation that needs it
        self._lb_values: dict[bytes, np.ndarray] = {}  # x_lb of the last incumbents, by bytes

    def _variable_static(self, coo: sp.coo_matrix, normalized: np.ndarray) -> np.ndarray:
        """Every column of :data:`VARIABLE_COLUMNS`, the dynamic ones zero."""
        p, lp, scale = self.problem, self.lp, self.objective_scale
        n = p.n_vars
        features = np.zeros((n, len(VARIABLE_COLUMNS)), dtype=np.float64)
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
        if lp.basis is not None:
            features[:, _BASIS_COLUMNS] = lp.basis
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
        features = np.zeros((m, len(ConsFeature)), dtype=np.float64)
        features[:, ConsFeature.RHS] = self.rhs / self.row_norm
        features[:, ConsFeature.IS_EQUALITY] = is_equality
        features[:, ConsFeature.IS_LOWER_SIDE] = is_lower_side
        features[:, ConsFeature.OBJ_COSINE] = (
            (matrix @ c) / (self.row_norm * c_norm) if c_norm > 0 else 0.0
        )
        degree = np.diff(matrix.indptr)
        features[:, ConsFeature.DEGREE] = degree / max(degree.max(initial=0), 1)
        features[:, ConsFeature.LP_DUAL] = lp.duals * self.row_norm / self.objective_scale
        if lp.ok:
            slack = (self.rhs - matrix @ lp.x) / self.row_norm
            features[:, ConsFeature.LP_SLACK] = slog(slack)
            features[:, ConsFeature.LP_TIGHT] = np.abs(slack) < _TIGHT_TOL
        return features.astype(np.float32)

    def observe(
        self,
        incumbent: np.ndarray,
        history: Sequence[np.ndarray] = (),
        radius: float | None = None,
        time_limit: float | None = None,
    ) -> Observation:
        """The graph at ``incumbent`` with up to :data:`HISTORY_LENGTH` earlier incumbents.

        Only the dynamic columns are computed; the static ones are copied.

        Parameters
        ----------
        incumbent : numpy.ndarray, shape (n,)
        history : sequence of numpy.ndarray
            The earlier incumbents, most recent first.
        radius : float, optional
            ``k`` of the Local Branching LP (:data:`LB_LP_COLUMNS` only): the iteration's
            neighborhood size, which is the radius of the ``lb_relax`` selector and of the
            collection's Local Branching expert. ``None``: :func:`default_radius`.
        time_limit : float, optional
            Seconds for the Local Branching LP (``None``: ``lp_time_limit``); when it is not
            solved, its columns are zero.
        """
        incumbent = np.asarray(incumbent, dtype=np.float64)
        history = [np.asarray(h, dtype=np.float64) for h in list(history)[:HISTORY_LENGTH]]
        variables = self.var_static.copy()
        variables[:, VarFeature.INCUMBENT] = slog(incumbent)
        variables[:, VarFeature.INCUMBENT_LP_DISTANCE] = slog(np.abs(incumbent - self.lp.x))
        for i, earlier in enumerate(history):
            variables[:, VarFeature[f"HISTORY_{i + 1}_PRESENT"]] = 1.0
            variables[:, VarFeature[f"HISTORY_{i + 1}_VALUE"]] = slog(earlier)
        if self.uses_lb_lp:
            self._local_branching_columns(variables, incumbent, history, radius, time_limit)
        constraints = self.cons_static.copy()
        slack = (self.rhs - self.matrix @ incumbent) / self.row_norm
        constraints[:, ConsFeature.INCUMBENT_SLACK] = slog(slack)
        constraints[:, ConsFeature.INCUMBENT_TIGHT] = np.abs(slack) < _TIGHT_TOL
        return Observation(
            np.take(variables, self._column_index, axis=1),
            constraints,
            self.edge_index,
            self.edge_features,
        )

    def _local_branching_columns(
        self,
        variables: np.ndarray,
        incumbent: np.ndarray,
        history: list,
        radius: float | None,
        time_limit: float | None,
    ) -> None:
        """Fill the Local Branching LP's columns of ``variables`` (all of :data:`VARIABLE_COLUMNS`).

        The LP is kept in HiGHS and hot-started from the previous observation's basis
        (:class:`heuristics.lb_relax.DistanceLP`). Its solution at ``incumbent`` is kept while
        ``incumbent`` is one of the last :data:`HISTORY_LENGTH` incumbents: the history
        columns read it there, so no LP is solved for them (an incumbent never observed, such
        as one of the start, or whose LP failed, leaves its slot zero).
        """
        from heuristics.lb_relax import DistanceLP
        from heuristics.local_branching import Distance

        problem = self.problem
        if self._lb_lp is None:
            self._lb_lp = DistanceLP(problem)
        lp = self._lb_lp.solve(
            Distance.to(problem, incumbent),
            default_radius(problem) if radius is None else radius,
            self.lp_time_limit if time_limit is None else time_limit,
        )
        kept = {earlier.tobytes() for earlier in history}
        self._lb_values = {key: x for key, x in self._lb_values.items() if key in kept}
        if lp.optimal:
            x = lp.x[: problem.n_vars]
            self._lb_values[incumbent.tobytes()] = x
            sign = 1.0 if problem.sense == "minimize" else -1.0
            variables[:, ExtraVarFeature.LB_LP_VALUE] = slog(x)
            variables[:, ExtraVarFeature.LB_LP_DELTA] = np.where(
                problem.integer_mask, np.abs(x - incumbent), 0.0
            )
            variables[:, ExtraVarFeature.LB_LP_REDUCED_COST] = (
                sign * lp.reduced_costs[: problem.n_vars] / self.objective_scale
            )
        for column, earlier in zip(_LB_HISTORY_COLUMNS, history, strict=False):
            stored = self._lb_values.get(earlier.tobytes())
            if stored is not None:
                variables[:, column] = slog(stored)
