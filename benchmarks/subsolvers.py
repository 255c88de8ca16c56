"""The two sub-solvers of the LNS loop side by side: SCIP and CP-SAT, same neighborhood rule.

Each instance runs random LNS twice under the same wall-clock limit, once with every sub-ILP
solved by SCIP and once by CP-SAT (one worker: each run gets one core), the two runs at the
same time in two processes, so that machine load hits both alike. Reported per instance: the
primal integral (Berthold 2013, seconds, against the best of the ``.solu`` value and both
runs' final objectives), the final gap, iterations and the share of improving iterations;
then the median ratio CP-SAT/SCIP of the primal integrals per instance group. A problem CP-SAT
does not take (continuous variables, coefficients that stay fractional when scaled) is marked
"unsupported" and left out of the ratios.

    python benchmarks/subsolvers.py                 # 4 generated + 6 pure-integer MIPLIB, 60 s
    python benchmarks/subsolvers.py --instances air05 --time-limit 10 --csv out.csv
"""

from __future__ import annotations

import argparse
import csv
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from instances.bundled import resolve_instance
from instances.generators import instance_rng, problem_class
from lns.api import solve
from lns.core.errors import UnsupportedProblemError
from lns.core.problem.mip import read_problem
from lns.core.problem.solu_file import known_objective
from lns.core.search.metrics import best_found, primal_gap, primal_integral

GENERATED = ("mis", "mvc", "sc", "ca")
PURE_INTEGER_MIPLIB = (
    "air05",
    "seymour",
    "instances/miplib2017/glass-sc.mps.gz",
    "instances/miplib2017/cod105.mps.gz",
    "instances/miplib2017/neos-2657525-crna.mps.gz",
    "instances/miplib2017/rococoC10-001000.mps.gz",
)
SUB_SOLVERS = ("scip", "cpsat")


def generated_instances(out_dir: Path, seed: int) -> list[Path]:
    """One small instance of each generated class, written once to ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in GENERATED:
        path = out_dir / f"{name}_small_bench_{seed}.mps.gz"
        if not path.exists():
            cls = problem_class(name)
            cls.generate(cls.params("small"), instance_rng(seed, 0), path.stem.split(".")[0]).write(
                path
            )
        paths.append(path)
    return paths


def run(path: str, sub_solver: str, time_limit: float, seed: int) -> dict:
    """One LNS run; a problem the sub-solver does not take counts as no solution at all."""
    try:
        result = solve(path, "random", sub_solver=sub_solver, time_limit=time_limit, seed=seed)
    except UnsupportedProblemError as error:
        return {
            "objective": None,
            "trajectory": [],
            "sense": read_problem(path).sense,
            "iterations": 0,
            "improving": 0,
            "unsupported": str(error),
        }
    improved = sum(record.improved for record in result.iterations)
    assert result.problem is not None, "solve() gives its result the problem"
    return {
        "objective": result.objective,
        "trajectory": result.trajectory,
        "sense": result.problem.sense,
        "iterations": len(result.iterations),
        "improving": improved,
        "unsupported": "",
    }


def compare(path: Path, group: str, time_limit: float, seed: int, pool) -> dict:
    futures = {s: pool.submit(run, str(path), s, time_limit, seed) for s in SUB_SOLVERS}
    runs = {s: f.result() for s, f in futures.items()}
    finals = [r["objective"] for r in runs.values()] + [known_objective(path)]
    best = best_found(finals, runs["scip"]["sense"])
    row: dict[str, object] = {"instance": path.name.split(".")[0], "group": group}
    for s, r in runs.items():
        row[f"{s}_integral"] = primal_integral(r["trajectory"], best, time_limit)
        row[f"{s}_gap"] = primal_gap(r["objective"], best)
        row[f"{s}_iterations"] = r["iterations"]
        row[f"{s}_improving"] = r["improving"]
        row[f"{s}_unsupported"] = r["unsupported"]
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--instances", nargs="+", help="files or bundled names (default: the built-in set)"
    )
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=Path("data/bench_subsolvers"))
    parser.add_argument("--csv", type=Path)
    args = parser.parse_args(argv)
    if args.instances:
        instances = [(resolve_instance(name), "given") for name in args.instances]
    else:
        instances = [(p, "generated") for p in generated_instances(args.data_dir, args.seed)]
        instances += [(resolve_instance(name), "miplib") for name in PURE_INTEGER_MIPLIB]
    print(
        "| instance | group | SCIP integral | CP-SAT integral | ratio | SCIP gap | CP-SAT gap "
        "| SCIP iterations (improving) | CP-SAT iterations (improving) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    with ProcessPoolExecutor(max_workers=len(SUB_SOLVERS)) as pool:
        for path, group in instances:
            row = compare(path, group, args.time_limit, args.seed, pool)
            row["ratio"] = row["cpsat_integral"] / max(row["scip_integral"], 1e-9)
            rows.append(row)
            cpsat = "unsupported" if row["cpsat_unsupported"] else f"{row['cpsat_integral']:.2f}"
            print(
                f"| {row['instance']} | {group} | {row['scip_integral']:.2f} | {cpsat} "
                f"| {row['ratio']:.2f} | {row['scip_gap']:.4f} | {row['cpsat_gap']:.4f} "
                f"| {row['scip_iterations']} ({row['scip_improving']}) "
                f"| {row['cpsat_iterations']} ({row['cpsat_improving']}) |",
                flush=True,
            )
    for group in sorted({r["group"] for r in rows}):
        compared = [r for r in rows if r["group"] == group and not r["cpsat_unsupported"]]
        if not compared:
            continue
        ratios = [r["ratio"] for r in compared]
        wins = sum(r["cpsat_integral"] < r["scip_integral"] for r in compared)
        print(
            f"\n{group}: median integral ratio CP-SAT/SCIP {statistics.median(ratios):.2f}, "
            f"CP-SAT lower on {wins} of {len(ratios)}"
        )
    if args.csv:
        with open(args.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
