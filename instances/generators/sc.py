"""Set cover (Balas & Ho 1980), as in Gasse et al. (2019) and Ecole's ``SetCoverGenerator``.

    min  sum_j c_j x_j   s.t.  sum_{j covers i} x_j >= 1 for every row i,   x binary.

The matrix has ``floor(rows * cols * density)`` nonzeros; every column covers at least two rows
and every row is covered by at least one column, so every instance is feasible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from instances.generators.binary import binary_problem, names
from instances.generators.sampling import distinct_subsets
from instances.generators.validation import check_count, check_range
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Problem


@dataclass(frozen=True)
class SCParams:
    """Parameters of the set cover generator.

    Attributes
    ----------
    n_rows : int
        Elements to cover (= constraints), at least 2.
    n_cols : int
        Sets (= variables).
    density : float in (0, 1]
        Share of nonzero matrix entries; at least ``max(2 n_cols, n_rows)`` nonzeros are needed.
    max_cost : int
        Costs are uniform integers in ``[1, max_cost]``.
    """

    n_rows: int = 5000
    n_cols: int = 4000
    density: float = 0.05
    max_cost: int = 100

    def __post_init__(self):
        check_count("sc", "n_rows", self.n_rows, 2)
        check_count("sc", "n_cols", self.n_cols)
        check_range("sc", "density", self.density, 0.0, 1.0, low_open=True)
        check_count("sc", "max_cost", self.max_cost)
        needed = max(2 * self.n_cols, self.n_rows)
        if self.n_nonzeros < needed:
            raise InvalidArgumentError(
                f"sc: density {self.density} gives {self.n_nonzeros} nonzeros; every column needs "
                "two "
                f"rows and every row a column, so at least {needed} (density >= "
                f"{needed / (self.n_rows * self.n_cols):.4g})"
            )

    @property
    def n_nonzeros(self) -> int:
        return int(self.n_rows * self.n_cols * self.density)


PRESETS = {
    # CL-LNS / LB-RELAX: 5000 constraints x 4000 variables. Density 0.05 and costs 1..100 are Gasse
    # et al.'s values (the papers' density is not stated in our notes: our choice). Large: both
    # dimensions doubled (our choice, like the other classes' large sets).
    "small": SCParams(n_rows=5000, n_cols=4000, density=0.05, max_cost=100),
    "large": SCParams(n_rows=10000, n_cols=8000, density=0.05, max_cost=100),
}


def generate(params: SCParams, rng: np.random.Generator, name: str = "sc") -> Problem:
    """One set cover instance.

    Column sizes: each column gets two rows plus its share of the remaining nonzeros, placed
    uniformly among ``n_cols * (n_rows - 2)`` slots (so no column exceeds ``n_rows``). Rows:
    the columns, laid end to end, start with a random permutation of all rows (so each row is
    covered); the rest of each column is a uniform set of other rows.

    Parameters
    ----------
    params : SCParams
    rng : numpy.random.Generator
        The only source of randomness.
    name : str
        Name of the problem.
    """
    m, n = params.n_rows, params.n_cols
    _, slots = distinct_subsets(np.array([params.n_nonzeros - 2 * n]), n * (m - 2), rng)
    col_size = 2 + np.bincount(slots % n, minlength=n)
    indptr = np.concatenate([[0], np.cumsum(col_size)])
    rows = np.empty(indptr[-1], dtype=np.int64)
    rows[:m] = rng.permutation(m)
    straddling = int(np.searchsorted(indptr, m, side="right")) - 1
    if straddling < n and indptr[straddling] < m:
        start, end = indptr[straddling], indptr[straddling + 1]
        free = np.setdiff1d(np.arange(m), rows[start:m])
        rows[m:end] = rng.choice(free, size=end - m, replace=False)
        straddling += 1
    groups, values = distinct_subsets(col_size[straddling:], m, rng)
    rows[indptr[straddling] :] = values
    costs = rng.integers(1, params.max_cost, endpoint=True, size=n).astype(float)
    matrix = sp.csc_matrix((np.ones(rows.size), rows, indptr), shape=(m, n)).tocsr()
    matrix.sort_indices()
    return binary_problem(
        name, costs, "minimize", matrix, np.ones(m), np.full(m, np.inf), names("r", m)
    )
