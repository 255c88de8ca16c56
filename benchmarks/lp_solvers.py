"""Which LP solver for the LP relaxations: HiGHS (cold, by method; hot-started) against SCIP's LP.

For each instance: the root LP with SCIP (all variables made continuous, presolving and
heuristics off, model building included) and with :func:`lns.core.solvers.lp.solve_lp` for every
HiGHS method; then the Local Branching LP (``Σ|x_j - x*_j| <= k``) for a sequence of
incumbents (plain SCIP's incumbents within ``--initial-time`` seconds), solved cold with
:func:`~lns.core.solvers.lp.solve_lp` and hot-started with :class:`heuristics.lb_relax.DistanceLP`,
checking that both reach the same objective. Timings are wall-clock seconds, single thread,
the median of ``--repeats`` solves.

With ``--before FILE`` (an earlier ``lns/core/solvers/lp.py``, e.g. the one that drove HiGHS
through SciPy) every HiGHS timing is taken with both modules, alternating, side by side.

Example (about 3 minutes)::

    git show ac26bdc:lns/core/lp.py > /tmp/lp_scipy.py
    python benchmarks/lp_solvers.py --instances air05 seymour --before /tmp/lp_scipy.py
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import statistics
import sys
import time
from unittest import mock

import numpy as np

from heuristics import lb_relax
from heuristics.lb_relax import DistanceLP
from heuristics.local_branching import Distance
from instances.bundled import resolve_instance
from lns.core.problem.mip import read_problem
from lns.core.solvers import lp as current_lp
from lns.core.solvers.lp import METHODS
from lns.core.solvers.scip.subsolver import ScipSubSolver


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["air05", "seymour"])
    parser.add_argument(
        "--fraction", type=float, default=0.2, help="k as a fraction of the integer variables"
    )
    parser.add_argument(
        "--initial-time", type=float, default=20.0, help="seconds of plain SCIP for the incumbents"
    )
    parser.add_argument("--incumbents", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3, help="solves per timing (median shown)")
    parser.add_argument("--before", help="an earlier lns/core/solvers/lp.py to time side by side")
    return parser.parse_args(argv)


def load_module(path: str, name: str = "lp_before"):
    """The module at ``path`` (e.g. an earlier ``lns/core/solvers/lp.py``), imported under
    ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def median_time(solve, repeats: int):
    """The last solution of ``repeats`` calls of ``solve()``, and their median ``solve_time``."""
    solutions = [solve() for _ in range(repeats)]
    return solutions[-1], statistics.median(s.solve_time for s in solutions)


def distance_lp(problem, module) -> DistanceLP:
    """:class:`DistanceLP` on ``module``'s ``WarmLP``."""
    with mock.patch.object(lb_relax, "WarmLP", module.WarmLP):
        return DistanceLP(problem)


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
    modules = {"highspy": current_lp}
    if args.before:
        modules = {"before": load_module(args.before), **modules}
    names = list(modules)
    root = [
        f"| instance | solver | objective | {' | '.join(f'{n} (s)' for n in names)} |",
        "|---|---|---|" + "---|" * len(names),
    ]
    hot_columns = " | ".join(f"hot {n} (s)" for n in names)
    local = [
        f"| instance | incumbent | cold (s) | {hot_columns} | same objective |",
        "|---|---|---|" + "---|" * len(names) + "---|",
    ]
    for name in args.instances:
        problem = read_problem(resolve_instance(name))
        objective, seconds = scip_lp(problem)
        padding = " |" * (len(names) - 1)
        root.append(f"| {name} | SCIP | {objective:.4f} | {seconds:.3f} |{padding}")
        for method in METHODS:
            times = {}
            for label, module in modules.items():
                solution, times[label] = median_time(
                    functools.partial(module.solve_lp, problem, method=method), args.repeats
                )
            root.append(
                f"| {name} | HiGHS {method} | {solution.objective:.4f} | "
                + " | ".join(f"{times[n]:.3f}" for n in names)
                + " |"
            )
        outcome = ScipSubSolver(problem).solve(time_limit=args.initial_time, seed=0)
        xs = [s.x for s in outcome.found][-args.incumbents :]
        k = max(2, int(round(args.fraction * len(problem.integer_indices))))
        hot_lps = {label: distance_lp(problem, module) for label, module in modules.items()}
        for x in xs:
            distance = Distance.to(problem, x)
            columns, rows = distance.lp_rows(k)
            cold = current_lp.solve_lp(problem, extra_rows=rows, extra_columns=columns)
            hot = {label: lp.solve(distance, k, None) for label, lp in hot_lps.items()}
            same = all(
                np.isclose(cold.objective, h.objective, rtol=1e-7, atol=1e-6) for h in hot.values()
            )
            local.append(
                f"| {name} | {problem.objective_value(x):g} | {cold.solve_time:.3f} | "
                + " | ".join(f"{hot[n].solve_time:.3f}" for n in names)
                + f" | {same} |"
            )
    print("\n".join(root))
    print()
    print(
        f"Local Branching LP, k = {args.fraction:g} of the integer variables "
        "(the first hot solve starts from scratch):"
    )
    print("\n".join(local))


if __name__ == "__main__":
    main()
