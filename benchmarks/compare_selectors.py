"""Every classical selector and plain SCIP, side by side: primal gap at the end and primal integral.

Each (instance, seed) is solved by plain SCIP (``solve(method="scip")``) and by LNS with
every selector under the same wall-clock limit, one run at a time (SCIP single-threaded).
The reference ``p*`` is the optimum or best known value from the ``.solu`` file next to
the instance, else the best objective any run found. The primal integral ``∫_0^T gap(t) dt``
(Berthold 2013) is in seconds; the tables give means over seeds, and a last row with the
mean over instances.

Example (the full matrix, about 9 instances x 6 methods x 60 s = 54 minutes)::

    python benchmarks/compare_selectors.py --time-limit 60

Reduced::

    python benchmarks/compare_selectors.py --instances air05 seymour mas74 --time-limit 20
"""
from __future__ import annotations

import argparse
import logging

import numpy as np

from lns.registry import SELECTORS
from instances.bundled import resolve_instance
from lns.api import solve
from lns.core.metrics import best_found, primal_gap, primal_integral
from lns.core.solu import known_objective

OPEN_MIPLIB = ["air05", "seymour", "swath", "mas74", "rout", "timtab1", "danoint", "pk1", "dano3mip"]
#: Selectors that need a trained model.
NEEDS_MODEL = {"cl_lns"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=OPEN_MIPLIB, help="bundled names or paths")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--methods", nargs="+", default=["scip", *sorted(set(SELECTORS) - NEEDS_MODEL)],
                        help="'scip' and/or selector names")
    parser.add_argument("--csv", help="also write one row per run to this CSV file")
    return parser.parse_args(argv)


def run(path, method, time_limit, seed):
    if method == "scip":
        return solve(path, method="scip", time_limit=time_limit, seed=seed)
    return solve(path, method, time_limit=time_limit, seed=seed)


def markdown(title, instances, methods, values, fmt):
    lines = [f"**{title}**", "", "| instance | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for name in instances:
        lines.append(f"| {name} | " + " | ".join(fmt.format(values[name][m]) for m in methods) + " |")
    lines.append("| mean | " + " | ".join(fmt.format(np.mean([values[n][m] for n in instances])) for m in methods) + " |")
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    runs = []
    for name in args.instances:
        path = resolve_instance(name)
        for seed in args.seeds:
            for method in args.methods:
                result = run(path, method, args.time_limit, seed)
                runs.append({"instance": name, "method": method, "seed": seed, "objective": result.objective,
                             "trajectory": result.trajectory, "sense": result.problem.sense,
                             "optimum": known_objective(path), "iterations": len(result.iterations)})
                print(f"{name} seed={seed} {method}: objective {result.objective} "
                      f"({len(result.iterations)} iterations)", flush=True)
    gaps, integrals = {}, {}
    for name in args.instances:
        mine = [r for r in runs if r["instance"] == name]
        reference = mine[0]["optimum"]
        if reference is None:
            reference = best_found([r["objective"] for r in mine], mine[0]["sense"])
        gaps[name], integrals[name] = {}, {}
        for method in args.methods:
            of_method = [r for r in mine if r["method"] == method]
            for r in of_method:
                r["gap"] = primal_gap(r["objective"], reference)
                r["integral"] = primal_integral(r["trajectory"], reference, args.time_limit)
            gaps[name][method] = 100 * np.mean([r["gap"] for r in of_method])
            integrals[name][method] = np.mean([r["integral"] for r in of_method])
    print()
    print(markdown(f"Primal gap at {args.time_limit:g} s (%)", args.instances, args.methods, gaps, "{:.3f}"))
    print()
    print(markdown(f"Primal integral over {args.time_limit:g} s (s)", args.instances, args.methods, integrals,
                   "{:.2f}"))
    if args.csv:
        import pandas as pd

        pd.DataFrame([{k: v for k, v in r.items() if k != "trajectory"} for r in runs]).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
