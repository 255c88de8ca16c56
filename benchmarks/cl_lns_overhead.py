r"""What CL-LNS adds to an LNS iteration: feature update and inference, against the sub-solve.

For each instance: the static features (root LP included, once per problem), then
``--repeats`` times the per-iteration work of the selector after an improvement (dynamic feature
update, graph tensors, network inference, top-k), the same after an iteration without improvement
(the scores are reused), and one sub-solve of a CL-LNS neighborhood of 20% of the integer variables
at the loop's default limit (5 s). Medians are printed.

Example (as reported)::

    python benchmarks/cl_lns_overhead.py data/mis_test/mis_1500_test_0000.mps.gz \
        data/mvc_test/mvc_500_test_0000.mps.gz
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from learning.features import FeatureExtractor
from learning.selector import CLLNS
from lns.core.problem.mip import read_problem
from lns.core.search.selection import SearchState
from lns.core.solvers.scip.subsolver import ScipSubSolver


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--checkpoint", default="mis")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--subsolve-limit", type=float, default=5.0)
    args = parser.parse_args(argv)
    print(
        "| instance | vars | cons nodes | edges | static features (s) | observe (ms) "
        "| selector call (ms) "
        "| call, scores reused (ms) | sub-solve (s) |\n|---|---|---|---|---|---|---|---|---|"
    )
    for path in args.instances:
        problem = read_problem(path)
        solver = ScipSubSolver(problem)
        start = solver.solve(time_limit=10, seed=0, solution_limit=1).found[-1].x
        began = time.perf_counter()
        extractor = FeatureExtractor(problem)
        static = time.perf_counter() - began
        observe = []
        for _ in range(args.repeats):
            began = time.perf_counter()
            extractor.observe(start, [start, start])
            observe.append(time.perf_counter() - began)
        selector = CLLNS(args.checkpoint)
        selector.setup(problem)
        # Two states with other histories, alternated, so that every call scores anew.
        states = [
            SearchState(problem, start, problem.objective_value(start), history)
            for history in ([start], [start, start])
        ]
        size = int(0.2 * len(problem.integer_indices))
        calls, reused = [], []
        for i in range(args.repeats):
            began = time.perf_counter()
            neighborhood = selector(states[i % 2], size, np.random.default_rng(0))
            calls.append(time.perf_counter() - began)
            began = time.perf_counter()
            selector(states[i % 2], size, np.random.default_rng(0))
            reused.append(time.perf_counter() - began)
        fixed_mask = problem.integer_mask.copy()
        fixed_mask[neighborhood.free] = False
        outcome = solver.solve(
            time_limit=args.subsolve_limit, seed=0, fixed=np.flatnonzero(fixed_mask), start=start
        )
        print(
            f"| {problem.name} | {problem.n_vars} | {extractor.matrix.shape[0]} "
            f"| {extractor.matrix.nnz} "
            f"| {static:.3f} | {1e3 * np.median(observe):.2f} | {1e3 * np.median(calls):.1f} "
            f"| {1e3 * np.median(reused):.2f} "
            f"| {outcome.solve_time:.2f} ({outcome.status}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
