"""Would what LNS does in its first seconds tell the ``auto`` portfolio's prior which kinds to
favour better than the root features alone? Read from the prior's records, before building it
into the portfolio (``docs/workers/auto.md``, "What the prior knows").

Per probe time ``t``, each training instance gets three features of the LNS run's first ``t``
seconds (the ``random`` record: what a portfolio's LNS worker would have seen by then): the time
of its first solution (``t`` if none), the log of one plus the number of improvements, and the
relative change of the objective from the first solution to the best by ``t``. The prior's
leave-one-out mean order score (:func:`lns.kinds_prior.order_score`, as ``lns-prior`` prints it)
is computed with the root features, with the root and early features together, and with the early
features alone, for each number of neighbours of :data:`lns.kinds_prior.NEIGHBOURS`::

    python benchmarks/kinds_first_seconds.py benchmarks/results/kinds_tuning_30s
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from lns.core.parallel.plan import AUTO_ORDER
from lns.kinds_prior import NEIGHBOURS, fit_prior, kind_records, order_score
from lns.report import load_results

PROBES = (2.0, 5.0, 10.0)


def early_features(trajectory: list, probe: float) -> list:
    """The first ``probe`` seconds of a run's ``(seconds, objective)`` improvements as three
    features (see the module's docstring)."""
    seen = [(t, objective) for t, objective in trajectory if t <= probe]
    if not seen:
        return [probe, 0.0, 0.0]
    first, best = seen[0][1], seen[-1][1]
    return [seen[0][0], float(np.log1p(len(seen))), abs(best - first) / max(abs(first), 1.0)]


def loo_order_score(points: np.ndarray, scores: np.ndarray, neighbours: int) -> float:
    """The mean order score of the kinds ordered by their mean score over each instance's
    ``neighbours`` nearest others (standardised features), as :class:`KindPrior` orders them."""
    scale = points.std(axis=0)
    scale[scale == 0] = 1.0
    result = []
    for i, row in enumerate(scores):
        distance = np.linalg.norm((points - points[i]) / scale, axis=1)
        distance[i] = np.inf
        weights = scores[np.argsort(distance, kind="stable")[:neighbours]].mean(axis=0)
        result.append(order_score(row, list(np.argsort(-weights, kind="stable"))))
    return float(np.mean(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results_dir", type=Path)
    args = parser.parse_args()
    prior = fit_prior(kind_records(load_results([str(args.results_dir)])))
    trajectories: dict[str, list] = {}
    for path in sorted((args.results_dir / "records").glob("*.json")):
        record = json.loads(path.read_text())
        if record["method"] == "random":
            trajectories.setdefault(record["instance"], record["trajectory"])
    kinds = list(prior.kinds)
    fixed = [kinds.index(kind) for kind in ("lns", *AUTO_ORDER) if kind in kinds]
    unordered = np.mean([order_score(row, fixed) for row in prior.scores])
    print(f"{len(prior.instances)} instances; order score without a prior {unordered:.3f}")
    print("features | " + " | ".join(f"k={k}" for k in NEIGHBOURS))
    print(
        "root | "
        + " | ".join(f"{loo_order_score(prior.points, prior.scores, k):.3f}" for k in NEIGHBOURS)
    )
    for probe in PROBES:
        early = np.array([early_features(trajectories[i], probe) for i in prior.instances])
        for label, points in (("root + early", np.hstack([prior.points, early])), ("early", early)):
            row = " | ".join(f"{loo_order_score(points, prior.scores, k):.3f}" for k in NEIGHBOURS)
            print(f"{label} ({probe:g} s) | {row}")


if __name__ == "__main__":
    main()
