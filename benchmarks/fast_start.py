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

The stall rule's ``after_root`` on and off, side by side (12 tuning instances, 60 s)::

    T="data/tune/sc_tune_0000.mps.gz data/tune/sc_tune_0001.mps.gz data/tune/mis_tune_0000.mps.gz"
    for n in assign1-5-8 drayage-25-23 icir97_tension mik-250-20-75-4 neos-3216931-puriri \
        neos-4338804-snowy noswot reblock115 supportcase26; do
        T="$T instances/miplib2017/$n.mps.gz"; done
    PYTHONPATH=$PWD python benchmarks/fast_start.py --time-limit 60 --starts feasibility \
        --after-root both --instances $T --out after_root.json

(``lns-generate problem=sc size=small n=2 seed=7 out_dir=data/tune prefix=sc_tune``, the same
for ``mis``.) The race start against the feasibility start with 2 workers, one run after the
other (each takes both cores), on pure-integer instances::

    PYTHONPATH=$PWD python benchmarks/fast_start.py --time-limit 60 --workers 2 \
        --one-at-a-time --starts feasibility race --instances ... --out race.json

Results: ``benchmarks/results/fast_start_*.json`` (figures in :mod:`lns.core.search.start`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from lns.core.problem.mip import read_problem
from lns.core.problem.solu_file import known_objective
from lns.core.search.config import STARTS, LNSConfig
from lns.core.search.metrics import best_found, primal_gap, primal_integral, shifted_geometric_mean

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


def run_one(
    instance: str, label: str, time_limit: float, seed: int, stall: list, workers: int
) -> None:
    """One LNS run of the start ``label`` (a name of ``STARTS``, with :data:`NO_ROOT` appended
    for a stall rule without ``after_root``) with ``workers`` worker processes; prints its
    trajectory and objective as JSON."""
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
        workers=workers,
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


def side_by_side(
    instance: str,
    starts: list,
    time_limit: float,
    seed: int,
    stall: list,
    workers: int = 1,
    one_at_a_time: bool = False,
) -> dict:
    """Every start on ``instance``, one process each, all at once (or one after another):
    ``{start: run}``."""
    runs, processes = {}, {}
    for start in starts:
        command = [sys.executable, __file__, "--child", instance, start, str(time_limit)]
        command += [str(seed), "--stall", *map(str, stall), "--workers", str(workers)]
        processes[start] = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        if one_at_a_time:
            runs[start] = _read_run(processes.pop(start), time_limit)
    runs.update({start: _read_run(process, time_limit) for start, process in processes.items()})
    return runs


def _read_run(process: subprocess.Popen, time_limit: float) -> dict:
    out, _ = process.communicate(timeout=time_limit + 120)
    return json.loads(out.strip().splitlines()[-1])


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
    parser.add_argument("--workers", type=int, default=1, help="worker processes of each run")
    parser.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="run the starts one after another (for runs that take several cores)",
    )
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
        return run_one(instance, start, float(time_limit), int(seed), args.stall, args.workers)
    if args.summarize:
        return print_summary([json.loads(path.read_text())["results"] for path in args.summarize])
    labels = {
        "on": args.starts,
        "off": [start + NO_ROOT for start in args.starts],
        "both": [label for start in args.starts for label in (start, start + NO_ROOT)],
    }[args.after_root]
    results: dict[str, dict] = {}
    for instance in args.instances:
        runs = side_by_side(
            instance,
            labels,
            args.time_limit,
            args.seed,
            args.stall,
            args.workers,
            args.one_at_a_time,
        )
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
                    "workers": args.workers,
                    "one_at_a_time": args.one_at_a_time,
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
