"""Which LP solver for the LP relaxations: HiGHS (cold, by method; hot-started) against SCIP's LP.

For each instance: the root LP with SCIP (all variables made continuous, presolving and
heuristics off, model building included) and with :func:`lns.core.lp.solve_lp` for every
HiGHS method; then the Local Branching LP (``Σ|x_j - x*_j| <= k``) for a sequence of
incumbents (plain SCIP's incumbents within ``--initial-time`` seconds), solved cold with
:func:`~lns.core.lp.solve_lp` and hot-started with :class:`heuristics.lb_relax.DistanceLP`,
checking that both reach the same objective. Timings are wall-clock seconds, single thread.

Example (about 2 minutes)::

    python benchmarks/lp_solvers.py --instances air05 seymour
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from heuristics.lb_relax import DistanceLP
from heuristics.local_branching import Distance
from instances.bundled import resolve_instance
from lns.core.lp import METHODS, solve_lp
from lns.core.problem import read_problem
from lns.core.scip_subsolver import ScipSubSolver


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["air05", "seymour"])
    parser.add_argument("--fraction", type=float, default=0.2, help="k as a fraction of the integer variables")
    parser.add_argument("--initial-time", type=float, default=20.0, help="seconds of plain SCIP for the incumbents")
    parser.add_argument("--incumbents", type=int, default=4)
    return parser.parse_args(argv)


def scip_lp(problem):
    began = time.perf_counter()
    model = problem.to_scip()
    for var in model.getVars():
        model.chgVarType(var, "C")
    model.setPresolve(3)  # SCIP_PARAMSETTING.OFF
    model.setHeuristics(3)
    model.setIntParam("parallel/maxnthreads", 1)
    model.optimize()
    return model.getObjVal(), time.perf_counter() - began


def main(argv=None):
    args = parse_args(argv)
    root = ["| instance | solver | objective | seconds |", "|---|---|---|---|"]
    local = ["| instance | incumbent | cold (s) | hot (s) | same objective |", "|---|---|---|---|---|"]
    for name in args.instances:
        problem = read_problem(resolve_instance(name))
        objective, seconds = scip_lp(problem)
        root.append(f"| {name} | SCIP | {objective:.4f} | {seconds:.3f} |")
        for method in METHODS:
            solution = solve_lp(problem, method=method)
            root.append(f"| {name} | HiGHS {method} | {solution.objective:.4f} | {solution.solve_time:.3f} |")
        outcome = ScipSubSolver(problem).solve(time_limit=args.initial_time, seed=0)
        xs = [s.x for s in outcome.found][-args.incumbents:]
        k = max(2, int(round(args.fraction * len(problem.integer_indices))))
        hot_lp = DistanceLP(problem)
        for x in xs:
            distance = Distance.to(problem, x)
            columns, rows = distance.lp_rows(k)
            cold = solve_lp(problem, extra_rows=rows, extra_columns=columns)
            hot = hot_lp.solve(distance, k, None)
            same = bool(np.isclose(cold.objective, hot.objective, rtol=1e-7, atol=1e-6))
            local.append(f"| {name} | {problem.objective_value(x):g} | {cold.solve_time:.3f} | {hot.solve_time:.3f} "
                         f"| {same} |")
    print("\n".join(root))
    print()
    print(f"Local Branching LP, k = {args.fraction:g} of the integer variables "
          "(the first hot solve starts from scratch):")
    print("\n".join(local))


if __name__ == "__main__":
    main()
