"""LNS (random neighborhoods) against plain SCIP, side by side, and the loop's own overhead.

For each instance, both methods run one after the other under the same wall-clock limit
(reading included). Printed per instance: primal gap at the end and primal integral
(Berthold 2013, in seconds, against the ``.solu`` optimum), seconds to the first solution
and to the first LNS improvement, and the overhead fraction of the LNS run, i.e. the share
of wall time spent outside SCIP (reading, selection, fixing bounds, warm starts, feasibility
checks): ``1 - solver_time / runtime``, where ``solver_time`` counts SCIP's ``optimize()``
and its ``freeTransform()`` after each solve.

    python benchmarks/core.py                       # open MIPLIB set, 60 s: about 18 minutes
    python benchmarks/core.py --instances air05 seymour --time-limit 60
"""

from __future__ import annotations

import argparse
import statistics

from instances.bundled import resolve_instance
from lns.api import solve
from lns.core.problem.solu_file import known_objective
from lns.core.search.metrics import primal_gap, primal_integral

OPEN_MIPLIB = [
    "air05",
    "seymour",
    "swath",
    "mas74",
    "rout",
    "timtab1",
    "danoint",
    "pk1",
    "dano3mip",
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=OPEN_MIPLIB)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--selector", default="random")
    args = parser.parse_args(argv)
    T = args.time_limit
    print(
        "| instance | SCIP gap | LNS gap | SCIP integral | LNS integral | ratio | first sol (s) "
        "| first improvement (s) | iterations | overhead |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios, overheads = [], []
    for name in args.instances:
        path = resolve_instance(name)
        optimum = known_objective(path)
        scip = solve(path, method="scip", time_limit=T, seed=args.seed)
        lns = solve(path, args.selector, time_limit=T, seed=args.seed)
        integrals = [primal_integral(r.trajectory, optimum, T) for r in (scip, lns)]
        ratio = integrals[1] / integrals[0] if integrals[0] > 0 else float("nan")
        overhead = 1 - lns.solver_time / lns.runtime
        improvements = [t for t, _ in lns.trajectory[1:]]
        first = f"{lns.trajectory[0][0]:.2f}" if lns.trajectory else "-"
        first_improvement = f"{improvements[0]:.2f}" if improvements else "-"
        ratios.append(ratio)
        overheads.append(overhead)
        print(
            f"| {name} | {primal_gap(scip.objective, optimum):.4f} "
            f"| {primal_gap(lns.objective, optimum):.4f} "
            f"| {integrals[0]:.2f} | {integrals[1]:.2f} | {ratio:.2f} | {first} "
            f"| {first_improvement} "
            f"| {len(lns.iterations)} | {100 * overhead:.1f}% |",
            flush=True,
        )
    print(
        f"\nmedian integral ratio LNS/SCIP: {statistics.median(ratios):.2f}; "
        f"median overhead {100 * statistics.median(overheads):.1f}%, "
        f"max {100 * max(overheads):.1f}%"
    )


if __name__ == "__main__":
    main()
