"""The learned prior of the ``auto`` portfolio: which kinds of search a problem favours.

A :class:`KindPrior` holds, for each instance of a training set, its root features
(:func:`root_features`: size, variable types, row structure, coefficients; numpy only, a
fraction of a second even at a million nonzeros) and each kind's *score* there: the lowest
primal integral of the kinds over that kind's own, both shifted by :data:`SHIFT` seconds (1 for
the best kind, near 0 for one that was far behind), as measured by each kind alone on one core
(``configs/experiment/kinds_tuning.yaml``). The weight of a kind on a new problem is its mean
score over the :attr:`KindPrior.neighbours` training instances nearest in the standardised
features: a nearest-neighbour model, so that a prior is explained by the instances it
recalls (logged at the run's start) and is refitted from new records in a second
(``lns-prior``, :mod:`lns.kinds_prior`).

The allocation (:mod:`lns.core.parallel.allocation`) takes the weights as the order in which
the kinds first hold a slot, and defers the trial of a kind whose weight is below
:data:`lns.core.parallel.allocation.DEFER_BELOW` to the rule's exploration turns.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lns.core.errors import InvalidArgumentError
from lns.core.problem.mip import BINARY, CONTINUOUS, INTEGER, Problem

log = logging.getLogger("lns")

#: The root features, in the order of :func:`root_features`.
FEATURES = (
    "log_variables",
    "log_rows",
    "binary_share",
    "general_integer_share",
    "continuous_share",
    "log_density",
    "equality_share",
    "set_row_share",
    "unit_coefficient_share",
    "log_coefficient_range",
    "objective_share",
)
#: Seconds added to both primal integrals of a score (as the shifted geometric mean does), so
#: that two kinds within a second of each other on an easy instance score about the same.
SHIFT = 1.0
#: :attr:`PortfolioParams.prior <lns.core.parallel.params.PortfolioParams.prior>`: the prior
#: shipped in the package (:data:`SHIPPED_PATH`).
SHIPPED = "shipped"
SHIPPED_PATH = Path(__file__).with_name("kinds_prior.json")


def root_features(problem: Problem) -> np.ndarray:
    """The :data:`FEATURES` of ``problem``, from its matrix, bounds and objective alone.

    ``set_row_share`` counts the rows whose coefficients are all 1 on binary variables
    (set partitioning, packing and covering rows), ``unit_coefficient_share`` the nonzeros of
    absolute value 1, ``objective_share`` the variables with a nonzero objective coefficient.
    """
    n, m = problem.n_vars, problem.n_rows
    types = problem.var_types
    matrix = problem.matrix.tocsr()
    values = np.abs(matrix.data)
    binary = types == BINARY
    set_rows = 0
    if matrix.nnz:
        sizes = np.diff(matrix.indptr)
        ones = (matrix.data == 1.0) & binary[matrix.indices]
        per_row = np.bincount(np.repeat(np.arange(m), sizes), weights=ones, minlength=m)
        set_rows = int(((per_row == sizes) & (sizes > 0)).sum())
    nonzero = values[values > 0]
    spread = np.log10(nonzero.max() / nonzero.min()) if nonzero.size else 0.0
    return np.array(
        [
            np.log10(max(n, 1)),
            np.log10(max(m, 1)),
            binary.mean() if n else 0.0,
            (types == INTEGER).mean() if n else 0.0,
            (types == CONTINUOUS).mean() if n else 0.0,
            np.log10(max(matrix.nnz, 1) / max(n * m, 1)),
            (problem.row_lower == problem.row_upper).mean() if m else 0.0,
            set_rows / m if m else 0.0,
            (values == 1.0).mean() if values.size else 0.0,
            spread,
            (problem.objective != 0).mean() if n else 0.0,
        ]
    )


@dataclass(frozen=True)
class KindPrior:
    """A nearest-neighbour model of which kinds of search do well on a problem.

    Attributes
    ----------
    kinds : tuple of str
        Worker kinds (:data:`lns.core.parallel.kinds.KINDS`), one column of ``scores`` each.
    instances : tuple of str
        The training instances, one row of ``points`` and ``scores`` each.
    points : numpy.ndarray, shape (instances, features)
        Their :func:`root_features`.
    scores : numpy.ndarray, shape (instances, kinds)
        Each kind's score on each instance, in (0, 1] (1: the lowest primal integral).
    neighbours : int
        Training instances a weight is the mean of.
    """

    kinds: tuple
    instances: tuple
    points: np.ndarray
    scores: np.ndarray
    neighbours: int = 5

    def __post_init__(self) -> None:
        if self.points.shape != (len(self.instances), len(FEATURES)):
            raise InvalidArgumentError(
                f"KindPrior: points of shape {self.points.shape}, expected "
                f"({len(self.instances)}, {len(FEATURES)}) (instances x features)"
            )
        if self.scores.shape != (len(self.instances), len(self.kinds)):
            raise InvalidArgumentError(
                f"KindPrior: scores of shape {self.scores.shape}, expected "
                f"({len(self.instances)}, {len(self.kinds)}) (instances x kinds)"
            )
        if not 1 <= self.neighbours <= len(self.instances):
            raise InvalidArgumentError(
                f"KindPrior: neighbours={self.neighbours}, expected 1 to {len(self.instances)}"
            )

    def nearest(self, features: np.ndarray, exclude: int | None = None) -> np.ndarray:
        """Indices of the :attr:`neighbours` training instances nearest to ``features`` (in
        features standardised over the training set), the nearest first; ``exclude``: one
        training instance left out (a leave-one-out estimate)."""
        scale = self.points.std(axis=0)
        scale[scale == 0] = 1.0
        distance = np.linalg.norm((self.points - features) / scale, axis=1)
        if exclude is not None:
            distance[exclude] = np.inf
        return np.argsort(distance, kind="stable")[: self.neighbours]

    def weights(self, features: np.ndarray, exclude: int | None = None) -> dict:
        """Each kind's mean score over the instances :meth:`nearest` to ``features``."""
        chosen = self.nearest(features, exclude)
        mean = self.scores[chosen].mean(axis=0)
        return {kind: float(w) for kind, w in zip(self.kinds, mean, strict=True)}

    def for_problem(self, problem: Problem) -> dict:
        """:meth:`weights` of ``problem``, logged with the instances they come from."""
        features = root_features(problem)
        weights = self.weights(features)
        recalled = ", ".join(self.instances[i] for i in self.nearest(features))
        shown = ", ".join(f"{kind} {w:.2f}" for kind, w in weights.items())
        log.info("%s: prior of the kinds %s (like %s)", problem.name, shown, recalled)
        return weights

    def to_dict(self) -> dict:
        """A JSON-ready form (:meth:`from_dict` reads it back)."""
        return {
            "features": list(FEATURES),
            "kinds": list(self.kinds),
            "neighbours": self.neighbours,
            "instances": list(self.instances),
            "points": self.points.tolist(),
            "scores": self.scores.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict, origin: str = "prior") -> KindPrior:
        """The prior of :meth:`to_dict`'s form; one with other features is refused by name."""
        if list(data.get("features", [])) != list(FEATURES):
            raise InvalidArgumentError(
                f"{origin}: features {data.get('features')} differ from this version's "
                f"{list(FEATURES)}: refit it (lns-prior)"
            )
        return cls(
            kinds=tuple(data["kinds"]),
            instances=tuple(data["instances"]),
            points=np.asarray(data["points"], dtype=float).reshape(-1, len(FEATURES)),
            scores=np.asarray(data["scores"], dtype=float).reshape(-1, len(data["kinds"])),
            neighbours=int(data["neighbours"]),
        )

    def save(self, path: str | Path) -> Path:
        """Write the prior as JSON to ``path``."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        return path


def load_prior(prior: str | Path) -> KindPrior:
    """The prior named by :attr:`PortfolioParams.prior
    <lns.core.parallel.params.PortfolioParams.prior>`: :data:`SHIPPED` or a file of
    :meth:`KindPrior.save`.

    Raises
    ------
    InvalidArgumentError
        The file is missing, not JSON, or of other features.
    """
    path = SHIPPED_PATH if prior == SHIPPED else Path(prior)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise InvalidArgumentError(f"prior {path}: cannot be read ({error})") from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"prior {path}: expected a JSON object")
    try:
        return KindPrior.from_dict(data, origin=f"prior {path}")
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidArgumentError(f"prior {path}: malformed ({error!r})") from None
