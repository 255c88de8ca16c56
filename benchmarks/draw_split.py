"""What CL-LNS's top-scored neighborhoods gave against its sampled ones, along one run each.

For each instance this runs the ``cl_lns`` selector (one worker, a time limit, the ``draw`` rule
asked for, the features awaited, ``until_ready="wait"``, unless ``--until-ready random``) and
prints its :class:`learning.draw_record.DrawRecord`: per draw, the top ``k`` of the scores
(``greedy``), a draw by the scores (``sample``: after a failure, at the size cap, or at a new
incumbent by the ``draw`` rule) or, with ``--random-arm``, a uniformly random neighborhood
(``random``), the iterations, the improving ones, the time-outs, the seconds of sub-solving and of
scoring and the objective gained per second of both (``docs/cl_lns.md``, "The draw at a new
incumbent")::

    python benchmarks/draw_split.py --checkpoint mvc --draw greedy \\
        data/mvc_large1/mvc_large_0000.mps.gz
"""

from __future__ import annotations

import argparse
from pathlib import Path

from learning.selector import CLLNS, DRAWS, UNTIL_READY
from lns import solve
from lns.core.search.stop import budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--checkpoint", required=True, help="a checkpoint file or a shipped name")
    parser.add_argument("--draw", choices=DRAWS, default="greedy")
    parser.add_argument("--random-arm", action="store_true")
    parser.add_argument("--until-ready", choices=UNTIL_READY, default="wait")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    print(
        "| instance | draw | iterations | improving | time-outs | sub-solve (s) | scoring (s) "
        "| gain / s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for path in args.instances:
        selector = CLLNS(
            checkpoint=args.checkpoint,
            until_ready=args.until_ready,
            draw=args.draw,
            random_arm=args.random_arm,
        )
        solve(path, selector, budget(args.time_limit), seed=0)
        record = selector.draw_record
        for drawn in record.draws:
            seconds = record.seconds[drawn] + record.scoring[drawn]
            print(
                f"| {Path(path).name} | {drawn} | {record.used[drawn]} | {record.improving[drawn]} "
                f"| {record.timeouts[drawn]} | {record.seconds[drawn]:.1f} "
                f"| {record.scoring[drawn]:.1f} | {record.gain[drawn] / max(seconds, 1e-3):.3g} |"
            )


if __name__ == "__main__":
    main()
