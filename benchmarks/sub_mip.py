"""SCIP settings of the LNS sub-problems side by side (``LNSConfig.sub_mip``), and the
per-iteration time limit (``LNSConfig.iteration_time_limit``).

Each instance runs random LNS once per variant: a setting of
:data:`lns.core.solvers.scip.settings.SUB_MIP_SETTINGS` at an iteration time limit (every pair of
``--settings`` and ``--iteration-time-limits``), the runs at the same time in separate processes,
so that machine load hits them alike (more runs than cores share the cores evenly). Reported
per instance: the primal integral (seconds, against the best of the ``.solu`` value and the
runs' final objectives), the final gap and the iterations; then per variant the shifted
geometric mean (shift 1) of the integrals and the instances it was best on.

The default instances are the MIPLIB 2017 tuning part: of the 36 bundled instances that are
feasible and were not used elsewhere, sorted by name, every 4th from the 3rd (the
``miplib2017`` benchmark preset holds out every 4th from the 1st).

    python benchmarks/sub_mip.py                                   # default vs fast, 60 s
    python benchmarks/sub_mip.py --settings default fast_presolving fast --instances air05
    python benchmarks/sub_mip.py --settings fast --iteration-time-limits 2 5 10   # the rule
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from instances.bundled import resolve_instance
from lns.api import solve
from lns.core.problem.solu_file import known_objective
from lns.core.search.config import LNSConfig
from lns.core.search.metrics import best_found, primal_gap, primal_integral, shifted_geometric_mean
from lns.core.solvers.scip.settings import SUB_MIP_SETTINGS

TUNING = (
    "assign1-5-8", "drayage-25-23", "icir97_tension", "mik-250-20-75-4", "neos-3216931-puriri",
    "neos-4338804-snowy", "noswot", "reblock115", "supportcase26",
)  # fmt: skip


def run(path: str, variant: tuple[str, float], time_limit: float, seed: int) -> dict:
    setting, iteration_limit = variant
    result = solve(
        path,
        "random",
        time_limit=time_limit,
        seed=seed,
        sub_mip=setting,
        iteration_time_limit=iteration_limit,
    )
    assert result.problem is not None, "solve() gives its result the problem"
    return {
        "objective": result.objective,
        "trajectory": result.trajectory,
        "sense": result.problem.sense,
        "iterations": len(result.iterations),
    }


def compare(path, variants: dict, time_limit: float, seed: int, pool) -> dict:
    """One instance: each variant's integral, gap and iterations (``variants``: name ->
    (setting, iteration time limit))."""
    futures = {s: pool.submit(run, str(path), v, time_limit, seed) for s, v in variants.items()}
    runs = {s: f.result() for s, f in futures.items()}
    finals = [r["objective"] for r in runs.values()] + [known_objective(path)]
    best = best_found(finals, next(iter(runs.values()))["sense"])
    return {
        s: (primal_integral(r["trajectory"], best, time_limit), primal_gap(r["objective"], best),
            r["iterations"])
        for s, r in runs.items()
    }  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=list(TUNING))
    parser.add_argument(
        "--settings", nargs="+", default=["default", "fast"], choices=list(SUB_MIP_SETTINGS)
    )
    parser.add_argument(
        "--iteration-time-limits", nargs="+", type=float, default=[LNSConfig.iteration_time_limit]
    )
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    several = len(args.iteration_time_limits) > 1
    variants = {
        (f"{s}, {t:g} s" if several else s): (s, t)
        for s in args.settings
        for t in args.iteration_time_limits
    }
    print("| instance | " + " | ".join(f"{v} integral (gap, iterations)" for v in variants) + " |")
    print("|---|" + "---|" * len(variants))
    rows = []
    with ProcessPoolExecutor(max_workers=len(variants)) as pool:
        for name in args.instances:
            row = compare(resolve_instance(name), variants, args.time_limit, args.seed, pool)
            rows.append(row)
            cells = [f"{i:.2f} ({g:.4f}, {n})" for i, g, n in row.values()]
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    for setting in variants:
        integrals = [row[setting][0] for row in rows]
        wins = sum(row[setting][0] <= min(v[0] for v in row.values()) + 1e-9 for row in rows)
        print(
            f"\n{setting}: sgm integral {shifted_geometric_mean(integrals):.2f}, "
            f"lowest on {wins} of {len(rows)}"
        )


if __name__ == "__main__":
    main()
