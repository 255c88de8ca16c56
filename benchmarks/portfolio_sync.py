"""Synchronisation cost of the parallel portfolio (:mod:`lns.core.parallel.portfolio`) as workers
grow.

For each worker count, one run of the portfolio on one instance: the first solution is found
once in this process (SCIP's first solution, as :func:`lns.solve` does), then the workers
improve it for ``--time-limit`` seconds with the random selector. Reported per worker count:

* ``worker share``: the seconds the workers spent in the exchange hook (sending their new
  incumbents, taking the shared one) over the seconds they ran, summed over workers;
* ``main share``: the seconds the main process spent checking and passing on solutions over
  the run's wall-clock time (the rest of its time it waits for messages);
* iterations, solutions exchanged (shared incumbents) and the final objective.

The portfolio is used even for one worker (``solve(workers=1)`` runs the loop in-process and
exchanges nothing). On a machine with fewer cores than workers the workers share the cores:
the run measures the exchange's cost, not the speed-up. Example (as reported)::

    python benchmarks/portfolio_sync.py --instance instances/miplib/air05.mps.gz \\
        --workers 1 2 4 8 --time-limit 20

``--portfolio auto`` runs the portfolio of worker kinds instead (``n`` random-LNS workers and
one CP-SAT, Local-MIP and SCIP worker, ``n`` of them running at once under the default
allocation rule, :mod:`lns.core.parallel.allocation`) and adds the seconds each kind held a
core::

    python benchmarks/portfolio_sync.py --portfolio auto --workers 2 4 8 --time-limit 20
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from pathlib import Path

from lns.api import named_sub_solver
from lns.core.parallel.allocation import DEFAULT_RULE
from lns.core.parallel.plan import AUTO_ORDER
from lns.core.parallel.portfolio import Portfolio
from lns.core.problem.mip import instance_name, problem_from_scip, read_scip_model
from lns.core.search.config import LNSConfig
from lns.core.search.incumbent import Incumbent
from lns.core.search.stop import MaxRuntime
from lns.registry import make_selector


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="instances/miplib/air05.mps.gz")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4, 8])
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--portfolio", choices=["lns", "auto"], default="lns")
    return parser.parse_args(argv)


def run_portfolio(
    instance: str, workers: int, time_limit: float, seed: int, portfolio_kind: str = "lns"
) -> dict:
    """One portfolio run of ``workers`` workers; its exchange shares and outcome."""
    path = Path(instance)
    model = read_scip_model(path)
    problem = problem_from_scip(model, instance_name(path), source=path)
    config = LNSConfig()
    started = time.perf_counter()
    incumbent = Incumbent(problem, started)
    make = functools.partial(named_sub_solver, "scip")
    portfolio = Portfolio(
        problem,
        [make_selector("random")] * workers,
        make,
        config=config,
        seed=seed,
        stop=MaxRuntime(time_limit),
        started=started,
        kinds=AUTO_ORDER if portfolio_kind == "auto" else (),
        rule=DEFAULT_RULE if portfolio_kind == "auto" else None,
        cores=workers,
    )
    with portfolio:
        sub_solver = named_sub_solver("scip", problem, config, model)
        sub_solver.solve(
            time_limit=time_limit, seed=seed, solution_limit=1, on_found=incumbent.offer_found
        )
        began = time.perf_counter()
        records, reason = portfolio.run(incumbent)
        wall = time.perf_counter() - began
    stats = [w for w in portfolio.workers if w is not None]
    return {
        "workers": workers,
        "wall": wall,
        "iterations": len(records),
        "worker_share": sum(w.exchange_time for w in stats) / sum(w.time for w in stats),
        "main_share": portfolio.exchange_time / wall,
        "exchanged": len(incumbent.trajectory) - 1,
        "objective": incumbent.objective,
        "reason": str(reason),
        "held": {w.kind: round(w.time, 1) for w in stats if w.kind != "lns"}
        | {"lns": round(sum(w.time for w in stats if w.kind == "lns"), 1)},
    }


def main(argv=None) -> None:
    args = parse_args(argv)
    print(f"{args.instance}, {args.time_limit:g} s per run, {len(os.sched_getaffinity(0))} cores")
    print("workers  wall(s)  iterations  exchanged  worker share  main share  objective")
    for workers in args.workers:
        row = run_portfolio(args.instance, workers, args.time_limit, args.seed, args.portfolio)
        print(
            f"{row['workers']:7d}  {row['wall']:7.2f}  {row['iterations']:10d}  "
            f"{row['exchanged']:9d}  {100 * row['worker_share']:11.3f}%  "
            f"{100 * row['main_share']:9.3f}%  {row['objective']:g}"
            + (f"  held (s): {row['held']}" if args.portfolio == "auto" else "")
        )


if __name__ == "__main__":
    main()
