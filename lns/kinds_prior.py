"""Fitting the ``auto`` portfolio's prior of the kinds (:mod:`lns.core.parallel.prior`) from
benchmark records: ``lns-prior``.

The records are runs of each kind alone on one core (the methods of :data:`METHOD_KINDS`,
``configs/experiment/kinds_tuning.yaml``); an instance counts when every kind ran on it. A run
that failed or was skipped counts as one that found nothing: its primal integral is the time
limit.
:func:`leave_one_out` says what the prior would have chosen on each training instance had it
not been trained on it.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np

from instances.bundled import resolve_instance
from lns.bench_store import RunRecord
from lns.core.errors import LNSError
from lns.core.parallel.plan import AUTO_ORDER
from lns.core.parallel.prior import SHIFT, KindPrior, root_features
from lns.core.problem.mip import read_problem
from lns.report import group_metrics

log = logging.getLogger("lns")

#: Benchmark method -> the worker kind it measures (each on one core).
METHOD_KINDS = {"random": "lns", "cpsat": "cpsat", "localmip": "local_search", "scip": "scip"}


@dataclass(frozen=True)
class KindRecords:
    """The training table of a prior: per instance, each kind's primal integral.

    Attributes
    ----------
    instances : list of str
    paths : list of str
        Each instance's file, as the records name it.
    kinds : tuple of str
    integrals : numpy.ndarray, shape (instances, kinds)
        Seconds (seed means).
    """

    instances: list
    paths: list
    kinds: tuple
    integrals: np.ndarray

    def scores(self) -> np.ndarray:
        """Each kind's score per instance: ``(best + SHIFT) / (integral + SHIFT)``, in (0, 1]."""
        best = self.integrals.min(axis=1, keepdims=True)
        return (best + SHIFT) / (self.integrals + SHIFT)


def kind_records(records: list[RunRecord], method_kinds: dict | None = None) -> KindRecords:
    """The instances of ``records`` on which every method of ``method_kinds`` (default
    :data:`METHOD_KINDS`) ran, with their primal integrals; an instance in several instance sets
    or time limits is taken from the first.

    Raises
    ------
    LNSError
        No instance on which every method ran.
    """
    method_kinds = METHOD_KINDS if method_kinds is None else method_kinds
    instances: list = []
    paths: list = []
    rows: list = []
    path_of = {(r.instance_set, r.instance): r.instance_path for r in records}
    for group in group_metrics(records, n_times=2):
        if not set(method_kinds) <= set(group.methods):
            continue
        columns = [group.methods.index(method) for method in method_kinds]
        for i, instance in enumerate(group.instances):
            integrals = group.integrals[columns, i]
            if instance not in instances and not np.isnan(integrals).any():
                instances.append(instance)
                paths.append(path_of[(group.instance_set, instance)])
                rows.append(integrals)
    if not rows:
        raise LNSError(f"no instance with runs of every method of {sorted(method_kinds)}")
    kinds = tuple(method_kinds.values())
    return KindRecords(instances, paths, kinds, np.array(rows))


def fit_prior(table: KindRecords, neighbours: int = 5) -> KindPrior:
    """The prior of ``table``: the root features of each instance, read from its file (a path
    that does not exist here, such as a path relative to another folder, is looked up among
    the bundled instances by its name)."""
    files = [resolve_instance(path) for path in table.paths]
    points = np.array([root_features(read_problem(path)) for path in files])
    return KindPrior(table.kinds, tuple(table.instances), points, table.scores(), neighbours)


def order_score(scores: np.ndarray, order: list) -> float:
    """How well ``order`` (kind indices, the first tried first) ranks the kinds of ``scores``:
    their scores weighted by halves (1/2 for the first, 1/4 for the second, ...), normalised to
    1 for an order whose every kind scores 1."""
    weights = 0.5 ** np.arange(len(order))
    return float((scores[order] * weights).sum() / weights.sum())


@dataclass(frozen=True)
class LeaveOneOut:
    """What a prior chooses on its own training instances, each left out in turn.

    Attributes
    ----------
    instances : list of str
    first, best : list of str
        Per instance, the kind of the highest weight and the kind of the lowest primal integral.
    scores, unordered, best_order : numpy.ndarray
        Per instance, the :func:`order_score` of the prior's order, of the order without a
        prior (LNS, then :data:`lns.core.parallel.plan.AUTO_ORDER`) and of the instance's own
        order by its scores (the highest there is).
    """

    instances: list
    first: list
    best: list
    scores: np.ndarray
    unordered: np.ndarray
    best_order: np.ndarray

    def summary(self) -> str:
        """The means and hit rates, in one line."""
        hits = sum(a == b for a, b in zip(self.first, self.best, strict=True))
        return (
            f"leave-one-out on {len(self.instances)} instances: the kind of the highest weight is "
            f"the best kind on {hits}; mean order score {self.scores.mean():.3f} (without a "
            f"prior {self.unordered.mean():.3f}, each instance's best order "
            f"{self.best_order.mean():.3f})"
        )


def leave_one_out(prior: KindPrior) -> LeaveOneOut:
    """Each training instance's weights from the others (:meth:`KindPrior.weights` with the
    instance excluded), against its own scores."""
    kinds = list(prior.kinds)
    fixed = [kinds.index(kind) for kind in ("lns", *AUTO_ORDER) if kind in kinds]
    first, best, scores, unordered, best_order = [], [], [], [], []
    for i, row in enumerate(prior.scores):
        weights = prior.weights(prior.points[i], exclude=i)
        order = sorted(range(len(kinds)), key=lambda k: -weights[kinds[k]])
        first.append(kinds[order[0]])
        best.append(kinds[int(np.argmax(row))])
        scores.append(order_score(row, order))
        unordered.append(order_score(row, fixed))
        best_order.append(order_score(row, list(np.argsort(-row, kind="stable"))))
    return LeaveOneOut(
        list(prior.instances), first, best, *map(np.array, (scores, unordered, best_order))
    )


#: The numbers of neighbours :func:`choose_neighbours` tries.
NEIGHBOURS = (3, 5, 7, 10, 15, 20)


def choose_neighbours(prior: KindPrior) -> KindPrior:
    """``prior`` with the number of neighbours of :data:`NEIGHBOURS` (fewer than its
    instances) whose :func:`leave_one_out` mean order score is the highest (the fewest of
    equals)."""
    tried = [k for k in NEIGHBOURS if k < len(prior.instances)] or [prior.neighbours]
    candidates = [dataclasses.replace(prior, neighbours=k) for k in tried]
    return max(candidates, key=lambda p: (leave_one_out(p).scores.mean(), -p.neighbours))
