"""CL-LNS against Random, Local Branching, LB-RELAX and plain SCIP on held-out generated instances.

For each problem class, every held-out instance is solved by each method under the same
wall-clock limit, one run at a time (SCIP single-threaded), with the LNS loop's default
settings for every selector. CL-LNS uses the class's model (``learning/pretrained/<class>.pt``
unless ``--checkpoint CLASS=PATH``). The reference ``p*`` of an instance is the best objective
any run found (no optimum is known for generated instances). torch is imported before the runs,
so no CL-LNS run pays the import (seconds on a loaded machine); its root LP, feature and
inference time do count, inside the runs. Reported per class: the primal
gap at the end and the primal integral ``∫_0^T gap(t) dt`` in seconds (Berthold 2013), per
instance and as mean and median over instances.

The held-out instances are generated with seeds the training set does not use (see
``learning/README.md``), e.g. ``data/mis_test/*.mps.gz``. Example (as reported)::

    python benchmarks/cl_lns.py --classes mis mvc --instances-per-class 3 --time-limit 60 --csv runs/cl_lns.csv
    python benchmarks/cl_lns.py --report runs/cl_lns.csv runs/more.csv     # the tables of finished runs
"""
from __future__ import annotations

import argparse
import csv
import glob
import logging
from pathlib import Path

import numpy as np

from learning.selector import PRETRAINED_DIR, CLLNS
from lns.api import solve
from lns.core.metrics import best_found, primal_gap, primal_integral
from lns.core.problem import read_problem

METHODS = ("scip", "random", "local_branching", "lb_relax", "cl_lns")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", nargs="+", default=["mis", "mvc"])
    parser.add_argument("--test-pattern", default="data/{cls}_test/*.mps.gz",
                        help="glob of the held-out instances; {cls} is replaced by the class")
    parser.add_argument("--instances-per-class", type=int, default=10, help="the first N files, sorted by name")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--checkpoint", nargs="*", default=[], metavar="CLASS=PATH",
                        help="model per class (default learning/pretrained/<class>.pt)")
    parser.add_argument("--csv", help="also write one row per run to this CSV file (rewritten after each instance)")
    parser.add_argument("--report", nargs="+", metavar="CSV",
                        help="run nothing: print the tables of these CSV files (written by --csv), merged")
    return parser.parse_args(argv)


def run(path: Path, method: str, time_limit: float, seed: int, checkpoint: Path):
    if method == "scip":
        return solve(path, method="scip", time_limit=time_limit, seed=seed)
    selector = CLLNS(checkpoint) if method == "cl_lns" else method
    return solve(path, selector, time_limit=time_limit, seed=seed)


def table(title: str, names: list, methods: list, values: dict, fmt: str) -> str:
    lines = [f"**{title}**", "", "| instance | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(fmt.format(values[name][m]) for m in methods) + " |")
    for label, reduce in (("mean", np.mean), ("median", np.median)):
        lines.append(f"| {label} | " + " | ".join(fmt.format(reduce([values[n][m] for n in names])) for m in methods)
                     + " |")
    return "\n".join(lines)


def report(rows: list, methods: list, time_limit: float, seed: int) -> str:
    """Markdown tables per class from run rows: gap and primal integral per instance, mean and median,
    and on how many instances CL-LNS has a lower primal integral than each other method."""
    out = []
    for cls in dict.fromkeys(r["class"] for r in rows):
        by_instance = {}
        for r in rows:
            if r["class"] == cls:
                by_instance.setdefault(r["instance"], {})[r["method"]] = r
        names = sorted(by_instance)
        out.append(f"### {cls} ({len(names)} held-out instances, {time_limit:g} s, seed {seed})\n")
        out.append(table("Primal gap at the end (%)", names, methods,
                         {n: {m: 100 * float(by_instance[n][m]["gap"]) for m in methods} for n in names}, "{:.3f}"))
        out.append("")
        out.append(table("Primal integral (s)", names, methods,
                         {n: {m: float(by_instance[n][m]["primal_integral"]) for m in methods} for n in names},
                         "{:.2f}"))
        out.append("")
        out.append("Mean LNS iterations: " + ", ".join(
            f"{m} {np.mean([int(by_instance[n][m]['iterations']) for n in names]):.0f}" for m in methods
            if m != "scip") + ".")
        if "cl_lns" in methods:
            wins = {m: sum(float(by_instance[n]["cl_lns"]["primal_integral"])
                           < float(by_instance[n][m]["primal_integral"]) for n in names)
                    for m in methods if m != "cl_lns"}
            out.append("cl_lns has a lower primal integral than " + ", ".join(
                f"{m} on {w}" for m, w in wins.items()) + f" of {len(names)} instances.")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.report:
        rows = []
        for path in args.report:
            with open(path, newline="") as handle:
                rows.extend(csv.DictReader(handle))
        print(report(rows, [m for m in METHODS if any(r["method"] == m for r in rows)], args.time_limit, args.seed))
        return
    logging.basicConfig(level=logging.WARNING)
    if "cl_lns" in args.methods:
        import torch_geometric  # noqa: F401  (see the module docstring)
    checkpoints = {cls: PRETRAINED_DIR / f"{cls}.pt" for cls in args.classes}
    checkpoints.update({k: Path(v) for k, v in (item.split("=", 1) for item in args.checkpoint)})
    rows = []
    for cls in args.classes:
        paths = sorted(Path(p) for p in glob.glob(args.test_pattern.format(cls=cls)))[: args.instances_per_class]
        if not paths:
            raise SystemExit(f"no held-out instances match {args.test_pattern.format(cls=cls)!r}")
        for path in paths:
            results = {m: run(path, m, args.time_limit, args.seed, checkpoints[cls]) for m in args.methods}
            reference = best_found([r.objective for r in results.values()], read_problem(path).sense)
            for m, r in results.items():
                rows.append({"class": cls, "instance": r.instance, "method": m, "objective": r.objective,
                             "reference": reference, "gap": primal_gap(r.objective, reference),
                             "primal_integral": primal_integral(r.trajectory, reference, args.time_limit),
                             "iterations": len(r.iterations), "runtime": r.runtime})
            print(f"{cls} {path.name}: " + ", ".join(f"{m} {r.objective}" for m, r in results.items()), flush=True)
            if args.csv:  # after every instance, so an interrupted run keeps what it finished
                write_rows(args.csv, rows)
    print()
    print(report(rows, args.methods, args.time_limit, args.seed))


def write_rows(path: str, rows: list) -> None:
    """Write ``rows`` (dicts with the same keys) to the CSV file ``path``."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
