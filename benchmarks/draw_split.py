"""What CL-LNS's top-scored neighborhoods gave against its sampled ones, along one run each.

For each instance this runs the ``cl_lns`` selector (one worker, a time limit, the features
awaited: ``until_ready="wait"``, the ``draw`` rule asked for) and sorts its iterations by how the
neighborhood was drawn: the top ``k`` of the scores (``greedy``) or a draw by the scores
(``sample``: after a failure, at the size cap, or at a new incumbent by the ``draw`` rule). It
prints, per instance and draw, the iterations, the improving ones, the time-outs, the seconds of
sub-solving and the objective gained per second of it (``docs/cl_lns.md``, "The draw at a new
incumbent")::

    python benchmarks/draw_split.py --checkpoint mvc --draw greedy \
        data/mvc_large1/mvc_large_0000.mps.gz
"""

from __future__ import annotations

import argparse
from pathlib import Path

from learning.selector import CLLNS, DRAWS
from lns import solve
from lns.core.search.stop import budget
from lns.core.solvers.protocol import SolveStatus

DRAWN = ("greedy", "sample")


class SplitCLLNS(CLLNS):
    """The ``cl_lns`` selector, adding up each iteration's outcome under the draw it used."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.split = {
            d: dict(iterations=0, improving=0, timeouts=0, seconds=0.0, gain=0.0) for d in DRAWN
        }
        self._kind: str | None = None

    def __call__(self, state, size, rng):
        neighborhood = super().__call__(state, size, rng)
        info = neighborhood.info
        self._kind = (
            None
            if info.get("random") or not len(neighborhood.free)
            else ("sample" if info["sampled"] else "greedy")
        )
        return neighborhood

    def update(self, record) -> None:
        super().update(record)
        if self._kind is None:
            return
        row = self.split[self._kind]
        row["iterations"] += 1
        row["improving"] += int(record.improved)
        row["timeouts"] += int(SolveStatus(record.status) is SolveStatus.TIME_LIMIT)
        row["seconds"] += record.solve_time
        if record.improved:
            row["gain"] += abs(record.objective_after - record.objective_before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--checkpoint", required=True, help="a checkpoint file or a shipped name")
    parser.add_argument("--draw", choices=DRAWS, default="greedy")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    print("| instance | draw | iterations | improving | time-outs | sub-solve (s) | gain / s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path in args.instances:
        selector = SplitCLLNS(checkpoint=args.checkpoint, until_ready="wait", draw=args.draw)
        solve(path, selector, budget(args.time_limit), seed=0)
        for drawn, row in selector.split.items():
            rate = row["gain"] / max(row["seconds"], 1e-3)
            print(
                f"| {Path(path).name} | {drawn} | {row['iterations']} | {row['improving']} "
                f"| {row['timeouts']} | {row['seconds']:.1f} | {rate:.3g} |"
            )


if __name__ == "__main__":
    main()
