"""The problem's arrays from a SCIP model: this tree's ``problem_from_scip`` against an earlier one.

Each instance is read once by SCIP; both versions then extract the arrays from that same model,
alternately, ``--repeats`` times; medians of wall-clock seconds and their ratio are printed, and
the two matrices are compared (they differ only where the earlier version dropped a coefficient of
a variable written twice in one row).

Example (the figures in the closing note of this change)::

    git show 4b22775:lns/core/problem.py > /tmp/problem_before.py
    python benchmarks/problem_arrays.py --before /tmp/problem_before.py \\
        /tmp/mis6000/mis_small_0000.mps.gz data/mvc_gen/mvc_1000_gen_0000.mps.gz roll3000
"""

from __future__ import annotations

import argparse
import statistics
import time

from lp_solvers import load_module

from instances.bundled import resolve_instance
from lns.core.problem.mip import problem_from_scip, read_scip_model


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+", help="paths or bundled names")
    parser.add_argument("--before", required=True, help="an earlier lns/core/problem/mip.py")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    before = load_module(args.before, "problem_before").problem_from_scip
    print("| instance | rows | before (s) | after (s) | after / before | same matrix |")
    print("|---|---:|---:|---:|---:|---|")
    for instance in args.instances:
        model = read_scip_model(resolve_instance(instance))
        times: dict = {"before": [], "after": []}
        problems = {}
        for _ in range(args.repeats):
            for label, extract in (("before", before), ("after", problem_from_scip)):
                began = time.perf_counter()
                problems[label] = extract(model, "instance")
                times[label].append(time.perf_counter() - began)
        old, new = (statistics.median(times[label]) for label in ("before", "after"))
        same = (problems["before"].matrix != problems["after"].matrix).nnz == 0
        print(
            f"| {instance} | {problems['after'].matrix.shape[0]} | {old:.3f} | "
            f"{new:.3f} | {new / old:.2f} | {same} |"
        )


if __name__ == "__main__":
    main()
