"""Which searches leave the solution at which random LNS stops.

Random LNS runs on an instance for ``--reach`` seconds (seed 0); from its best solution each
search below then runs for ``--seconds``, one after the other, and the script prints where each
ended and when it first improved that start:

- random LNS with the size cap at 50% (as it ships), 70% and 85% of the integer variables;
- graph-induced neighborhoods (the variables nearest a random one in the variable-constraint
  graph);
- LB-RELAX and cl_lns (the shipped model of the instance's class), as they ship;
- CP-SAT on the whole problem with the start as its hint, with one worker and with two.

A search that ends at the start in every row is a local optimum of every neighborhood the
loop draws, not of one selector's; a row that leaves it names what would. ::

    python benchmarks/escape_incumbent.py data/mvc_small/test/mvc_small_0001.mps.gz \
        --reach 8 --seconds 40
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lns import solve
from lns.core.baselines.cpsat import run_cpsat
from lns.core.problem.mip import read_problem
from lns.core.search.incumbent import Incumbent
from lns.core.search.params import SizeParams
from lns.params import SolveParams

#: The LNS rows: a label, the selector, and the size cap (the largest share of the integer
#: variables a neighborhood frees).
LNS_ROWS = (
    ("random, cap 50%", "random", 0.5),
    ("random, cap 70%", "random", 0.7),
    ("random, cap 85%", "random", 0.85),
    ("graph-induced", "graph", 0.5),
    ("lb_relax", "lb_relax", 0.5),
    ("cl_lns", "cl_lns", 0.5),
)
#: Worker counts of the CP-SAT rows.
CPSAT_WORKERS = (1, 2)


def from_start_lns(problem, selector: str, cap: float, start: np.ndarray, seconds: float):
    """The final objective, the first improvement's second (``None``: none) and the iterations
    of ``selector``'s LNS from ``start``."""
    params = SolveParams(size=SizeParams(max_fraction=cap))
    result = solve(problem, selector, seconds, seed=1, params=params, initial_solution=start)
    improved = [at for at, _ in result.trajectory[1:]]
    return result.objective, (improved[0] if improved else None), len(result.iterations)


def from_start_cpsat(problem, workers: int, start: np.ndarray, seconds: float):
    """The final objective and the first improvement's second of CP-SAT from ``start``."""
    incumbent = Incumbent(problem, time.perf_counter())
    incumbent.offer(start, found_at=time.perf_counter(), source="initial")
    run_cpsat(incumbent, time_limit=seconds, seed=0, num_workers=workers)
    improved = [at for at, _ in incumbent.trajectory[1:]]
    return incumbent.objective, (improved[0] if improved else None), None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instance")
    parser.add_argument("--reach", type=float, default=8.0, help="seconds of the first run")
    parser.add_argument("--seconds", type=float, default=40.0, help="seconds of each search")
    args = parser.parse_args()
    problem = read_problem(args.instance)  # once: each search below starts without reading it
    first = solve(problem, "random", args.reach, seed=0)
    start = np.asarray(first.x)
    print(f"start: {first.objective:.6g} (random LNS, {args.reach:g} s, seed 0)", flush=True)
    rows = [
        (label, from_start_lns(problem, selector, cap, start, args.seconds))
        for label, selector, cap in LNS_ROWS
    ]
    rows += [
        (
            f"cpsat, {w} worker{'s' if w > 1 else ''}",
            from_start_cpsat(problem, w, start, args.seconds),
        )
        for w in CPSAT_WORKERS
    ]
    header = "objective | first improvement (s) | iterations"
    print(f"| search, {args.seconds:g} s from the start | {header} |")
    print("|---|---:|---:|---:|")
    for label, (objective, improved, iterations) in rows:
        at = "none" if improved is None else f"{improved:.1f}"
        print(f"| {label} | {objective:.6g} | {at} | {'' if iterations is None else iterations} |")


if __name__ == "__main__":
    main()
