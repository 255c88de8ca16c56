"""What the watchdog's worker thread costs per sub-solve, against a solve in the calling thread.

Runs ``--solves`` sub-solves of one instance with ``--fixed`` of its integer variables fixed
at a first solution (tiny solves, where a per-solve cost shows most), ``--repeats`` times, in
three ways interleaved solve by solve (so that load on the machine hits all three alike):

- ``inline``: SCIP in the calling thread (what the sub-solver did before the watchdog),
- ``worker``: the sub-solver as it is (one resident worker thread per sub-solver),
- ``thread per solve``: a new thread started for each solve.

Prints the mean and median seconds per solve of each and their ratios to ``inline``.

Example (as reported)::

    python benchmarks/watchdog_overhead.py --instance p0201 --solves 200 --fixed 0.9 --repeats 3
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np

from instances.bundled import BUNDLED_DIR
from lns.core.problem.mip import read_problem
from lns.core.solvers.scip.subsolver import ScipSubSolver


def _inline(work, time_limit, interrupt) -> bool:
    work()
    return True


def _thread_per_solve(work, time_limit, interrupt) -> bool:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join()
    return True


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="p0201", help="a bundled instance (file stem)")
    parser.add_argument("--solves", type=int, default=200)
    parser.add_argument("--fixed", type=float, default=0.9, help="fraction of integers fixed")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    path = next(p for p in sorted(BUNDLED_DIR.glob(f"{args.instance}.*")) if p.suffix != ".solu")
    problem = read_problem(path)
    solvers = {
        "inline": ScipSubSolver(problem),
        "worker": ScipSubSolver(problem),
        "thread per solve": ScipSubSolver(problem),
    }
    # The variants swap the runner of their watchdog.
    solvers["inline"].watchdog.run = _inline  # type: ignore[method-assign]
    solvers["thread per solve"].watchdog.run = _thread_per_solve  # type: ignore[method-assign]
    start = solvers["worker"].solve(time_limit=10, seed=0, solution_limit=1).found[-1].x
    rng = np.random.default_rng(0)
    n_fixed = int(args.fixed * len(problem.integer_indices))
    fixings = [
        np.sort(rng.choice(problem.integer_indices, n_fixed, replace=False))
        for _ in range(args.solves)
    ]
    times: dict = {name: [] for name in solvers}
    for repeat in range(args.repeats):
        for i, fixed in enumerate(fixings):
            order = list(solvers) if (i + repeat) % 2 else list(solvers)[::-1]
            for name in order:
                began = time.perf_counter()
                solvers[name].solve(time_limit=10, seed=i, fixed=fixed, start=start)
                times[name].append(time.perf_counter() - began)
    base = np.array(times["inline"])
    print(
        f"{args.instance}, {args.solves} solves x {args.repeats}, {n_fixed} of "
        f"{len(problem.integer_indices)} integer variables fixed"
    )
    print("| way | mean (ms) | median (ms) | mean / inline | median / inline |")
    print("|---|---|---|---|---|")
    for name, values in times.items():
        values = np.array(values)
        print(
            f"| {name} | {values.mean() * 1e3:.3f} | {np.median(values) * 1e3:.3f} | "
            f"{values.mean() / base.mean():.3f} | {np.median(values) / np.median(base):.3f} |"
        )


if __name__ == "__main__":
    main()
