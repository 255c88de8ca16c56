"""Hot re-solves of the Local Branching LP after a new incumbent: DistanceLP variants side by side.

Rerun (about 10 minutes on 2 busy cores; the results in ``benchmarks/results/lb_relax_lp.md``)::

    lns-generate problem=mis size=small n=1 seed=5 out_dir=/tmp/mis6000
    lns-generate problem=mis size=small params.n_nodes=1500 n=1 seed=5 out_dir=/tmp/mis1500
    git show 2d079f7:heuristics/lb_relax.py > /tmp/lb_relax_before.py
    B="python benchmarks/lb_relax_lp.py --before /tmp/lb_relax_before.py"
    $B --repeats 4 --instances air05 seymour /tmp/mis1500/mis_small_0000.mps.gz
    $B --repeats 1 --instances /tmp/mis6000/mis_small_0000.mps.gz
    $B --free 0.2 --variants before before-devex after \
        --instances /tmp/mis6000/mis_small_0000.mps.gz

For each instance, a sequence of incumbents: SCIP's best solution within ``--initial-time``
seconds, then the improving solutions of sub-MIPs (a random ``--free`` share of the integer
variables free, 20 nodes each) until there are ``--incumbents``. Each variant builds one
:class:`heuristics.lb_relax.DistanceLP` (k = ``--fraction`` of the integer variables), solves it
cold at the first incumbent, then hot at each next one, each followed by one solve with k grown
by 2 % (the incumbent unchanged, as after an LNS iteration without improvement). The variants'
solves alternate, one of each in turn (in reverse order every other of ``--repeats`` rounds);
times are wall-clock seconds of ``DistanceLP.solve`` (changes of the LP included), single
thread, medians over the hot solves of all rounds ("ratio": to ``before``); "same objective"
compares every solve with the first variant's.

Variants: ``before`` (the DistanceLP of ``--before``: the distance row changed in place,
HiGHS's defaults), with HiGHS options for the hot solves (``-devex``: Devex pricing,
``-primal``: primal simplex, ``-presolve-off``), ``before-basic-slack`` (changed in place, then
HiGHS handed the last basis with the row's slack made basic: an alien basis), ``after`` (this
checkout's DistanceLP: the row deleted and added anew where it bound) and ``after-devex``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from unittest import mock

import highspy
import numpy as np
from lp_solvers import load_module

from heuristics import lb_relax
from heuristics.lb_relax import DistanceLP
from heuristics.local_branching import Distance
from instances.bundled import resolve_instance
from lns.core.problem.mip import read_problem
from lns.core.solvers.lp import WarmLP
from lns.core.solvers.scip.subsolver import ScipSubSolver

DEVEX = {"simplex_dual_edge_weight_strategy": 1}
#: Variant name: (which DistanceLP, HiGHS options set after the cold solve, or ``basic_slack``).
VARIANTS: dict[str, tuple[str, dict]] = {
    "before": ("before", {}),
    "before-devex": ("before", DEVEX),
    "before-primal": ("before", {"simplex_strategy": 4}),
    "before-presolve-off": ("before", {"presolve": "off"}),
    "before-basic-slack": ("before", {"basic_slack": True}),
    "after": ("after", {}),
    "after-devex": ("after", DEVEX),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["air05", "seymour"])
    parser.add_argument("--before", help="an earlier heuristics/lb_relax.py")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument(
        "--fraction", type=float, default=0.2, help="k as a fraction of the integer variables"
    )
    parser.add_argument("--incumbents", type=int, default=5)
    parser.add_argument(
        "--free", type=float, default=0.5, help="share of integer variables free in the sub-MIPs"
    )
    parser.add_argument(
        "--initial-time", type=float, default=5.0, help="seconds of SCIP for the first incumbent"
    )
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    if args.before is None:
        args.variants = [v for v in args.variants if VARIANTS[v][0] != "before"]
    return args


class VariantLP(WarmLP):
    """A :class:`WarmLP` that sets HiGHS ``options`` after its first solve and counts iterations.

    With the option ``basic_slack``, a solve after changed coefficients of a row starts from the
    last basis with that row's slack made basic (an alien basis, which HiGHS repairs).
    """

    def __init__(self, *args, options: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.options = dict(options)
        self.basic_slack = self.options.pop("basic_slack", False)
        self.iterations, self.solved = 0, False
        self.changed_rows: set[int] = set()

    def change_coefficients(self, row, columns, values):
        super().change_coefficients(row, columns, values)
        if len(columns):
            self.changed_rows.add(int(row))

    def solve(self, *args, **kwargs):
        if self.basic_slack and self.changed_rows:
            self.make_slacks_basic(sorted(self.changed_rows))
        self.changed_rows = set()
        solution = super().solve(*args, **kwargs)
        self.iterations = self._highs.getInfo().simplex_iteration_count
        if not self.solved:
            for name, value in self.options.items():
                self._highs.setOptionValue(name, value)
            self.solved = True
        return solution

    def make_slacks_basic(self, rows: list[int]) -> None:
        basis = self._highs.getBasis()
        if basis.valid:
            status = basis.row_status
            for i in rows:
                status[i] = highspy.HighsBasisStatus.kBasic
            basis.row_status, basis.alien = status, True
            self._highs.setBasis(basis)


def incumbents(problem, count: int, initial_time: float, free: float) -> list[np.ndarray]:
    """SCIP's best solution within ``initial_time`` s, then improving ones of random sub-MIPs."""
    solver = ScipSubSolver(problem)
    found = solver.solve(time_limit=initial_time, seed=0).found
    xs = [found[-1].x]
    rng = np.random.default_rng(0)
    integers = problem.integer_indices
    for seed in range(40):
        if len(xs) >= count:
            break
        fixed = np.sort(rng.choice(integers, round((1 - free) * len(integers)), replace=False))
        outcome = solver.solve(time_limit=10, seed=seed, fixed=fixed, start=xs[-1], node_limit=20)
        xs.extend(s.x for s in outcome.found)
    solver.close()
    return xs[:count]


def build(problem, variant: str, before) -> DistanceLP:
    """The DistanceLP of ``variant``, on a :class:`VariantLP` with its options."""
    kind, options = VARIANTS[variant]
    module = before if kind == "before" else lb_relax
    with mock.patch.object(module, "WarmLP", functools.partial(VariantLP, options=options)):
        return module.DistanceLP(problem)


def run(problem, variants: list[str], before, xs, k: int) -> dict[str, dict[str, list]]:
    """Seconds, iterations and objectives of each variant's cold, hot and k-grown solves.

    Every variant holds its own LP; their solves alternate, one solve of each in turn.
    """
    lps = {variant: build(problem, variant, before) for variant in variants}
    keys = ("cold", "hot", "grown", "iterations", "objective")
    out: dict[str, dict[str, list]] = {v: {key: [] for key in keys} for v in variants}
    for i, x in enumerate(xs):
        distance = Distance.to(problem, x)
        for key, radius in [("cold" if i == 0 else "hot", k), ("grown", k * 1.02)]:
            for variant, lp in lps.items():
                began = time.perf_counter()
                solution = lp.solve(distance, radius, None)
                out[variant][key].append(time.perf_counter() - began)
                out[variant]["objective"].append(solution.objective)
                if key == "hot":
                    assert isinstance(lp.lp, VariantLP)
                    out[variant]["iterations"].append(lp.lp.iterations)
    return out


def rows_of(name: str, results: dict[str, list[dict]]) -> list[str]:
    """The table rows of one instance."""
    first = next(iter(results.values()))[0]["objective"]
    base = results.get("before", results.get("after"))
    assert base is not None
    reference = statistics.median(t for r in base for t in r["hot"])
    lines = []
    for variant, runs in results.items():
        hot = statistics.median(t for r in runs for t in r["hot"])
        same = all(np.allclose(r["objective"], first, rtol=1e-7, atol=1e-6) for r in runs)
        lines.append(
            f"| {name} | {variant} | {statistics.median(t for r in runs for t in r['cold']):.3f} | "
            f"{hot:.4f} | {hot / reference:.2f} | "
            f"{statistics.median(t for r in runs for t in r['grown']):.4f} | "
            f"{statistics.median(i for r in runs for i in r['iterations']):.0f} | {same} |"
        )
    return lines


def main(argv=None):
    args = parse_args(argv)
    before = load_module(args.before, "lb_relax_before") if args.before else None
    table = [
        "| instance | variant | cold (s) | hot, new incumbent (s) | ratio | k + 2 % (s) "
        "| iterations | same objective |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for path in args.instances:
        problem = read_problem(resolve_instance(path))
        xs = incumbents(problem, args.incumbents, args.initial_time, args.free)
        k = max(2, int(round(args.fraction * len(problem.integer_indices))))
        print(
            f"{problem.name}: {problem.n_rows} rows, {problem.n_vars} columns, k = {k}, "
            f"incumbents {[problem.objective_value(x) for x in xs]}",
            flush=True,
        )
        results: dict[str, list[dict]] = {v: [] for v in args.variants}
        for round_ in range(args.repeats):
            order = args.variants[:: 1 if round_ % 2 == 0 else -1]
            for variant, out in run(problem, order, before, xs, k).items():
                results[variant].append(out)
        table += rows_of(f"{problem.name} ({problem.n_rows} × {problem.n_vars})", results)
        print("\n".join(table[-len(args.variants) :]), flush=True)
    print("\n".join(table))


if __name__ == "__main__":
    main()
