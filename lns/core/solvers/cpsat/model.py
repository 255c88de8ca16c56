"""A pure-integer :class:`Problem` as an OR-Tools CP-SAT model.

CP-SAT solves integer programs over bounded integer variables with integer
coefficients. :func:`build_cpsat_model` translates a pure-integer :class:`Problem`
into such a model: every variable must be integer with finite bounds, and every row
must become integral when multiplied by a power of ten up to ``10**max_scale_exponent``
(so rows with coefficients like 0.25 or 1.5 are accepted, 1/3 is not). Since the
activity of a scaled row is then an integer, its bounds are rounded inward without
changing the feasible set. Anything else raises :class:`UnsupportedProblemError` with
the reason, which the benchmark records as a skipped run.

References
----------
L. Perron, F. Didier. CP-SAT, OR-Tools (https://developers.google.com/optimization).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lns.core.errors import UnsupportedProblemError
from lns.core.problem.mip import Problem

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

#: CP-SAT works on int64; keep every bound and scaled coefficient well inside it.
MAX_ABS_VALUE = 2.0**53
INTEGRALITY_TOL = 1e-9
BOUND_TOL = 1e-6


@dataclass
class CpsatModel:
    """A CP-SAT model of a :class:`Problem` and what maps its solutions back.

    Attributes
    ----------
    model : ortools.sat.python.cp_model.CpModel
    variables : list of IntVar
        One per problem variable, in the problem's order.
    objective_scale : float
        The CP-SAT objective is ``objective_scale * (c x)``; 1.0 when it keeps float coefficients.
    """

    model: cp_model.CpModel
    variables: list
    objective_scale: float


def _integral(scaled: np.ndarray) -> np.ndarray:
    """Which of ``scaled`` are integral, within :data:`INTEGRALITY_TOL` (relative above 1)."""
    return np.abs(scaled - np.round(scaled)) <= INTEGRALITY_TOL * np.maximum(1.0, np.abs(scaled))


def _power_of_ten(values: np.ndarray, max_exponent: int) -> int | None:
    """Smallest ``k <= max_exponent`` with ``values * 10**k`` all integral, or ``None``."""
    for k in range(max_exponent + 1):
        if np.all(_integral(values * 10.0**k)):
            return k
    return None


def _row_exponents(matrix, rows: np.ndarray, max_exponent: int) -> np.ndarray:
    """Per row of ``matrix`` (CSR; ``rows``: the row of each entry), the smallest
    ``k <= max_exponent`` with the row's coefficients times ``10**k`` all integral (0 for an
    empty row), or -1 where none is."""
    n_rows = matrix.shape[0]
    exponents = np.full(n_rows, -1, dtype=np.int64)
    pending = np.ones(n_rows, dtype=bool)
    for k in range(max_exponent + 1):
        failing = np.zeros(n_rows, dtype=bool)
        failing[rows[~_integral(matrix.data * 10.0**k)]] = True
        exponents[pending & ~failing] = k
        pending &= failing
        if not pending.any():
            break
    return exponents


def _add_rows(model, problem: Problem, max_scale_exponent: int) -> None:
    """Each row with a finite bound as a linear constraint of ``model``, scaled to integers
    (written into the model's proto: the expression API takes seconds on millions of
    nonzeros)."""
    from ortools.sat.python import cp_model

    matrix = problem.matrix
    if not matrix.has_canonical_format:
        matrix = matrix.copy()
        matrix.sum_duplicates()
    rows = np.repeat(np.arange(problem.n_rows), np.diff(matrix.indptr))
    exponents = _row_exponents(matrix, rows, max_scale_exponent)
    bounded = np.isfinite(problem.row_lower) | np.isfinite(problem.row_upper)
    unscalable = np.flatnonzero(bounded & (exponents < 0))
    if len(unscalable):
        i = int(unscalable[0])
        where = problem.source or problem.name
        raise UnsupportedProblemError(
            f"{where}: row '{problem.row_names[i]}' has coefficients that are not integral "
            f"after scaling by 10^{max_scale_exponent} "
            f"(e.g. {matrix.data[matrix.indptr[i]]!r})"
        )
    scales = 10.0 ** np.maximum(exponents, 0)
    coefficients = np.rint(matrix.data * scales[rows]).astype(np.int64)
    with np.errstate(invalid="ignore"):  # infinite bounds, replaced below
        lower = np.ceil(problem.row_lower * scales - BOUND_TOL)
        upper = np.floor(problem.row_upper * scales + BOUND_TOL)
    constraints, indptr = model.proto.constraints, matrix.indptr
    for i in np.flatnonzero(bounded).tolist():
        start, end = indptr[i], indptr[i + 1]
        kept = coefficients[start:end] != 0
        linear = constraints.add().linear
        linear.vars.extend(matrix.indices[start:end][kept].tolist())
        linear.coeffs.extend(coefficients[start:end][kept].tolist())
        lo = int(lower[i]) if np.isfinite(lower[i]) else cp_model.INT_MIN
        hi = int(upper[i]) if np.isfinite(upper[i]) else cp_model.INT_MAX
        linear.domain.extend([lo, hi])


def _check_supported(problem: Problem) -> None:
    where = problem.source or problem.name
    continuous = np.flatnonzero(~problem.integer_mask)
    if len(continuous):
        raise UnsupportedProblemError(
            f"{where}: CP-SAT needs a pure-integer problem, this one has "
            f"{len(continuous)} continuous variable(s) (e.g. "
            f"'{problem.var_names[continuous[0]]}')"
        )
    unbounded = ~(np.isfinite(problem.lower) & np.isfinite(problem.upper))
    too_large = (np.abs(problem.lower) > MAX_ABS_VALUE) | (np.abs(problem.upper) > MAX_ABS_VALUE)
    if (unbounded | too_large).any():
        j = int(np.flatnonzero(unbounded | too_large)[0])
        raise UnsupportedProblemError(
            f"{where}: CP-SAT needs finite integer bounds, variable "
            f"'{problem.var_names[j]}' has [{problem.lower[j]}, {problem.upper[j]}]"
        )


def build_cpsat_model(problem: Problem, max_scale_exponent: int = 6) -> CpsatModel:
    """Translate a pure-integer problem into a CP-SAT model (same variable order).

    Parameters
    ----------
    problem : Problem
    max_scale_exponent : int
        Rows (and the objective) may be multiplied by up to ``10**max_scale_exponent`` to
        make their coefficients integral. An objective that stays fractional is passed to
        CP-SAT with float coefficients, which it supports.

    Raises
    ------
    UnsupportedProblemError
        A continuous variable, an infinite bound, a row with non-integral coefficients
        after scaling, or a model CP-SAT's validation rejects (e.g. possible overflow).
    """
    from ortools.sat.python import cp_model

    _check_supported(problem)
    where = problem.source or problem.name
    model = cp_model.CpModel()
    model.name = problem.name
    xs = [
        model.new_int_var(int(np.ceil(lb - BOUND_TOL)), int(np.floor(ub + BOUND_TOL)), name)
        for name, lb, ub in zip(problem.var_names, problem.lower, problem.upper, strict=True)
    ]
    _add_rows(model, problem, max_scale_exponent)
    nonzero = np.flatnonzero(problem.objective)
    k = _power_of_ten(problem.objective[nonzero], max_scale_exponent)
    scale = 10.0**k if k is not None else 1.0
    coefficients = problem.objective[nonzero]
    weights = (
        [int(round(c * scale)) for c in coefficients] if k is not None else coefficients.tolist()
    )
    objective = cp_model.LinearExpr.weighted_sum([xs[j] for j in nonzero], weights)
    if problem.sense == "minimize":
        model.minimize(objective)
    else:
        model.maximize(objective)
    error = model.validate()
    if error:
        raise UnsupportedProblemError(f"{where}: CP-SAT rejects the model ({error.strip()})")
    return CpsatModel(model, xs, scale)
