"""Capacitated facility location (Cornuéjols, Sridharan & Thizy 1991).

Generated as by Gasse et al. (2019)::

    min  sum_j f_j y_j + sum_ij c_ij x_ij
    s.t. sum_j x_ij >= 1                  every customer i is served      (demand_i)
         sum_i d_i x_ij <= s_j y_j        open facilities' capacity       (capacity_j)
         sum_j s_j y_j >= sum_i d_i       enough capacity opened          (total_capacity)
         x_ij <= y_j                      serve only from open ones       (link_i_j)
         y binary, x in [0, 1] (continuous assignment) or binary,

with ``x_ij`` the share of customer ``i``'s demand served by facility ``j``. The last two
families are implied by the first two but tighten the relaxation (Gasse et al. 2019).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from instances.generators.validation import check_count, check_range
from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import Problem


@dataclass(frozen=True)
class CFLParams:
    """Parameters of the facility location generator.

    Attributes
    ----------
    n_customers : int
    n_facilities : int
    ratio : float
        Total capacity over total demand (capacities are rescaled to it, then rounded down), > 0.
    continuous_assignment : bool
        ``x`` continuous in [0, 1] (split demand, Gasse et al.'s default) or binary (single
        sourcing).
    """

    n_customers: int = 100
    n_facilities: int = 100
    ratio: float = 5.0
    continuous_assignment: bool = True

    def __post_init__(self):
        check_count("cfl", "n_customers", self.n_customers)
        check_count("cfl", "n_facilities", self.n_facilities)
        check_range("cfl", "ratio", self.ratio, 0.0, float("inf"), low_open=True, high_open=True)
        if not isinstance(self.continuous_assignment, bool):
            raise InvalidArgumentError(
                "cfl: continuous_assignment must be true or false, "
                f"got {self.continuous_assignment!r}"
            )


PRESETS = {
    # Neither CL-LNS nor LB-RELAX uses this class: Gasse et al.'s training size (100 x 100, ratio 5)
    # is our small set and their largest transfer size (400 customers) our large one.
    "small": CFLParams(n_customers=100, n_facilities=100, ratio=5.0),
    "large": CFLParams(n_customers=400, n_facilities=100, ratio=5.0),
}


def generate(params: CFLParams, rng: np.random.Generator, name: str = "cfl") -> Problem:
    """One facility location instance, data as in Cornuéjols et al. (1991) and Gasse et al. (2019).

    Customers and facilities are uniform points of the unit square; demands ``d_i`` are uniform
    integers in [5, 35]; raw capacities ``s_j`` uniform integers in [10, 160]; fixed costs
    ``f_j = floor(U{100..110} sqrt(s_j) + U{0..90})``; the cost of serving all of ``i`` from ``j``
    is ``c_ij = 10 |p_i - q_j| d_i``. Capacities are then scaled so that their total is ``ratio``
    times the total demand and rounded down. Variables: ``y_j`` (open), then ``x_i_j`` by customer.

    Parameters
    ----------
    params : CFLParams
    rng : numpy.random.Generator
        The only source of randomness.
    name : str
        Name of the problem.
    """
    nc, nf = params.n_customers, params.n_facilities
    demand, capacity, fixed, transport = _draw_data(params, rng)
    n_x = nc * nf
    n = nf + n_x
    matrix = _constraint_matrix(demand, capacity)
    inf = np.inf
    row_lower = np.concatenate([np.ones(nc), np.full(nf, -inf), [demand.sum()], np.full(n_x, -inf)])
    row_upper = np.concatenate([np.full(nc, inf), np.zeros(nf), [inf], np.zeros(n_x)])
    var_names = tuple(f"y{j}" for j in range(nf)) + tuple(
        f"x{i}_{j}" for i in range(nc) for j in range(nf)
    )
    row_names = (
        tuple(f"demand{i}" for i in range(nc))
        + tuple(f"capacity{j}" for j in range(nf))
        + ("total_capacity",)
        + tuple(f"link{i}_{j}" for i in range(nc) for j in range(nf))
    )
    x_type = "C" if params.continuous_assignment else "B"
    return Problem(
        name=name,
        var_names=var_names,
        var_types=np.array(["B"] * nf + [x_type] * n_x),
        lower=np.zeros(n),
        upper=np.ones(n),
        objective=np.concatenate([fixed, transport.ravel()]),
        objective_offset=0.0,
        sense="minimize",
        matrix=matrix,
        row_lower=row_lower,
        row_upper=row_upper,
        row_names=row_names,
    )


def _draw_data(params: CFLParams, rng: np.random.Generator):
    """Demands, scaled capacities, fixed costs, transport costs ``c_ij`` (see :func:`generate`)."""
    nc, nf = params.n_customers, params.n_facilities
    customers, facilities = rng.random((nc, 2)), rng.random((nf, 2))
    demand = rng.integers(5, 35, endpoint=True, size=nc).astype(float)
    raw_capacity = rng.integers(10, 160, endpoint=True, size=nf).astype(float)
    fixed = np.floor(
        rng.integers(100, 110, endpoint=True, size=nf) * np.sqrt(raw_capacity)
        + rng.integers(0, 90, endpoint=True, size=nf)
    )
    distance = np.linalg.norm(customers[:, None, :] - facilities[None, :, :], axis=2)
    transport = 10.0 * distance * demand[:, None]
    capacity = np.floor(raw_capacity * params.ratio * demand.sum() / raw_capacity.sum())
    return demand, capacity, fixed, transport


def _constraint_matrix(demand: np.ndarray, capacity: np.ndarray) -> sp.csr_matrix:
    """Rows demand, capacity, total capacity, link (in that order) over ``y`` then ``x``."""
    nc, nf = len(demand), len(capacity)
    n_x = nc * nf
    x = nf + np.arange(n_x).reshape(nc, nf)  # column of x_ij
    y = np.arange(nf)
    blocks = [  # (row offsets, columns, values) of each family, rows numbered within the family
        (np.repeat(np.arange(nc), nf), x.ravel(), np.ones(n_x)),  # demand
        (
            np.concatenate([np.tile(np.arange(nf), nc), y]),
            np.concatenate([x.ravel(), y]),
            np.concatenate([np.repeat(demand, nf), -capacity]),
        ),  # capacity
        (np.zeros(nf, dtype=np.int64), y, capacity),  # total
        (
            np.repeat(np.arange(n_x), 2),
            np.stack([x.ravel(), np.tile(y, nc)], axis=1).ravel(),
            np.tile([1.0, -1.0], n_x),
        ),  # link
    ]
    sizes = [nc, nf, 1, n_x]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    rows = np.concatenate([r + offsets[k] for k, (r, _, _) in enumerate(blocks)])
    cols = np.concatenate([c for _, c, _ in blocks])
    vals = np.concatenate([v for _, _, v in blocks])
    matrix = sp.csr_matrix((vals, (rows, cols)), shape=(int(offsets[-1]), nf + n_x))
    matrix.sort_indices()
    return matrix
