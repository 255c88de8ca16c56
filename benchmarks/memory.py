"""Memory of a long LNS run: the process's resident size (RSS) every N iterations.

Three loops, each with a node limit per sub-solve so that thousands of iterations take minutes:

- ``solve``: the whole run, :func:`lns.api.solve` with an iteration limit;
- ``subsolver``: :class:`lns.core.solvers.scip.subsolver.ScipSubSolver` alone, each solve with a new
  random set of integer variables fixed at the incumbent;
- ``pyscipopt``: a bare ``pyscipopt.Model`` without project code, each solve with a new random
  set of integer variables fixed at SCIP's first solution (bounds changed, solved,
  ``freeTransform``, bounds restored); ``--collect K`` adds SCIP's garbage collection
  (:func:`lns.core.solvers.scip.memory.collect_memory_garbage`) after every K-th ``freeTransform``,
  ``--trim K`` glibc's ``malloc_trim`` (:func:`lns.core.solvers.scip.memory.trim_heap`); it reports
  the milliseconds per iteration of each step.

The two loops on SCIP also print SCIP's allocated block and buffer memory (``getMemTotal``).
The last line gives the RSS growth per thousand iterations after the first thousand.

    python benchmarks/memory.py                                  # solve(), air05, 5000 iterations
    python benchmarks/memory.py --mode pyscipopt --iterations 2000
    python benchmarks/memory.py --mode pyscipopt --iterations 2000 --collect 10 --trim 10
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import psutil

from instances.bundled import resolve_instance
from lns.api import solve
from lns.core.problem.mip import instance_name, problem_from_scip, read_scip_model
from lns.core.search.result import Callback
from lns.core.solvers.scip.memory import collect_memory_garbage, trim_heap
from lns.core.solvers.scip.subsolver import ScipSubSolver


class MemoryLog(Callback):
    """Prints RSS (and SCIP's allocated memory, when given) every ``every`` iterations."""

    def __init__(self, every: int):
        self.every = every
        self.process = psutil.Process()
        self.began = time.perf_counter()
        self.rss = {0: self.megabytes()}
        print("| iteration | RSS (MB) | change (MB) | SCIP allocated (MB) | seconds |")
        print("|---|---|---|---|---|")
        print(f"| 0 | {self.rss[0]:.1f} | | | 0 |", flush=True)

    def megabytes(self) -> float:
        return self.process.memory_info().rss / 2**20

    def at(self, iteration: int, model=None) -> None:
        if iteration % self.every:
            return
        last = self.rss[max(self.rss)]
        self.rss[iteration] = rss = self.megabytes()
        scip = f"{model.getMemTotal() / 2**20:.1f}" if model is not None else "-"
        print(
            f"| {iteration} | {rss:.1f} | {rss - last:+.1f} | {scip} "
            f"| {time.perf_counter() - self.began:.0f} |",
            flush=True,
        )

    def summary(self) -> str:
        last = max(self.rss)
        if 1000 not in self.rss or last <= 1000:
            return "run more than 1000 iterations, with --every dividing 1000, for the growth rate"
        rate = (self.rss[last] - self.rss[1000]) / ((last - 1000) / 1000)
        return f"RSS growth after the first 1000 iterations: {rate:+.1f} MB per 1000 iterations"

    def on_iteration(self, record) -> None:
        self.at(record.iteration + 1)


def run_solve(args, memory: MemoryLog) -> None:
    solve(
        resolve_instance(args.instance),
        args.selector,
        time_limit=None,
        seed=args.seed,
        iteration_limit=args.iterations,
        iteration_node_limit=args.node_limit,
        callbacks=[memory],
    )


def run_subsolver(args, memory: MemoryLog) -> None:
    path = resolve_instance(args.instance)
    model = read_scip_model(path)
    problem = problem_from_scip(model, instance_name(path), source=path)
    solver = ScipSubSolver(problem, model=model)
    x = _first_solution(solver.solve(time_limit=1e20, seed=args.seed, solution_limit=1))
    integers = problem.integer_indices
    rng = np.random.default_rng(args.seed)
    with solver.session():
        for iteration in range(1, args.iterations + 1):
            fixed = rng.permutation(integers)[: round(len(integers) * (1 - args.free_fraction))]
            outcome = solver.solve(
                time_limit=1e20, seed=iteration, fixed=fixed, start=x, node_limit=args.node_limit
            )
            if outcome.best is not None:
                x = outcome.best.x
            memory.at(iteration, model)


def _first_solution(outcome) -> np.ndarray:
    if outcome.best is None:
        raise SystemExit(f"SCIP found no first solution ({outcome.status})")
    return outcome.best.x


def run_pyscipopt(args, memory: MemoryLog) -> None:
    model = read_scip_model(resolve_instance(args.instance))
    model.setBoolParam("misc/transsolsorig", False)
    variables = model.getVars()
    lower = np.array([v.getLbOriginal() for v in variables])
    upper = np.array([v.getUbOriginal() for v in variables])
    integers = np.array([j for j, v in enumerate(variables) if v.vtype() != "CONTINUOUS"])
    model.setIntParam("limits/solutions", 1)
    model.optimize()
    x = np.round([model.getSolVal(model.getBestSol(), v) for v in variables])
    model.freeTransform()
    model.setIntParam("limits/solutions", -1)
    model.setLongintParam("limits/nodes", args.node_limit)
    rng = np.random.default_rng(args.seed)
    seconds = {"optimize": 0.0, "freeTransform": 0.0, "garbage collection": 0.0, "heap trim": 0.0}
    for iteration in range(1, args.iterations + 1):
        fixed = rng.permutation(integers)[: round(len(integers) * (1 - args.free_fraction))]
        for j in fixed.tolist():
            model.chgVarLb(variables[j], x[j])
            model.chgVarUb(variables[j], x[j])
        model.setIntParam("randomization/randomseedshift", iteration)
        stamps = [time.perf_counter()]
        model.optimize()
        stamps.append(time.perf_counter())
        model.freeTransform()
        stamps.append(time.perf_counter())
        if args.collect and iteration % args.collect == 0:
            collect_memory_garbage(model)
        stamps.append(time.perf_counter())
        if args.trim and iteration % args.trim == 0:
            trim_heap()
        stamps.append(time.perf_counter())
        for name, step in zip(seconds, np.diff(stamps), strict=True):
            seconds[name] += step
        for j in fixed.tolist():
            model.chgVarLb(variables[j], lower[j])
            model.chgVarUb(variables[j], upper[j])
        memory.at(iteration, model)
    print(
        "\nmilliseconds per iteration: "
        + ", ".join(
            f"{name} {1000 * total / args.iterations:.2f}" for name, total in seconds.items()
        )
    )


RUNS = {"solve": run_solve, "subsolver": run_subsolver, "pyscipopt": run_pyscipopt}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(RUNS), default="solve")
    parser.add_argument("--instance", default="air05", help="a bundled instance's name or a path")
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--every", type=int, default=500, help="print RSS every this many")
    parser.add_argument("--node-limit", type=int, default=50, help="per sub-solve")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--selector", default="random", help="mode solve")
    parser.add_argument(
        "--free-fraction",
        type=float,
        default=0.5,
        help="share of integer variables left free (modes subsolver, pyscipopt)",
    )
    parser.add_argument(
        "--collect",
        type=int,
        default=0,
        metavar="K",
        help="mode pyscipopt: collect SCIP's memory garbage after every K-th solve",
    )
    parser.add_argument(
        "--trim",
        type=int,
        default=0,
        metavar="K",
        help="mode pyscipopt: trim the C heap (malloc_trim) after every K-th solve",
    )
    args = parser.parse_args(argv)
    memory = MemoryLog(args.every)
    RUNS[args.mode](args, memory)
    print(f"\n{memory.summary()}")


if __name__ == "__main__":
    main()
