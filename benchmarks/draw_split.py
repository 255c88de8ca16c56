"""What CL-LNS's top-scored neighborhoods gave against its sampled ones, along one run each.

For each instance this runs the ``cl_lns`` selector (one worker, a time limit, the features
awaited: ``until_ready="wait"``, the ``draw`` rule asked for) and prints its
:class:`learning.selector.DrawRecord`: per draw, the top ``k`` of the scores (``greedy``) or a
draw by the scores (``sample``: after a failure, at the size cap, or at a new incumbent by the
``draw`` rule), the iterations, the improving ones, the time-outs, the seconds of sub-solving and
the objective gained per second of it (``docs/cl_lns.md``, "The draw at a new incumbent")::

    python benchmarks/draw_split.py --checkpoint mvc --draw greedy \\
        data/mvc_large1/mvc_large_0000.mps.gz
"""

from __future__ import annotations

import argparse
from pathlib import Path

from learning.selector import CLLNS, DRAWS
from lns import solve
from lns.core.search.stop import budget


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
        selector = CLLNS(checkpoint=args.checkpoint, until_ready="wait", draw=args.draw)
        solve(path, selector, budget(args.time_limit), seed=0)
        record = selector.draw_record
        for drawn in ("greedy", "sample"):
            rate = record.gain[drawn] / max(record.seconds[drawn], 1e-3)
            print(
                f"| {Path(path).name} | {drawn} | {record.used[drawn]} | {record.improving[drawn]} "
                f"| {record.timeouts[drawn]} | {record.seconds[drawn]:.1f} | {rate:.3g} |"
            )


if __name__ == "__main__":
    main()
