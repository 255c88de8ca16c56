"""What an LNS iteration costs as the problem grows, with the whole model and the reduced sub-MIP.

Random LNS, one worker, a fixed neighborhood of ``--free`` integer variables
(``initial_fraction=free/n, growth=1.0, shrink=None``), ``--iterations`` iterations from a given
start, once per sub-problem rule (``--rules``: ``whole``, ``reduced``, ``auto``; see
:class:`lns.core.solvers.scip.subsolver.ScipSubSolver`). Each run is a fresh process, so that its
peak resident size is its own. Reported per instance and rule: the median iteration (wall seconds
between two iterations' ends), the median time inside the sub-solver (building its model,
solving, freeing), the loop's own share of the iterations' wall time (everything outside the
sub-solver: selection, fixings, the incumbent's checks), the peak RSS and the bytes of it per
nonzero of the constraint matrix, in all and above the process's size after its imports (the
interpreter, numpy, SciPy, PySCIPOpt: about 60 MB).

Instances (``--instances``), generated in each run from seed 0:

- ``mis_ba_N``: independent set on a Barabasi-Albert graph with 4 edges per node, ``N`` nodes,
  start: the empty set;
- ``sc_R_C``: set cover with ``R`` rows and ``C`` columns at density ``200 / R`` (200
  nonzeros per column: ``sc_10000_8000`` has 1.6 million), start: every column;
- ``cfl_C_F``: capacitated facility location, ``C`` customers and ``F`` facilities with
  continuous assignments (a MIP), start: SCIP's first solution.

    python benchmarks/scaling.py                                  # the default table
    python benchmarks/scaling.py --instances mis_ba_6000 mis_ba_96000 --rules whole reduced
    python benchmarks/scaling.py --instances mis_ba_1000000 --rules reduced --out results.json

``--rule`` measures instead what :func:`lns.core.solvers.scip.subsolver.prefers_reduced` decides:
per instance (generated names as above, or MIPLIB files and bundled names) and neighborhood
fraction, the same random neighborhoods solved with the whole model and as a reduced problem,
one after the other, from SCIP's first solution (the start above for generated instances); the
median wall seconds of each, the free columns' median share of the nonzeros and the median
ratio reduced / whole::

    python benchmarks/scaling.py --rule --instances reblock115 noswot mis_ba_6000 sc_2000_1600

``--start`` measures the start instead: a run of random LNS with the default settings and a
budget of ``--time-limit`` seconds, on the problem held in memory and read from an ``.mps.gz``
file written beforehand (the time to write it is not counted); reported are the seconds to the
first solution and to the end of the start phase (the first LNS iteration's beginning), that
phase's share of the budget and the iterations::

    python benchmarks/scaling.py --start --instances mis_ba_96000 sc_10000_8000 --time-limit 30
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from instances.bundled import resolve_instance
from instances.generators import cfl, mis, sc
from lns.api import solve
from lns.core.problem.mip import Problem, read_problem
from lns.core.problem.reduced import Reducer
from lns.core.search.config import LNSConfig
from lns.core.solvers.scip.subsolver import ScipSubSolver

DEFAULT_INSTANCES = (
    "mis_ba_6000",
    "mis_ba_24000",
    "mis_ba_96000",
    "sc_10000_8000",
    "cfl_200_100",
)


def make_instance(name: str) -> tuple[Problem, np.ndarray | None]:
    """The instance called ``name`` (see the module's docstring) and its start (``None``: SCIP's
    first solution)."""
    kind = "mis_ba" if name.startswith("mis_ba_") else name.split("_")[0]
    sizes = name.removeprefix(kind + "_").split("_")
    rng = np.random.default_rng(0)
    if kind == "mis_ba":
        params = mis.MISParams(n_nodes=int(sizes[-1]), graph="barabasi_albert", affinity=4)
        problem = mis.generate(params, rng, name)
        return problem, np.zeros(problem.n_vars)
    if kind == "sc":
        rows, cols = int(sizes[0]), int(sizes[1])
        problem = sc.generate(sc.SCParams(n_rows=rows, n_cols=cols, density=200 / rows), rng, name)
        return problem, np.ones(problem.n_vars)
    if kind == "cfl":
        facilities = cfl.CFLParams(n_customers=int(sizes[0]), n_facilities=int(sizes[1]))
        return cfl.generate(facilities, rng, name), None
    return read_problem(resolve_instance(name)), None


class TimedSubSolver:
    """A :class:`ScipSubSolver` that adds up the wall seconds spent in its ``solve`` calls."""

    name = "scip"

    def __init__(self, solver: ScipSubSolver):
        self.solver = solver
        self.seconds: list[float] = []
        self.total_solve_time = 0.0

    def solve(self, **kwargs):
        began = time.perf_counter()
        try:
            return self.solver.solve(**kwargs)
        finally:
            self.seconds.append(time.perf_counter() - began)
            self.total_solve_time = self.solver.total_solve_time

    def stop(self) -> None:
        self.solver.stop()

    def session(self):
        return self.solver.session()


def measure(name: str, rule: str, free: int, iterations: int, time_limit: float) -> dict:
    """One run (in its own process): the iteration statistics of ``rule`` on ``name``."""
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # the imports'
    problem, start = make_instance(name)
    if start is None:
        first = ScipSubSolver(problem).solve(time_limit=time_limit, seed=0, solution_limit=1)
        assert first.best is not None, f"{name}: no first solution"
        start = first.best.x
    timed = TimedSubSolver(ScipSubSolver(problem, sub_problem=rule))
    n_int = len(problem.integer_indices)
    result = solve(
        problem,
        "random",
        sub_solver=timed,
        initial_solution=start,
        iteration_limit=iterations,
        time_limit=time_limit,
        seed=0,
        initial_fraction=free / n_int,
        growth=1.0,
        shrink=None,
        min_size=free,
    )
    ends = [record.time for record in result.iterations]
    walls = np.diff(ends)
    inside = np.array(timed.seconds[-len(walls) :]) if len(walls) else np.zeros(0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "instance": name,
        "rule": rule,
        "variables": problem.n_vars,
        "nonzeros": int(problem.matrix.nnz),
        "iterations": len(result.iterations),
        "median_iteration": float(np.median(walls)) if len(walls) else float("nan"),
        "median_sub_solver": float(np.median(inside)) if len(inside) else float("nan"),
        "loop_share": float(1 - inside.sum() / walls.sum()) if len(walls) else float("nan"),
        "peak_rss": peak,
        "bytes_per_nonzero": peak / max(1, problem.matrix.nnz),
        "data_bytes_per_nonzero": (peak - baseline) / max(1, problem.matrix.nnz),
        "objective": result.objective,
    }


RULE_FRACTIONS = (0.02, 0.05, 0.1, 0.2, 0.35)


def measure_rule(name: str, samples: int, time_limit: float) -> list[dict]:
    """Per fraction of :data:`RULE_FRACTIONS`: ``samples`` random neighborhoods of ``name``,
    each solved whole and reduced (the LNS's SCIP settings, ``time_limit`` seconds each)."""
    problem, start = make_instance(name)
    params = LNSConfig().sub_solver_params()
    solvers = [ScipSubSolver(problem, params, sub_problem=rule) for rule in ("whole", "reduced")]
    if start is None:
        first = solvers[0].solve(time_limit=60, seed=0, solution_limit=1)
        assert first.best is not None, f"{name}: no first solution"
        start = first.best.x
    reducer, integers = Reducer(problem), problem.integer_indices
    rng, rows = np.random.default_rng(0), []
    for fraction in RULE_FRACTIONS:
        seconds, shares = np.zeros((samples, 2)), []
        for sample in range(samples):
            free = rng.choice(integers, max(2, int(fraction * len(integers))), replace=False)
            fixed = np.setdiff1d(integers, free)
            shares.append(reducer.nonzeros(reducer.free_columns(fixed)) / problem.matrix.nnz)
            for k, solver in enumerate(solvers):
                began = time.perf_counter()
                solver.solve(time_limit=time_limit, seed=sample, fixed=fixed, start=start)
                seconds[sample, k] = time.perf_counter() - began
        rows.append(
            {
                "instance": name,
                "nonzeros": int(problem.matrix.nnz),
                "fraction": fraction,
                "share": float(np.median(shares)),
                "whole": float(np.median(seconds[:, 0])),
                "reduced": float(np.median(seconds[:, 1])),
                "ratio": float(np.median(seconds[:, 1] / seconds[:, 0])),
            }
        )
    return rows


def rule_table(rows: list[dict]) -> str:
    """The rule measurements as a Markdown table."""
    lines = [
        "| instance | nonzeros | fraction | share of nonzeros | whole (s) | reduced (s) "
        "| reduced / whole |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['instance']} | {r['nonzeros']:,} | {r['fraction']:g} | {r['share']:.3f} "
            f"| {r['whole']:.4f} | {r['reduced']:.4f} | {r['ratio']:.2f} |"
        )
    return "\n".join(lines)


#: How ``--start`` hands a problem to :func:`lns.solve`.
SOURCES = ("memory", "file")


def measure_start(name: str, source: str, time_limit: float) -> dict:
    """One default run on ``name``, the problem given in memory (``source="memory"``) or as a
    file (``"file"``): when its first solution came and when its start phase ended."""
    problem, _ = make_instance(name)
    with tempfile.TemporaryDirectory() as folder:
        instance = problem if source == "memory" else problem.write(Path(folder) / f"{name}.mps.gz")
        result = solve(instance, "random", time_limit=time_limit, seed=0)
    first = result.trajectory[0][0] if result.trajectory else float("nan")
    record = result.iterations[0] if result.iterations else None
    start_phase = record.time - record.select_time - record.solve_time if record else result.runtime
    return {
        "instance": name,
        "source": source,
        "nonzeros": int(problem.matrix.nnz),
        "first_solution": first,
        "start_phase": start_phase,
        "share": start_phase / time_limit,
        "iterations": len(result.iterations),
        "objective": result.objective,
    }


def start_table(rows: list[dict]) -> str:
    """The start measurements as a Markdown table."""
    lines = [
        "| instance | given as | nonzeros | first solution (s) | start phase (s) | share of budget "
        "| iterations | objective |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['instance']} | {r['source']} | {r['nonzeros']:,} | {r['first_solution']:.2f} "
            f"| {r['start_phase']:.2f} | {r['share']:.1%} | {r['iterations']} | {r['objective']} |"
        )
    return "\n".join(lines)


def run_isolated(task: tuple, function=measure):
    """``function(*task)`` (:func:`measure`) in a fresh process (its peak RSS is then the run's
    own)."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(function, task)


def table(rows: list[dict]) -> str:
    """The runs as a Markdown table."""
    lines = [
        "| instance | variables | nonzeros | rule | median iteration (s) | median sub-solver (s) "
        "| loop share | peak RSS (MB) | bytes / nonzero | above the imports, bytes / nonzero |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['instance']} | {r['variables']:,} | {r['nonzeros']:,} | {r['rule']} "
            f"| {r['median_iteration']:.4f} | {r['median_sub_solver']:.4f} "
            f"| {r['loop_share']:.1%} | {r['peak_rss'] / 2**20:,.0f} "
            f"| {r['bytes_per_nonzero']:,.0f} | {r['data_bytes_per_nonzero']:,.0f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=list(DEFAULT_INSTANCES))
    parser.add_argument("--rules", nargs="+", default=["whole", "reduced"])
    parser.add_argument("--free", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--out", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--rule", action="store_true", help="measure the whole/reduced rule")
    parser.add_argument("--samples", type=int, default=3, help="neighborhoods per fraction")
    parser.add_argument("--start", action="store_true", help="measure the start phase")
    args = parser.parse_args(argv)
    if args.start:
        tasks = [(name, source, args.time_limit) for name in args.instances for source in SOURCES]
        rows = [run_isolated(task, measure_start) for task in tasks]
        text = start_table(rows)
    elif args.rule:
        rows = [row for name in args.instances for row in measure_rule(name, args.samples, 2.0)]
        text = rule_table(rows)
    else:
        rows = []
        for name in args.instances:
            for rule in args.rules:
                rows.append(run_isolated((name, rule, args.free, args.iterations, args.time_limit)))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
        ratio = _median_ratio(rows)
        text = f"{table(rows)}\n\nmedian of the per-instance ratios whole/reduced: {ratio}"
    print(text)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


def _median_ratio(rows: list[dict]) -> str:
    by = {(r["instance"], r["rule"]): r["median_iteration"] for r in rows}
    ratios = [
        by[(i, "whole")] / by[(i, "reduced")]
        for i, rule in by
        if rule == "reduced" and (i, "whole") in by
    ]
    return f"{statistics.median(ratios):.1f}x" if ratios else "-"


if __name__ == "__main__":
    main()
