"""How far apart a CL-LNS model's scores are where it chooses, along one of its own runs.

A model whose scores barely separate the variables it frees from the others chooses little more
than a random or a repeated neighborhood. For each instance this runs the ``cl_lns`` selector
(one worker, an iteration limit, the features awaited: ``until_ready="wait"``) and records at
every call with scores of its own (not a cached repeat): the neighborhood size ``k``, the range
and the standard deviation of the integer variables' scores, the mean score of the top ``k`` of
them less that of the rest in standard deviations (the separation: how far the freed set stands
out; the top-k is a choice of ranks, the range says how sharply the sampling after a failure
concentrates), the Jaccard overlap of the freed set with the previous call's, and whether the
iteration improved. It prints per instance the iterations, the improving ones, the calls with
new scores and the medians over those calls (and writes every call to ``--out`` as JSON)::

    python benchmarks/score_spread.py --checkpoint sc data/sc_large5/sc_large_0000.mps.gz
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from learning.selector import CLLNS
from lns import solve
from lns.core.search.stop import budget


class RecordingCLLNS(CLLNS):
    """The ``cl_lns`` selector, keeping the statistics of each call's scores."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[dict] = []
        self.iterations = self.improvements = 0
        self._previous: set | None = None

    def __call__(self, state, size, rng):
        neighborhood = super().__call__(state, size, rng)
        free = set(np.asarray(neighborhood.free).tolist())
        if neighborhood.info.get("inference_time", 0.0) > 0:
            assert self._cache is not None, "a call that inferred keeps its scores"
            integers = state.problem.integer_indices
            scores = self._cache[2][integers]
            k = min(max(len(free), 1), len(scores))
            ranked = np.sort(scores)[::-1]
            rest = ranked[k:].mean() if k < len(ranked) else ranked[-1]
            self.calls.append(
                {
                    "iteration": state.iteration,
                    "k": k,
                    "range": float(ranked[0] - ranked[-1]),
                    "std": float(scores.std()),
                    "separation": float((ranked[:k].mean() - rest) / max(scores.std(), 1e-12)),
                    "overlap_previous": _jaccard(free, self._previous),
                    "sampled": bool(neighborhood.info.get("sampled", False)),
                }
            )
        self._previous = free
        return neighborhood

    def update(self, record) -> None:
        super().update(record)
        self.iterations += 1
        self.improvements += int(record.improved)
        if self.calls and self.calls[-1]["iteration"] == record.iteration:
            self.calls[-1]["improved"] = bool(record.improved)


def _jaccard(a: set, b: set | None) -> float:
    if not b:
        return float("nan")
    return len(a & b) / len(a | b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--checkpoint", required=True, help="a checkpoint file or a shipped name")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    columns = ("k", "range", "std", "separation", "overlap_previous")
    print(
        "| instance | iterations | improved | new scores | "
        + " | ".join(f"median {c}" for c in columns)
        + " |"
    )
    print("|---|---:|---:|---:|" + "---:|" * len(columns))
    everything = {}
    for path in args.instances:
        selector = RecordingCLLNS(checkpoint=args.checkpoint, until_ready="wait")
        solve(path, selector, budget(args.time_limit, args.iterations), seed=0)
        calls = selector.calls
        everything[path] = calls
        medians = [np.nanmedian([call[c] for call in calls]) for c in columns]
        print(
            f"| {Path(path).name} | {selector.iterations} | {selector.improvements} "
            f"| {len(calls)} | " + " | ".join(f"{value:.3g}" for value in medians) + " |"
        )
    if args.out is not None:
        args.out.write_text(json.dumps(everything, indent=1))


if __name__ == "__main__":
    main()
