"""Where an LNS run's iterations go: selection and sub-solve seconds, sizes and improvements.

One run per selector on each instance, one after the other (``solve(..., seed=0)``), then a row
per run from its :class:`lns.core.search.result.IterationRecord` list: iterations, seconds spent
selecting and in sub-solves (total and median), the median number of variables freed, how many
sub-solves hit their time limit and how many iterations improved.

Example (the set-cover and auction figures of docs/cl_lns.md, "Generalisation")::

    python benchmarks/iteration_split.py data/sc_gen/sc_2500_gen_0000.mps.gz \\
        data/ca_gen/ca_2000_gen_0000.mps.gz --selectors random cl_lns --time-limit 30
"""

from __future__ import annotations

import argparse

import numpy as np

from lns.api import solve


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--selectors", nargs="+", default=["random", "cl_lns"])
    parser.add_argument("--time-limit", type=float, default=30.0)
    args = parser.parse_args(argv)
    print(
        "| instance | selector | iterations | select s (total / median) "
        "| sub-solve s (total / median) | freed (median) | time-outs | improved |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for instance in args.instances:
        for selector in args.selectors:
            records = solve(instance, selector=selector, time_limit=args.time_limit).iterations
            select = np.array([r.select_time for r in records])
            sub_solve = np.array([r.solve_time for r in records])
            freed = np.median([r.neighborhood_size for r in records]) if records else 0
            print(
                f"| {instance} | {selector} | {len(records)} "
                f"| {select.sum():.1f} / {np.median(select) if records else 0:.3f} "
                f"| {sub_solve.sum():.1f} / {np.median(sub_solve) if records else 0:.3f} "
                f"| {freed:.0f} | {sum(r.status == 'timelimit' for r in records)} "
                f"| {sum(r.improved for r in records)} |"
            )


if __name__ == "__main__":
    main()
