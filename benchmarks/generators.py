r"""Figures for the instance generators: preset sizes, generation times, how hard SCIP finds them.

Part 1: for every class and preset, one instance (seed 0, index 0): numbers of variables, rows
and nonzeros, seconds to generate the arrays and to write the ``.mps.gz`` (``Problem.write``:
building the SCIP model, SCIP's MPS writer, gzip), and the file size.
Part 2: plain SCIP (``lns.solve(path, method="scip")``) on the first instances of each class's
``small`` preset under a wall-clock limit; the gap between its primal and dual bound is
``|p - d| / max(|p|, |d|)`` (:func:`lns.core.search.metrics.primal_gap`). LNS matters where this gap
stays open.

The full run (5 classes x 2 presets, then 3 small instances x 5 classes x 60 s: about 20 minutes
of one core)::

    python benchmarks/generators.py --out-dir /tmp/generated

Reduced::

    python benchmarks/generators.py --classes mis mvc --sizes small --scip-instances 1 \
        --time-limit 10
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from instances.generators import CLASSES, instance_rng, problem_class
from lns.api import solve
from lns.core.search.metrics import primal_gap


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", nargs="+", default=sorted(CLASSES), choices=sorted(CLASSES))
    parser.add_argument("--sizes", nargs="+", default=["small", "large"])
    parser.add_argument(
        "--scip-instances", type=int, default=3, help="small instances per class for SCIP; 0 skips"
    )
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per SCIP run")
    parser.add_argument("--out-dir", type=Path, default=Path("data/generator_figures"))
    return parser.parse_args(argv)


def instance_path(out_dir: Path, name: str, size: str, index: int) -> Path:
    return out_dir / f"{name}_{size}" / f"{name}_{size}_{index:04d}.mps.gz"


def make_instance(name: str, size: str, index: int, out_dir: Path) -> dict:
    """Generate and write one instance of a preset; the sizes and the two timings."""
    cls = problem_class(name)
    started = time.perf_counter()
    problem = cls.generate(cls.params(size), instance_rng(0, index), f"{name}_{size}_{index:04d}")
    generated = time.perf_counter()
    path = problem.write(instance_path(out_dir, name, size, index))
    written = time.perf_counter()
    return {
        "class": name,
        "size": size,
        "vars": problem.n_vars,
        "rows": problem.n_rows,
        "nonzeros": problem.matrix.nnz,
        "generate_s": generated - started,
        "write_s": written - generated,
        "MB": path.stat().st_size / 1e6,
        "path": path,
    }


def table(rows: list[dict], columns: list[str]) -> str:
    def cell(value):
        return f"{value:.3g}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    sizes = [
        make_instance(name, size, 0, args.out_dir) for name in args.classes for size in args.sizes
    ]
    print("## Instance sizes and generation times (one instance, seed 0)\n")
    print(
        table(sizes, ["class", "size", "vars", "rows", "nonzeros", "generate_s", "write_s", "MB"]),
        flush=True,
    )
    if args.scip_instances < 1:
        return
    runs = []
    for name in args.classes:
        for index in range(args.scip_instances):
            path = instance_path(args.out_dir, name, "small", index)
            if not path.exists():
                make_instance(name, "small", index, args.out_dir)
            result = solve(path, method="scip", time_limit=args.time_limit, seed=0)
            runs.append(
                {
                    "class": name,
                    "instance": path.name,
                    "status": result.status,
                    "primal": result.objective,
                    "dual": result.dual_bound,
                    "gap_%": 100 * primal_gap(result.objective, result.dual_bound),
                    "runtime_s": result.runtime,
                }
            )
            print(f"{path.name}: {runs[-1]}", flush=True)
    print(f"\n## Plain SCIP on the small presets, {args.time_limit:g} s each\n")
    print(table(runs, ["class", "instance", "status", "primal", "dual", "gap_%", "runtime_s"]))


if __name__ == "__main__":
    main()
