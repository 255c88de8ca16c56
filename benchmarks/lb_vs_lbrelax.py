"""Local Branching against LB-RELAX on the same incumbents: selection time and improvement.

For each instance, a sequence of incumbents is generated first: the last incumbents of
plain SCIP within ``--initial-time`` seconds, topped up by sub-solves of random
neighborhoods if SCIP found fewer. The selectors are called on them in order, as in an
LNS run, so LB-RELAX's LP is hot-started from the previous incumbent's basis. Then, on every
incumbent ``x*`` and for every method (LB and the LB-RELAX variants), the script

1. times the selection of a neighborhood of ``k`` integer variables;
2. runs one LNS iteration as :func:`lns.core.search.loop.run_lns` does: a solution the selector
   found (LB's) becomes the incumbent, then one sub-solve frees the neighborhood
   (``iteration`` columns);
3. separately, runs one sub-solve of the neighborhood from ``x*`` itself, so that the
   neighborhood is judged apart from the solutions LB finds on its own
   (``neighborhood`` columns; the CL-LNS authors' evaluation).

Improvements are relative, ``(f(x*) - f(new)) / |f(x*)|`` in the minimisation sense.
Every sub-solve of one incumbent uses the same SCIP seed. The table gives medians over
incumbents and, per LB-RELAX variant, its ratio to LB.

Example (about 9 minutes)::

    python benchmarks/lb_vs_lbrelax.py --instances air05 seymour --incumbents 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from heuristics.lb_relax import LBRelax
from heuristics.local_branching import LocalBranching
from heuristics.random_selector import RandomSelector
from heuristics.subproblem import FRESH_START
from instances.bundled import resolve_instance
from lns.core.problem.mip import read_problem
from lns.core.search.selection import SearchState, Selector
from lns.core.solvers.protocol import SEED_BOUND
from lns.core.solvers.scip.subsolver import ScipSubSolver


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["air05", "seymour"])
    parser.add_argument("--incumbents", type=int, default=4, help="incumbents per instance")
    parser.add_argument(
        "--fraction",
        type=float,
        default=0.05,
        help="k as a fraction of the integer variables (at 0.2, air05's sub-MIPs of 1439 free "
        "variables rarely improve within 10 s whatever the neighborhood)",
    )
    parser.add_argument(
        "--lb-time", type=float, default=10.0, help="seconds per Local Branching solve"
    )
    parser.add_argument(
        "--sub-time",
        type=float,
        default=10.0,
        help="seconds per sub-solve (the LNS loop's default iteration limit)",
    )
    parser.add_argument(
        "--initial-time",
        type=float,
        default=20.0,
        help="seconds of plain SCIP whose last incumbents are used (SCIP's very first solutions "
        "are so poor that every neighborhood improves them alike)",
    )
    parser.add_argument(
        "--warmup-time", type=float, default=3.0, help="seconds per incumbent-generating sub-solve"
    )
    parser.add_argument(
        "--variants", nargs="+", default=["positive", "topk"], help="LB-RELAX variants"
    )
    parser.add_argument(
        "--cold", action="store_true", help="also LB-RELAX (positive) without the LP warm start"
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def incumbents(problem, solver, count, k, initial_time, warmup_time, rng):
    """The last ``count`` incumbents of plain SCIP in ``initial_time``, topped up by random LNS."""
    first = solver.solve(time_limit=initial_time, seed=int(rng.integers(SEED_BOUND)))
    if not first.found:
        first = solver.solve(time_limit=600, seed=int(rng.integers(SEED_BOUND)), solution_limit=1)
    found = [s.x for s in first.found if problem.check(s.x).feasible][-count:]
    x, selector = found[-1], RandomSelector()
    for _ in range(5 * count):
        if len(found) >= count:
            break
        state = SearchState(problem, x, problem.objective_value(x))
        free = selector(state, k, rng).free
        fixed = np.setdiff1d(problem.integer_indices, free)
        outcome = solver.solve(
            time_limit=warmup_time, seed=int(rng.integers(SEED_BOUND)), fixed=fixed, start=x
        )
        if outcome.best is not None and problem.check(outcome.best.x).feasible:
            x = outcome.best.x
            found.append(x)
    return found


def sub_solve(problem, solver, x, free, time_limit, seed):
    """Best objective after a sub-solve freeing ``free`` around ``x`` (``f(x)`` if none better)."""
    fixed = np.setdiff1d(problem.integer_indices, free)
    outcome = solver.solve(time_limit=time_limit, seed=seed, fixed=fixed, start=x)
    best = problem.objective_value(x)
    for found in outcome.found:
        if problem.check(found.x).feasible and problem.is_better(found.objective, best):
            best = found.objective
    return best


def relative_improvement(problem, before, after):
    sign = 1.0 if problem.sense == "minimize" else -1.0
    return sign * (before - after) / max(1.0, abs(before))


def measure(problem, solver, selector, x, k, sub_time, seed, rng):
    """Selection time, iteration and neighborhood improvement of one selector on ``x``."""
    before = problem.objective_value(x)
    state = SearchState(problem, x, before, deadline=time.perf_counter() + 3600)
    began = time.perf_counter()
    neighborhood = selector(state, k, rng)
    select_time = time.perf_counter() - began
    start = x
    if (
        neighborhood.solution is not None
        and problem.check(neighborhood.solution).feasible
        and problem.is_better(problem.objective_value(neighborhood.solution), before)
    ):
        start = neighborhood.solution
    iteration = sub_solve(problem, solver, start, neighborhood.free, sub_time, seed)
    alone = sub_solve(problem, solver, x, neighborhood.free, sub_time, seed)
    return {
        "select_time": select_time,
        "iteration": relative_improvement(problem, before, iteration),
        "neighborhood": relative_improvement(problem, before, alone),
        "size": len(neighborhood.free),
        "fallback": bool(neighborhood.info.get("fallback", False)),
    }


def table_rows(name: str, k: int, rows: dict[str, list]) -> list[str]:
    """One table row per method on instance ``name``, ratios taken against ``rows["LB"]``."""
    lines = []
    lb = rows["LB"]
    lb_time = np.median([r["select_time"] for r in lb])
    lb_mean = np.mean([r["iteration"] for r in lb])
    for label, results in rows.items():
        column = {key: np.array([r[key] for r in results]) for key in results[0]}
        time_ratio = lb_time / np.median(column["select_time"])
        improvement_ratio = np.mean(column["iteration"]) / lb_mean if lb_mean > 0 else float("nan")
        lines.append(
            f"| {name} | {label} | {k} | {np.median(column['select_time']):.3f} "
            f"| {np.median(column['iteration']):.5f} / {np.mean(column['iteration']):.5f} "
            f"| {np.median(column['neighborhood']):.5f} "
            f"/ {np.mean(column['neighborhood']):.5f} "
            f"| {int(column['fallback'].sum())}/{len(results)} | {time_ratio:.1f} "
            f"| {improvement_ratio:.2f} |"
        )
    return lines


def main(argv=None):
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    methods: dict[str, Selector] = {"LB": LocalBranching(time_limit=args.lb_time)}
    methods.update({f"LB-RELAX ({variant})": LBRelax(variant=variant) for variant in args.variants})
    if args.cold:
        methods["LB-RELAX (positive, cold LP)"] = LBRelax(warm_start=False)
    lines = [
        "| instance | method | k | select time (s), median | iteration improvement, median / mean "
        "| neighborhood improvement, median / mean | fallbacks | time ratio LB / method "
        "| iteration improvement ratio method / LB (means) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in args.instances:
        problem = read_problem(resolve_instance(name))
        # Every sub-solve starts from its own start only.
        solver = ScipSubSolver(problem, FRESH_START)
        k = max(2, int(round(args.fraction * len(problem.integer_indices))))
        xs = incumbents(
            problem, solver, args.incumbents, k, args.initial_time, args.warmup_time, rng
        )
        for selector in methods.values():
            selector.setup(problem)
        rows: dict[str, list] = {label: [] for label in methods}
        for x in xs:
            seed = int(rng.integers(SEED_BOUND))
            for label, selector in methods.items():
                rows[label].append(
                    measure(
                        problem,
                        solver,
                        selector,
                        x,
                        k,
                        args.sub_time,
                        seed,
                        np.random.default_rng(seed),
                    )
                )
                print(
                    f"{name} f(x*)={problem.objective_value(x):g} {label}: {rows[label][-1]}",
                    flush=True,
                )
        lines.extend(table_rows(name, k, rows))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
