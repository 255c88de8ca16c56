"""CL-LNS start-up: time from the start of a run to its first learned neighborhood, part by part.

Two measurements on one instance (e.g. the paper's 6000-node independent set:
``lns-generate problem=mis size=small n=1 seed=123 out_dir=/tmp/mis6000``):

1. **End to end, before and after**: for each source tree given (``--trees``; the first is
   "before", e.g. main's checkout, the second "after"), a fresh Python process imports
   ``lns.api``, then times from ``import learning.selector`` (which ``solve(..., "cl_lns")``
   does inside the run) to the first CL-LNS neighborhood of
   ``solve(instance, CLLNS(checkpoint))``;
   it also reports when the first solution was found, the median selection time of the calls
   that computed scores, and the median sub-solve time. The trees run alternately,
   ``--repeats`` times each, so that both see the same machine load; medians are printed.
2. **Parts** (this tree): file read by SCIP, the problem's arrays from SCIP's model, import of the
   selector, checkpoint read, root LP and static features,
   graph cache, dynamic features, inference (numpy), one sub-solve of a CL-LNS neighborhood of
   20% of the integer variables at the loop's 5 s limit; and the torch path it replaces: import
   of torch and torch-geometric, checkpoint load, inference of the torch model (1 thread).

Example (as reported in the closing notes)::

    python benchmarks/cl_lns_startup.py /tmp/mis6000/mis_small_0000.mps.gz \\
        --trees /work/main . --repeats 3 --start first
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

END_TO_END = r"""
import json, sys, time
import numpy as np
from lns.api import solve
began = time.perf_counter()
from learning.selector import CLLNS
first = []

class Timed(CLLNS):
    def __call__(self, state, size, rng):
        neighborhood = super().__call__(state, size, rng)
        if not first:
            first.append(time.perf_counter())
        return neighborhood

result = solve(sys.argv[1], Timed(sys.argv[3]), time_limit=float(sys.argv[2]), seed=0,
               start=sys.argv[4])
scored = [r.select_time for r in result.iterations if r.select_time > 1e-3]
print(json.dumps({"first_neighborhood": first[0] - began if first else None,
                  "first_solution": result.trajectory[0][0] if result.trajectory else None,
                  "selection": float(np.median(scored)) if scored else None,
                  "subsolve": (float(np.median([r.solve_time for r in result.iterations]))
                               if result.iterations else None),
                  "iterations": len(result.iterations)}))
"""


def end_to_end(
    instance: str, trees: list, repeats: int, time_limit: float, checkpoint: str, start: str
) -> dict:
    """Median of each reported time per tree, the trees run alternately, with the LNS start
    ``start`` (``LNSConfig.start``)."""
    runs: dict[str, list[dict]] = {tree: [] for tree in trees}
    for _ in range(repeats):
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
            out = subprocess.run(
                [sys.executable, "-c", END_TO_END, instance, str(time_limit), checkpoint, start],
                env=env,
                cwd=tree,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs[tree].append(json.loads(out.strip().splitlines()[-1]))
    return {
        tree: {
            key: float(np.median([r[key] for r in rows if r[key] is not None] or [np.nan]))
            for key in rows[0]
        }
        for tree, rows in runs.items()
    }


def _timed(function, repeats: int = 1):
    times, value = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - began)
    return float(np.median(times)), value


def parts(instance: str, repeats: int, checkpoint: str) -> list:
    """(part, seconds) of this tree's start-up, then of the torch path, in one process."""
    from lns.core.problem.mip import instance_name, problem_from_scip, read_scip_model
    from lns.core.solvers.scip.subsolver import ScipSubSolver

    rows = []
    seconds, model = _timed(lambda: read_scip_model(instance))
    rows.append(("file read (SCIP)", seconds))
    seconds, problem = _timed(lambda: problem_from_scip(model, instance_name(Path(instance))))
    rows.append(("problem arrays from the SCIP model", seconds))
    seconds, _ = _timed(lambda: __import__("learning.selector"))
    rows.append(("import learning.selector (numpy path)", seconds))
    from learning.checkpoint_file import read_checkpoint
    from learning.features import FeatureExtractor
    from learning.inference import NumpyPolicy
    from learning.selector import PRETRAINED_DIR

    solver = ScipSubSolver(problem)
    first = solver.solve(time_limit=10, seed=0, solution_limit=1).best
    if first is None:
        raise SystemExit(f"{instance}: no first solution within 10 s")
    start = first.x
    seconds, contents = _timed(lambda: read_checkpoint(PRETRAINED_DIR / f"{checkpoint}.pt"))
    rows.append(("checkpoint read (no torch)", seconds))
    policy = NumpyPolicy(contents["state_dict"], contents["model_config"])
    seconds, extractor = _timed(lambda: FeatureExtractor(problem))
    rows.append(("root LP and static features", seconds))
    with ThreadpoolController().limit(limits=1, user_api="blas"):  # as the selector (threads=1)
        seconds, cache = _timed(
            lambda: policy.graph_cache(
                extractor.edge_index,
                extractor.edge_features,
                problem.n_vars,
                extractor.matrix.shape[0],
            )
        )
        rows.append(("graph cache (once per problem)", seconds))
        seconds, observation = _timed(lambda: extractor.observe(start, [start, start]), repeats)
        rows.append(("dynamic features (per call)", seconds))
        seconds, scores = _timed(
            lambda: policy.scores(
                observation.variable_features, observation.constraint_features, cache
            ),
            repeats,
        )
    rows.append(("inference, numpy, 1 BLAS thread (per call)", seconds))
    free = np.argsort(-scores[problem.integer_indices], kind="stable")[
        : int(0.2 * len(problem.integer_indices))
    ]
    fixed = np.setdiff1d(problem.integer_indices, problem.integer_indices[free])
    seconds, _ = _timed(lambda: solver.solve(time_limit=5.0, seed=0, fixed=fixed, start=start))
    rows.append(("one sub-solve, 20% free, 5 s limit", seconds))
    rows.extend(_torch_parts(observation, repeats, checkpoint))
    return rows


def _torch_parts(observation, repeats: int, checkpoint: str) -> list:
    """The parts main's selector spent on torch: imports, checkpoint load, inference (1 thread)."""
    seconds, _ = _timed(lambda: (__import__("torch"), __import__("torch_geometric.nn")))
    rows = [("import torch, torch_geometric (torch path)", seconds)]
    import torch

    from learning.bipartite_graph import observation_graph
    from learning.checkpoint import load_checkpoint
    from learning.selector import PRETRAINED_DIR

    torch.set_num_threads(1)
    seconds, (model, _) = _timed(lambda: load_checkpoint(PRETRAINED_DIR / f"{checkpoint}.pt"))
    rows.append(("checkpoint load (torch.load, weights_only)", seconds))

    def infer():
        with torch.no_grad():
            return torch.sigmoid(model(observation_graph(observation))).numpy()

    seconds, _ = _timed(infer, repeats)
    rows.append(("inference, torch model (per call)", seconds))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instance")
    parser.add_argument(
        "--trees", nargs="*", default=[], help="source trees to compare end to end (before, after)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--checkpoint", default="mis", help="shipped model: mis | mvc")
    parser.add_argument(
        "--time-limit", type=float, default=15.0, help="budget of each end-to-end run"
    )
    parser.add_argument(
        "--start",
        default="feasibility",
        help="LNS start of the end-to-end runs (the default's stall rule holds the LNS back "
        "while SCIP still improves; 'first' starts it at SCIP's first solution)",
    )
    args = parser.parse_args(argv)
    if args.trees:
        medians = end_to_end(
            args.instance, args.trees, args.repeats, args.time_limit, args.checkpoint, args.start
        )
        keys = list(next(iter(medians.values())))
        print("| tree | " + " | ".join(keys) + " |")
        print("|---" * (len(keys) + 1) + "|")
        for tree, row in medians.items():
            print(f"| {tree} | " + " | ".join(f"{row[k]:.3f}" for k in keys) + " |")
    print("\n| part | seconds (median) |\n|---|---|")
    for part, seconds in parts(args.instance, args.repeats, args.checkpoint):
        print(f"| {part} | {seconds:.3f} |")


if __name__ == "__main__":
    main()
