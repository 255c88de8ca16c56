"""Start strategies of the LNS side by side: time to the first solution, time to within 1% of
the best objective, primal integral.

For each instance, one random-LNS run per start strategy (``LNSConfig.start``), all at the same
time in separate processes, so that the machine's load hits each alike. The reference of the
gaps is the best of the known optimum (``.solu``) and the runs' own best.

Usage (from the repository root; generate the instances first, see ``--help``); the three runs
behind the default ``start`` (about 4 minutes each), then their summary::

    S="--time-limit 30 --starts first improving feasibility"
    PYTHONPATH=$PWD python benchmarks/fast_start.py $S --seed 0 --out seed0.json
    PYTHONPATH=$PWD python benchmarks/fast_start.py $S --seed 1 --out seed1.json
    PYTHONPATH=$PWD python benchmarks/fast_start.py $S --seed 0 --stall 0.5 1 0.1 --out tight.json
    PYTHONPATH=$PWD python benchmarks/fast_start.py --summarize seed0.json seed1.json tight.json

Results: ``benchmarks/results/fast_start_*.json`` (figures in :mod:`lns.core.start`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from lns.core.config import LNSConfig
from lns.core.metrics import best_found, primal_gap, primal_integral, shifted_geometric_mean
from lns.core.problem import read_problem
from lns.core.solu import known_objective
from lns.core.start import STARTS

INSTANCES = (
    "data/fs_mis/mis_small_0000.mps.gz",
    "data/fs_mvc/mvc_small_0000.mps.gz",
    "data/fs_sc/sc_small_0000.mps.gz",
    "data/fs_ca/ca_small_0000.mps.gz",
    "instances/miplib/air05.mps.gz",
    "instances/miplib/seymour.mps.gz",
    "instances/miplib2017/glass-sc.mps.gz",
)
GENERATE = (
    "PYTHONPATH=$PWD lns-generate problem={p} size=small n=1 seed=7 out_dir=data/fs_{p}  "
    "(p in mis, mvc, sc, ca)"
)


#: The label of a run whose stall rule opens its window at once (``StallRule.after_root`` off).
NO_ROOT = "/no-root"


def run_one(instance: str, label: str, time_limit: float, seed: int, stall: list) -> None:
    """One LNS run of the start ``label`` (a name of ``STARTS``, with :data:`NO_ROOT` appended
    for a stall rule without ``after_root``); prints its trajectory and objective as JSON."""
    from lns.api import solve

    floor, factor, share = stall
    start = label.removesuffix(NO_ROOT)
    result = solve(
        instance,
        "random",
        time_limit=time_limit,
        seed=seed,
        start=start,
        start_stall_floor=floor,
        start_stall_factor=factor,
        start_max_share=share,
        start_after_root=not label.endswith(NO_ROOT),
    )
    print(
        json.dumps(
            {
                "trajectory": [list(p) for p in result.trajectory],
                "objective": result.objective,
                "iterations": len(result.iterations),
                "stop_reason": str(result.stop_reason),
            }
        )
    )


def side_by_side(instance: str, starts: list, time_limit: float, seed: int, stall: list) -> dict:
    """Every start on ``instance`` at once, one process each: ``{start: run}``."""
    processes = {
        start: subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--child",
                instance,
                start,
                str(time_limit),
                str(seed),
                "--stall",
                *map(str, stall),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for start in starts
    }
    runs = {}
    for start, process in processes.items():
        out, _ = process.communicate(timeout=time_limit + 120)
        runs[start] = json.loads(out.strip().splitlines()[-1])
    return runs


def first_time_within(trajectory: list, reference: float | None, tol: float) -> float | None:
    """Seconds until the gap to ``reference`` is at most ``tol`` (``None``: never)."""
    return next((t for t, value in trajectory if primal_gap(value, reference) <= tol), None)


def measures(runs: dict, reference: float | None, time_limit: float) -> dict:
    """Per start: first solution time, time to within 1%, primal integral, final gap."""
    table = {}
    for start, run in runs.items():
        trajectory = run["trajectory"]
        table[start] = {
            "first": trajectory[0][0] if trajectory else None,
            "within_1pct": first_time_within(trajectory, reference, 0.01),
            "integral": primal_integral(trajectory, reference, time_limit),
            "final_gap": primal_gap(run["objective"], reference),
            "iterations": run["iterations"],
            "stop_reason": run["stop_reason"],
        }
    return table


def reference_of(instance: str, runs: dict) -> float | None:
    sense = read_problem(instance).sense
    values = [run["objective"] for run in runs.values() if run["objective"] is not None]
    known = known_objective(Path(instance))
    return best_found(values + ([known] if known is not None else []), sense)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] + " Instances: " + GENERATE
    )
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--starts", nargs="+", default=list(STARTS), choices=STARTS)
    config = LNSConfig()
    parser.add_argument(
        "--stall",
        nargs=3,
        type=float,
        metavar=("FLOOR", "FACTOR", "SHARE"),
        default=[config.start_stall_floor, config.start_stall_factor, config.start_max_share],
        help="the stall rule (StallRule)",
    )
    parser.add_argument(
        "--after-root",
        choices=("on", "off", "both"),
        default="on",
        help="the stall rule's after_root; 'both' runs each start with and without it (the "
        f"runs without are labelled START{NO_ROOT})",
    )
    parser.add_argument("--instances", nargs="+", default=list(INSTANCES))
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--summarize",
        nargs="+",
        type=Path,
        metavar="JSON",
        help="print the summary of earlier --out files (e.g. of several seeds)",
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        instance, start, time_limit, seed = args.child
        return run_one(instance, start, float(time_limit), int(seed), args.stall)
    if args.summarize:
        return print_summary([json.loads(path.read_text())["results"] for path in args.summarize])
    labels = {
        "on": args.starts,
        "off": [start + NO_ROOT for start in args.starts],
        "both": [label for start in args.starts for label in (start, start + NO_ROOT)],
    }[args.after_root]
    results: dict[str, dict] = {}
    for instance in args.instances:
        runs = side_by_side(instance, labels, args.time_limit, args.seed, args.stall)
        reference = reference_of(instance, runs)
        results[instance] = {
            "reference": reference,
            "starts": measures(runs, reference, args.time_limit),
        }
        print_table(Path(instance).name, results[instance]["starts"])
    print_summary([results])
    if args.out is not None:
        args.out.write_text(
            json.dumps(
                {
                    "time_limit": args.time_limit,
                    "seed": args.seed,
                    "stall": args.stall,
                    "after_root": args.after_root,
                    "results": results,
                },
                indent=1,
            )
        )


def print_summary(runs: list) -> None:
    """Per start over every (instance, seed): shifted geometric mean (shift 1) of the primal
    integrals, and wins (the smallest integral, ties shared)."""
    tables = [result["starts"] for results in runs for result in results.values()]
    integrals = {
        start: np.array([table[start]["integral"] for table in tables]) for start in tables[0]
    }
    best = np.min(np.stack(list(integrals.values())), axis=0)
    print(f"summary over {len(tables)} runs")
    for start, values in integrals.items():
        sgm = shifted_geometric_mean(values)
        print(f"  {start:20s} sgm integral {sgm:6.2f}  wins {int(np.sum(values <= best + 1e-9))}")


def print_table(name: str, table: dict) -> None:
    def fmt(value):
        return "-" if value is None else f"{value:.2f}"

    print(f"{name}")
    for start, row in table.items():
        print(
            f"  {start:20s} first {fmt(row['first']):>6s}s"
            f"  within 1% {fmt(row['within_1pct']):>6s}s  integral {row['integral']:6.2f}"
            f"  final gap {100 * row['final_gap']:6.2f}%"
            f"  iterations {row['iterations']} ({row['stop_reason']})",
            flush=True,
        )


if __name__ == "__main__":
    main()
