"""The form every pure-binary generated class shares: binary variables ``x0, x1, ...``, one
objective, and rows with lower and upper bounds."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lns.core.problem.mip import Problem


def names(prefix: str, count: int) -> tuple:
    """``(prefix0, prefix1, ...)``: variable or constraint names."""
    return tuple(f"{prefix}{i}" for i in range(count))


def binary_problem(
    name: str,
    objective: np.ndarray,
    sense: str,
    matrix: sp.csr_matrix,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    row_names: tuple,
) -> Problem:
    """A :class:`Problem` over ``len(objective)`` binary variables named ``x0, x1, ...``."""
    n = len(objective)
    return Problem(
        name=name,
        var_names=names("x", n),
        var_types=np.full(n, "B"),
        lower=np.zeros(n),
        upper=np.ones(n),
        objective=objective,
        objective_offset=0.0,
        sense=sense,
        matrix=matrix,
        row_lower=row_lower,
        row_upper=row_upper,
        row_names=row_names,
    )
