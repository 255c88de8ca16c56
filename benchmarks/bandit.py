"""Bandit policies of ``selector=adaptive`` side by side: roulette wheel, UCB1, Thompson sampling.

Every policy runs with the same (default) arms, seed and time limit on each instance; the
runs go in separate processes, ``--jobs`` at a time, instance by instance, so that the
policies compared on one instance run at about the same time and share the machine's load.
The score is the primal integral (Berthold 2013, :func:`lns.core.search.metrics.primal_integral`)
against the best known value: the ``.solu`` file beside the instance, else the best value any
run found. The table gives each run's primal integral, final objective and the arm that was
played most, then per policy the mean and shifted geometric mean (shift 1) of the primal
integrals and the number of instances it won (ties counted for each). Rewards are per second
(the default), as a user's run has them.

Example (about 6 minutes on 2 cores)::

    PYTHONPATH=$PWD lns-generate problem=mvc size=small n=1 seed=5 out_dir=data/bandit_mvc
    PYTHONPATH=$PWD lns-generate problem=sc size=small n=1 seed=5 out_dir=data/bandit_sc
    PYTHONPATH=$PWD python benchmarks/bandit.py --time-limit 30 --jobs 2 \\
        --instances air05 seymour rout timtab1 data/bandit_mvc/mvc_small_0000.mps.gz \\
        data/bandit_sc/sc_small_0000.mps.gz --out benchmarks/results/bandit.json
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
from pathlib import Path

import numpy as np

from lns.api import solve
from lns.core.problem.solu_file import known_objective
from lns.core.search.metrics import best_found, primal_integral, shifted_geometric_mean
from lns.core.search.result import Callback

POLICIES = ("roulette", "ucb", "thompson")


class ArmCounter(Callback):
    """Counts the arms the adaptive selector played."""

    def __init__(self):
        self.counts: collections.Counter[str] = collections.Counter()

    def on_selection(self, state, size, neighborhood) -> None:
        self.counts[neighborhood.info.get("arm", "?")] += 1


def run_one(task: tuple[str, str, float, int]) -> dict:
    """One run of ``selector=adaptive`` with ``policy``; its trajectory and arm counts."""
    instance, policy, time_limit, seed = task
    arms = ArmCounter()
    result = solve(
        instance,
        "adaptive",
        time_limit=time_limit,
        seed=seed,
        selector_options={"policy": policy},
        callbacks=[arms],
    )
    assert result.problem is not None, "solve() gives its result the problem"
    return {
        "instance": instance,
        "policy": policy,
        "objective": result.objective,
        "sense": result.problem.sense,
        "trajectory": [list(step) for step in result.trajectory],
        "iterations": len(result.iterations),
        "arms": dict(arms.counts),
    }


def run_all(instances: list[str], policies, time_limit: float, seed: int, jobs: int) -> list:
    tasks = [(instance, policy, time_limit, seed) for instance in instances for policy in policies]
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, maxtasksperchild=1) as pool:
        return pool.map(run_one, tasks, chunksize=1)


def score(runs: list, time_limit: float) -> dict:
    """Primal integral per (instance, policy), against the best known or best found value."""
    by_instance = collections.defaultdict(list)
    for run in runs:
        by_instance[run["instance"]].append(run)
    integrals = {}
    for instance, group in by_instance.items():
        reference = known_objective(instance) if Path(instance).exists() else None
        if reference is None:
            reference = best_found([run["objective"] for run in group], group[0]["sense"])
        for run in group:
            run["reference"] = reference
            integrals[instance, run["policy"]] = primal_integral(
                [tuple(step) for step in run["trajectory"]], reference, time_limit
            )
    return integrals


def table(runs: list, integrals: dict, policies) -> str:
    instances = list(dict.fromkeys(run["instance"] for run in runs))
    lines = [f"{'instance':<28}" + "".join(f"{p:>30}" for p in policies)]
    for instance in instances:
        cells = []
        for run in (
            r for p in policies for r in runs if r["instance"] == instance and r["policy"] == p
        ):
            top = max(run["arms"], key=run["arms"].get) if run["arms"] else "-"
            objective = "-" if run["objective"] is None else f"{run['objective']:.6g}"
            cells.append(f"{integrals[instance, run['policy']]:7.2f} {objective:>11} {top:>10}")
        lines.append(f"{Path(instance).name[:27]:<28}" + "".join(f"{c:>30}" for c in cells))
    matrix = np.array([[integrals[i, p] for p in policies] for i in instances])
    wins = (matrix <= matrix.min(axis=1, keepdims=True) + 1e-9).sum(axis=0)
    sgm = [shifted_geometric_mean(column) for column in matrix.T]
    for label, values in (
        ("mean primal integral", matrix.mean(axis=0)),
        ("sgm (shift 1)", sgm),
        ("wins", wins),
    ):
        lines.append(f"{label:<28}" + "".join(f"{v:>30.2f}" for v in values))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--instances", nargs="+", required=True, help="files or names of bundled MIPLIB instances"
    )
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, help="JSON file for the runs and the table")
    args = parser.parse_args()
    instances = [_resolve(name) for name in args.instances]
    runs = run_all(instances, args.policies, args.time_limit, args.seed, args.jobs)
    integrals = score(runs, args.time_limit)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {"arguments": vars(args) | {"out": str(args.out)}, "runs": runs},
                indent=1,
                default=str,
            )
        )
    print(table(runs, integrals, args.policies))


def _resolve(name: str) -> str:
    """A file as given, or a bundled MIPLIB instance by name (``air05``)."""
    if Path(name).exists():
        return name
    bundled = sorted((Path(__file__).parents[1] / "instances" / "miplib").glob(f"{name}.*"))
    if not bundled:
        raise SystemExit(f"bandit benchmark: no instance file or bundled instance '{name}'")
    return str(bundled[0])


if __name__ == "__main__":
    main()
