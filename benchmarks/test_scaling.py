"""What an LNS iteration costs as the problem grows: the whole model against the reduced sub-MIP
(:mod:`lns.core.problem.reduced`), the rule between them, and the start of a large problem.

Instances, generated from seed 0 (or MIPLIB files and bundled names for ``rule``):

- ``mis_ba_N``: independent set on a Barabasi-Albert graph with 4 edges per node, ``N`` nodes,
  start: the empty set;
- ``mvc_ba_N``: vertex cover on a Barabasi-Albert graph with 70 edges per node (the CL-LNS
  paper's), ``N`` nodes, start: the greedy cover (:func:`lns.core.search.greedy_start.greedy_point`,
  the LNS's first solution);
- ``sc_R_C``: set cover with ``R`` rows and ``C`` columns at density ``200 / R`` (200 nonzeros
  per column: ``sc_10000_8000`` has 1.6 million), start: every column;
- ``cfl_C_F``: capacitated facility location, ``C`` customers and ``F`` facilities with continuous
  assignments (a MIP), start: SCIP's first solution.

Groups:

- ``iteration``: random LNS, one worker, a fixed neighborhood of 100 integer variables
  (``initial_fraction=100/n, growth=1.0, shrink=None``), 30 iterations (quick: 10) from the start,
  with the sub-problem rule ``whole``, ``reduced`` or ``auto``
  (:class:`lns.core.solvers.scip.subsolver.ScipSubSolver`), each run in a fresh process so that
  its peak resident size is its own. ``extra_info``: the median iteration (wall seconds between
  two iterations' ends), the median time inside the sub-solver (building its model, solving,
  freeing), the loop's share of the iterations' wall time (everything outside the sub-solver:
  selection, fixings, the incumbent's checks of the solutions found, also those it makes
  while the sub-solver waits for them), the peak RSS and the bytes of it per nonzero, in
  all and above the process's size after its imports (the interpreter, numpy, SciPy, PySCIPOpt).
  The runs reach the same kind of result: a feasible incumbent at least as good as the start.
- ``rule``: what :func:`lns.core.solvers.scip.subsolver.prefers_reduced` decides. Per instance and
  fraction of the integer variables (:data:`RULE_FRACTIONS`), the same random neighborhoods
  solved with the whole model and as a reduced problem, one after the other, from SCIP's first
  solution (the start above for generated instances), 2 s each; ``extra_info`` has per fraction
  the free columns' median share of the nonzeros (``share``) and that of the nonzeros a reduced
  problem keeps (``kept``, which the rule reads), the median seconds of each and their median
  ratio. Where both solved a neighborhood to optimality, their objectives agree.
- ``workers``: a portfolio of random LNS workers for 20 s (quick: 6 s) from the start; the
  memory of all its processes together (proportional set sizes: a page that ``k`` processes
  share counts ``1/k`` in each) and of a worker's own pages (unique set size), medians over
  the second half of the run.
- ``cold``: what a call of the loop's kind costs between two sub-solves: a few numpy calls and
  a Python loop, each timed in a loop of its own, right after a sub-solve and after a 2 ms
  sleep (:func:`measure_cold`; ``extra_info``: the median microseconds of each).
- ``start``: a run of random LNS with the default settings on the problem held in memory and read
  from an ``.mps.gz`` file written beforehand (not timed); ``extra_info``: the seconds to the first
  solution and to the end of the start phase (the first iteration's beginning), and that phase's
  share of the budget (30 s; quick: 3 s).

Full mode runs the figures of ``benchmarks/results/scaling.md`` and
``benchmarks/results/sub_problem_rule.md``::

    python -m pytest benchmarks/test_scaling.py --full -k iteration --benchmark-json=scaling.json
    python -m pytest benchmarks/test_scaling.py --full -k rule --benchmark-json=rule.json
    python -m pytest benchmarks/test_scaling.py --full -k start --benchmark-json=start.json
    python -m pytest benchmarks/test_scaling.py --full -k workers --benchmark-json=workers.json
    python -m pytest benchmarks/test_scaling.py --full -k cold --benchmark-json=cold.json
"""

from __future__ import annotations

import itertools
import multiprocessing
import resource
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import psutil
import pytest

from instances.bundled import resolve_instance
from instances.generators import cfl, mis, mvc, sc
from lns.api import solve
from lns.core.problem.mip import Problem, read_problem
from lns.core.problem.reduced import Reducer
from lns.core.search.greedy_start import greedy_point
from lns.core.search.params import SizeParams, SubSolveParams
from lns.core.search.stop import budget
from lns.core.solvers.protocol import SolveStatus
from lns.core.solvers.scip.subsolver import ScipSubSolver
from lns.params import PortfolioParams, SolveParams

#: ``iteration``: (instance, in full mode only).
ITERATION_INSTANCES = [
    ("mis_ba_2000", False),
    ("mis_ba_6000", True),
    ("mis_ba_24000", True),
    ("mis_ba_96000", True),
    ("mis_ba_1000000", True),
    ("sc_10000_8000", True),
    ("cfl_100_400", True),
]
RULES = ("whole", "reduced", "auto")
#: Left out: the whole model of a million variables (minutes per iteration).
SKIPPED = {("mis_ba_1000000", "whole")}
#: ``rule``: the MIPLIB 2017 tuning part (less icir97_tension and neos-3216931-puriri, which
#: have no first solution within 60 s) and generated instances.
RULE_INSTANCES = [
    ("reblock115", False),
    *((name, True) for name in ("assign1-5-8", "drayage-25-23", "mik-250-20-75-4")),
    *((name, True) for name in ("neos-4338804-snowy", "noswot", "supportcase26")),
    *((name, True) for name in ("mis_ba_6000", "mis_ba_24000", "sc_2000_1600", "cfl_50_30")),
    ("mvc_ba_2000", True),
]
#: ``rule``: the fractions of the integer variables free (0.5: the LNS's cap).
RULE_FRACTIONS = (0.02, 0.05, 0.1, 0.2, 0.35, 0.5)
#: ``start``: (instance, in full mode only).
START_INSTANCES = [
    ("mis_ba_2000", False),
    ("mis_ba_96000", True),
    ("sc_10000_8000", True),
    ("mis_ba_1000000", True),
]


def cases(instances: list, *more) -> list:
    """``pytest.param`` of each instance (and each combination with ``more``), those of full
    mode marked ``full``."""
    return [
        pytest.param(name, *rest, marks=[pytest.mark.full] if full else [])
        for (name, full), *rest in itertools.product(instances, *more)
    ]


def make_instance(name: str) -> tuple[Problem, np.ndarray | None]:
    """The instance called ``name`` (see the module's docstring) and its start (``None``: SCIP's
    first solution)."""
    kind = name.split("_")[0] + ("_ba" if name.startswith(("mis_ba_", "mvc_ba_")) else "")
    sizes = name.removeprefix(kind + "_").split("_")
    rng = np.random.default_rng(0)
    if kind == "mis_ba":
        params = mis.MISParams(n_nodes=int(sizes[-1]), graph="barabasi_albert", affinity=4)
        problem = mis.generate(params, rng, name)
        return problem, np.zeros(problem.n_vars)
    if kind == "mvc_ba":
        problem = mvc.generate(mvc.MVCParams(n_nodes=int(sizes[-1])), rng, name)
        return problem, greedy_point(problem)
    if kind == "sc":
        rows, cols = int(sizes[0]), int(sizes[1])
        problem = sc.generate(sc.SCParams(n_rows=rows, n_cols=cols, density=200 / rows), rng, name)
        return problem, np.ones(problem.n_vars)
    if kind == "cfl":
        facilities = cfl.CFLParams(n_customers=int(sizes[0]), n_facilities=int(sizes[1]))
        return cfl.generate(facilities, rng, name), None
    return read_problem(resolve_instance(name)), None


class TimedSubSolver:
    """A :class:`ScipSubSolver` that adds up the wall seconds spent in its ``solve`` calls, less
    those of the loop's ``on_found`` (the incumbent's checks and bookkeeping: the loop's)."""

    name = "scip"

    def __init__(self, solver: ScipSubSolver):
        self.solver = solver
        self.seconds: list[float] = []
        self.total_solve_time = 0.0

    def solve(self, *, on_found=None, **kwargs):
        began, in_loop = time.perf_counter(), 0.0

        def timed_on_found(found) -> None:
            nonlocal in_loop
            called = time.perf_counter()
            try:
                if on_found is not None:
                    on_found(found)
            finally:
                in_loop += time.perf_counter() - called

        try:
            return self.solver.solve(on_found=timed_on_found, **kwargs)
        finally:
            self.seconds.append(time.perf_counter() - began - in_loop)
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
    params = SolveParams(
        size=SizeParams(initial_fraction=free / n_int, growth=1.0, shrink=None, min_size=free),
        sub_solve=SubSolveParams(solver=timed),
    )
    result = solve(
        problem,
        "random",
        budget(time_limit, iterations),
        seed=0,
        params=params,
        initial_solution=start,
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
        "feasible": result.x is not None and problem.check(result.x).feasible,
        "improved_or_kept": not problem.is_better(problem.objective_value(start), result.objective),
    }


def measure_rule(name: str, samples: int, time_limit: float) -> list[dict]:
    """Per fraction of :data:`RULE_FRACTIONS`: ``samples`` random neighborhoods of ``name``,
    each solved whole and reduced (the LNS's SCIP settings, ``time_limit`` seconds each); the
    objectives of the neighborhoods both solved to optimality must agree."""
    problem, start = make_instance(name)
    params = SubSolveParams().sub_mip_params()
    solvers = [ScipSubSolver(problem, params, sub_problem=rule) for rule in ("whole", "reduced")]
    if start is None:
        first = solvers[0].solve(time_limit=60, seed=0, solution_limit=1)
        assert first.best is not None, f"{name}: no first solution"
        start = first.best.x
    reducer, integers = Reducer(problem), problem.integer_indices
    rng, rows = np.random.default_rng(0), []
    for fraction in RULE_FRACTIONS:
        seconds, shares, kept = np.zeros((samples, 2)), [], []
        for sample in range(samples):
            free = rng.choice(integers, max(2, int(fraction * len(integers))), replace=False)
            columns = reducer.free_columns(free)
            shares.append(reducer.nonzeros(columns) / problem.matrix.nnz)
            kept.append(reducer.kept_nonzeros(columns) / problem.matrix.nnz)
            outcomes = []
            for k, solver in enumerate(solvers):
                began = time.perf_counter()
                outcomes.append(
                    solver.solve(time_limit=time_limit, seed=sample, free=free, start=start)
                )
                seconds[sample, k] = time.perf_counter() - began
            check_agreement(problem, start, outcomes)
        rows.append(
            {
                "instance": name,
                "nonzeros": int(problem.matrix.nnz),
                "fraction": fraction,
                "share": float(np.median(shares)),
                "kept": float(np.median(kept)),
                "whole": float(np.median(seconds[:, 0])),
                "reduced": float(np.median(seconds[:, 1])),
                "ratio": float(np.median(seconds[:, 1] / seconds[:, 0])),
            }
        )
    return rows


#: ``workers``: (instance, workers, in full mode only).
WORKER_CASES = [
    ("mis_ba_6000", 2, False),
    ("mis_ba_96000", 2, True),
    ("mis_ba_96000", 4, True),
    ("sc_10000_8000", 4, True),
    ("mis_ba_1000000", 2, True),
]
#: Seconds between two samples of the processes' memory.
SAMPLE_EVERY = 0.25


def measure_workers(name: str, workers: int, time_limit: float) -> dict:
    """A portfolio of ``workers`` random LNS workers on ``name`` from its start: the memory of
    the run's processes together (the sum of their proportional set sizes, which counts a page
    shared by ``k`` processes ``1/k`` times in each) and of a worker's own pages (unique set
    size), sampled every :data:`SAMPLE_EVERY` seconds; the medians over the second half of the
    run (the workers started and searching)."""
    problem, start = make_instance(name)
    samples: list = []
    done = threading.Event()

    def sample() -> None:
        me = psutil.Process()
        while not done.wait(SAMPLE_EVERY):
            try:
                infos = [p.memory_full_info() for p in (me, *me.children(recursive=True))]
            except psutil.Error:  # a worker ended between the listing and the reading
                continue
            if len(infos) > workers:  # the workers (and the resource tracker) are up
                workers_uss = sorted(info.uss for info in infos[1:])[-workers:]
                samples.append((sum(info.pss for info in infos), np.mean(workers_uss)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    params = SolveParams(portfolio=PortfolioParams(workers=workers))
    try:
        result = solve(problem, "random", time_limit, seed=0, params=params, initial_solution=start)
    finally:
        done.set()
        sampler.join()
    assert samples, f"{name}: no sample with every worker up"
    steady = np.array(samples[len(samples) // 2 :])
    nonzeros = int(problem.matrix.nnz)
    return {
        "instance": name,
        "workers": workers,
        "nonzeros": nonzeros,
        "total_pss": float(np.median(steady[:, 0])),
        "worker_uss": float(np.median(steady[:, 1])),
        "total_bytes_per_nonzero": float(np.median(steady[:, 0])) / nonzeros,
        "iterations": len(result.iterations),
        "feasible": result.x is not None and problem.check(result.x).feasible,
    }


#: ``cold``: the calls timed, each a few microseconds when run back to back.
COLD_PROBES = {
    "python loop (100 additions)": lambda rng, candidates: sum(i for i in range(100)),
    "np.empty(100)": lambda rng, candidates: np.empty(100),
    "rng.random(100)": lambda rng, candidates: rng.random(100),
    "rng.integers(n, size=100)": lambda rng, candidates: rng.integers(len(candidates), size=100),
    "random selector's draw": lambda rng, candidates: np.sort(
        rng.choice(candidates, size=100, replace=False)
    ),
}
#: ``cold``: what runs before each timed call.
COLD_BEFORE = ("nothing", "a sub-solve", "a 2 ms sleep")


def measure_cold(name: str, repeats: int) -> dict:
    """Median microseconds of each call of :data:`COLD_PROBES` in the calling thread, right
    after each of :data:`COLD_BEFORE`: nothing (the call in a loop of its own), a sub-solve of a
    random 100-variable neighborhood of ``name`` from its start (SCIP in the sub-solver's
    worker thread, as in the loop), a sleep of 2 ms."""
    problem, start = make_instance(name)
    rng, candidates = np.random.default_rng(0), problem.integer_indices
    solver = ScipSubSolver(problem, sub_problem="reduced")

    def sub_solve() -> None:
        free = np.sort(rng.choice(candidates, size=100, replace=False))
        solver.solve(time_limit=5.0, seed=0, free=free, start=start)

    runs_before = (lambda: None, sub_solve, lambda: time.sleep(0.002))
    before = dict(zip(COLD_BEFORE, runs_before, strict=True))
    medians: dict = {}
    for probe, call in COLD_PROBES.items():
        for what, run_before in before.items():
            seconds = []
            for _ in range(repeats):
                run_before()
                began = time.perf_counter()
                call(rng, candidates)
                seconds.append(time.perf_counter() - began)
            medians[f"{probe} after {what}"] = 1e6 * float(np.median(seconds))
    solver.close()
    return {"instance": name, "repeats": repeats, "median_microseconds": medians}


#: How ``start`` hands a problem to :func:`lns.solve`.
SOURCES = ("memory", "file")


def measure_start(name: str, source: str, time_limit: float) -> dict:
    """One default run on ``name``, the problem given in memory (``source="memory"``) or as a
    file (``"file"``): when its first solution came and when its start phase ended."""
    problem, _ = make_instance(name)
    with tempfile.TemporaryDirectory() as folder:
        instance = problem if source == "memory" else problem.write(Path(folder) / f"{name}.mps.gz")
        result = solve(instance, "random", time_limit, seed=0)
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


def run_isolated(task: tuple, function=measure):
    """``function(*task)`` (:func:`measure`) in a fresh process (its peak RSS is then the run's
    own)."""
    context = multiprocessing.get_context("spawn")
    # Not a multiprocessing.Pool: its processes are daemons, which cannot start a portfolio.
    with ProcessPoolExecutor(1, mp_context=context) as executor:
        return executor.submit(function, *task).result()


def measured_once(benchmark, task: tuple, function) -> dict:
    """``function(*task)`` run once in a fresh process (:func:`run_isolated`) and timed by
    ``benchmark``; its row, also put in ``extra_info``."""
    row = benchmark.pedantic(run_isolated, args=(task, function), rounds=1, iterations=1)
    benchmark.extra_info.update(row)
    return row


def check_agreement(problem: Problem, start: np.ndarray, outcomes: list) -> None:
    """Where every sub-solve of one neighborhood was solved to optimality, they reached the same
    objective."""
    if all(o.status is SolveStatus.OPTIMAL for o in outcomes):
        start_value = problem.objective_value(start)
        values = [o.best.objective if o.best is not None else start_value for o in outcomes]
        assert np.allclose(values, values[0], rtol=1e-6, atol=1e-6), values


@pytest.mark.parametrize(
    "name, rule",
    [case for case in cases(ITERATION_INSTANCES, RULES) if tuple(case.values) not in SKIPPED],
)
def test_iteration(benchmark, mode, name, rule):
    benchmark.group = f"iteration: {name}"
    iterations = mode.pick(10, 30)
    row = measured_once(benchmark, (name, rule, 100, iterations, 300.0), measure)
    assert row["iterations"] == iterations and row["feasible"] and row["improved_or_kept"]


@pytest.mark.parametrize("name", cases(RULE_INSTANCES))
def test_rule(benchmark, mode, name):
    benchmark.group = "rule: whole model or reduced sub-MIP"
    rows = benchmark.pedantic(
        measure_rule, args=(name, mode.pick(1, 3), 2.0), rounds=1, iterations=1
    )
    benchmark.extra_info["fractions"] = rows
    assert all(np.isfinite(row["ratio"]) for row in rows)


@pytest.mark.parametrize(
    "name, workers",
    [pytest.param(n, w, marks=[pytest.mark.full] if full else []) for n, w, full in WORKER_CASES],
)
def test_workers(benchmark, mode, name, workers):
    benchmark.group = f"workers: {name}"
    row = measured_once(benchmark, (name, workers, mode.pick(6.0, 20.0)), measure_workers)
    assert row["feasible"] and row["total_pss"] > 0


def test_cold(benchmark, mode):
    benchmark.group = "cold: the loop's calls between two sub-solves"
    task = (mode.pick("mis_ba_2000", "mis_ba_6000"), mode.pick(20, 300))
    row = measured_once(benchmark, task, measure_cold)
    assert len(row["median_microseconds"]) == len(COLD_PROBES) * len(COLD_BEFORE)


@pytest.mark.parametrize("name, source", cases(START_INSTANCES, SOURCES))
def test_start(benchmark, mode, name, source):
    benchmark.group = f"start: {name}"
    row = measured_once(benchmark, (name, source, mode.pick(3.0, 30.0)), measure_start)
    assert row["first_solution"] <= row["start_phase"]
