"""The root LP of CL-LNS's features with HiGHS's solvers: dual simplex (the one used), IPM, PDLP.

For each instance, the root LP as :class:`lns.core.solvers.lp.WarmLP` builds it, solved cold
``--repeats``
times per solver setting, one setting after the other; prints the median and smallest wall-clock
seconds (single thread), HiGHS's iteration counts and the objective, and how far each solution's
variable values are from the simplex solution's (a degenerate LP has many optimal points: the
features of another one are not the ones the models were trained on).

Example (the figures in docs/cl_lns.md, "Start-up and cost per call")::

    lns-generate problem=mis size=small n=1 seed=123 out_dir=/tmp/mis6000
    python benchmarks/root_lp_solvers.py /tmp/mis6000/mis_small_0000.mps.gz --checkpoint mis
    lns-generate problem=mvc size=small n=10 seed=2 out_dir=data/mvc_gen prefix=mvc_1000_gen
    python benchmarks/root_lp_solvers.py data/mvc_gen/mvc_1000_gen_0000.mps.gz --checkpoint mvc
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import numpy as np

from lns.core.problem.mip import read_problem
from lns.core.solvers.lp import WarmLP

SETTINGS: dict[str, dict] = {
    "simplex (HiGHS's choice, used)": {},
    "dual simplex": {"solver": "simplex", "simplex_strategy": 1},
    "ipm, no crossover": {"solver": "ipm", "run_crossover": "off"},
    "pdlp": {"solver": "pdlp"},
}


def solver_lp(options: dict) -> type:
    """A :class:`WarmLP` class whose HiGHS has ``options`` set before its first solve."""

    class SolverLP(_IterationsLP):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            for name, value in options.items():
                self._highs.setOptionValue(name, value)

    return SolverLP


class _IterationsLP(WarmLP):
    def iterations(self) -> int:
        info = self._highs.getInfo()
        return max(
            info.simplex_iteration_count, info.ipm_iteration_count, info.pdlp_iteration_count, 0
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--checkpoint",
        help="also build the CL-LNS features on each solver's LP and compare this shipped "
        "model's top 20%% with the simplex's (mis | mvc)",
    )
    args = parser.parse_args(argv)
    for instance in args.instances:
        problem = read_problem(instance)
        print(f"\n{problem.name}: {problem.n_vars} columns, {problem.matrix.shape[0]} rows")
        print("| solver | median (s) | min (s) | iterations | objective | max |x - x_simplex| |")
        print("|---|---:|---:|---:|---:|---:|")
        reference = None
        for label, options in SETTINGS.items():
            times = []
            for _ in range(args.repeats):
                lp = solver_lp(options)(problem)
                began = time.perf_counter()
                solution = lp.solve()
                times.append(time.perf_counter() - began)
            if reference is None:
                reference = solution.x
            distance = float(np.abs(solution.x - reference).max())
            print(
                f"| {label} | {np.median(times):.3f} | {min(times):.3f} | {lp.iterations()} | "
                f"{solution.objective:.4f} | {distance:.3f} |"
            )
        if args.checkpoint:
            compare_features(problem, args.checkpoint)


def compare_features(problem, checkpoint: str) -> None:
    """Seconds of the static features on each solver's root LP, and the overlap of the model's
    top 20% at an all-zero incumbent with the one on the simplex's LP."""
    from learning.checkpoint_file import read_checkpoint
    from learning.features import FeatureExtractor
    from learning.inference import NumpyPolicy
    from learning.selector import PRETRAINED_DIR

    contents = read_checkpoint(PRETRAINED_DIR / f"{checkpoint}.pt")
    policy = NumpyPolicy(contents["state_dict"], contents["model_config"])
    k = max(1, int(0.2 * problem.n_vars))
    print(f"\n| solver | static features (s) | top 20% shared with the simplex's ({checkpoint}) |")
    print("|---|---:|---:|")
    reference = None
    for label, options in SETTINGS.items():
        with mock.patch("lns.core.solvers.lp.WarmLP", solver_lp(options)):
            began = time.perf_counter()
            extractor = FeatureExtractor(problem)
            seconds = time.perf_counter() - began
        graph = policy.graph_cache(
            extractor.edge_index, extractor.edge_features, problem.n_vars, extractor.matrix.shape[0]
        )
        zero = np.zeros(problem.n_vars)
        observation = extractor.observe(zero, [zero, zero])
        scores = policy.scores(
            observation.variable_features, observation.constraint_features, graph
        )
        top = set(np.argsort(-scores, kind="stable")[:k].tolist())
        reference = top if reference is None else reference
        print(f"| {label} | {seconds:.3f} | {len(top & reference) / k:.3f} |")


if __name__ == "__main__":
    main()
