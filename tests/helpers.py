"""Small problems with known optima, built in code, and paths of bundled instances."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from instances.bundled import BUNDLED_DIR, MIPLIB2017_DIR
from lns.core.problem import Problem


def miplib(name: str):
    """Path of a bundled MIPLIB instance by stem (``"p0201"``)."""
    matches = sorted(p for p in BUNDLED_DIR.glob(f"{name}.*") if p.suffix != ".solu")
    assert matches, f"no bundled instance {name}"
    return matches[0]


def miplib2017(name: str):
    """Path of a bundled MIPLIB 2017 instance by stem (``"lotsize"``)."""
    path = MIPLIB2017_DIR / f"{name}.mps.gz"
    assert path.exists(), f"no bundled MIPLIB 2017 instance {name}"
    return path


def knapsack(sense: str = "maximize") -> Problem:
    """0/1 knapsack: values 10, 13, 7, 8, weights 4, 6, 3, 5, capacity 10.

    The optimum takes a and b (weight 10, value 23); minimising the negated values, it is -23.
    """
    values = np.array([10.0, 13.0, 7.0, 8.0])
    objective = values if sense == "maximize" else -values
    return Problem(
        name=f"knapsack_{sense}",
        var_names=("a", "b", "c", "d"),
        var_types=np.array(["B"] * 4),
        lower=np.zeros(4),
        upper=np.ones(4),
        objective=objective,
        objective_offset=0.0,
        sense=sense,
        matrix=sp.csr_matrix(np.array([[4.0, 6.0, 3.0, 5.0]])),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([10.0]),
        row_names=("capacity",),
    )


def mixed_problem() -> Problem:
    """Binaries, general integers and a continuous variable together; optimum -14.25.

    min -3 y1 - 2 y2 - z1 - 2 z2 - 0.5 w
    s.t. y1 + y2 + w <= 2.5,  2 z1 + w <= 7,  z1 - 3 y1 <= 1,  z1 + z2 >= 0,
    y binary, z1 in {0..4}, z2 in {-2..3}, w in [0, 10]. Optimum y = (1, 1), z = (3, 3), w = 0.5.
    """
    names = ("y1", "y2", "z1", "z2", "w")
    A = np.array([[1, 1, 0, 0, 1], [0, 0, 2, 0, 1], [-3, 0, 1, 0, 0], [0, 0, 1, 1, 0]], dtype=float)
    return Problem(
        name="mixed",
        var_names=names,
        var_types=np.array(["B", "B", "I", "I", "C"]),
        lower=np.array([0, 0, 0, -2, 0], dtype=float),
        upper=np.array([1, 1, 4, 3, 10], dtype=float),
        objective=np.array([-3, -2, -1, -2, -0.5]),
        objective_offset=0.0,
        sense="minimize",
        matrix=sp.csr_matrix(A),
        row_lower=np.array([-np.inf, -np.inf, -np.inf, 0.0]),
        row_upper=np.array([2.5, 7.0, 1.0, np.inf]),
        row_names=("r1", "r2", "r3", "r4"),
    )
