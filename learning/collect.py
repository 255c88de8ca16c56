"""Expert data for CL-LNS: LNS with Local Branching, and contrastive samples of its iterations.

For each training instance (Huang et al., ICML 2023, Section 4.2):

1. find a first incumbent with SCIP;
2. run LNS (the loop of :func:`lns.core.search.loop.run_lns`) with Local Branching (LB) as
   the selector, LB's best solution as each iteration's step (the neighborhood is not solved
   again: see :class:`ExpertStep`) and :class:`SampleRecorder` as a callback; at every
   iteration where LB improves, it records

   * the state: the bipartite graph at the incumbent (:class:`learning.features.FeatureExtractor`);
   * positives: each improving solution SCIP found while solving the LB problem, as the 0/1
     vector of the integer variables it changes, kept if its improvement is at least
     ``positive_ratio`` (50%) of the best one's (the best one is LB's own neighborhood);
   * negatives: the LB neighborhood with ``r`` = 5%, 10%, ... of its variables swapped for random
     other integer variables (same size), each sub-solved with SCIP; kept if the sub-solve
     improves by at most ``negative_ratio`` (5%) of the best positive's improvement. At most
     ``tries_per_ratio`` tries per ``r``, the next ``r`` after ``misses_per_ratio`` misses in a
     row, at most
     ``max_negatives`` negatives;

   then move to LB's best solution and continue.

The paper's limits (LB 3600 s, 90 tries per ratio, 10 misses, 90 negatives, 240 s per negative)
are the ``paper`` preset of ``configs/collect_limits``; the default preset scales them down for a
small machine. Each instance's samples go to one file ``<out_dir>/<instance>.pt`` (written
atomically when the instance is done, so a rerun skips it); load it with :func:`load_instance_file`.
The other expert, whose samples are candidate neighborhoods sub-solved in parallel, is
:mod:`learning.sampled_expert` (``collect_instance(..., expert=SampledExpert(...))``); the file
and each sample name their expert.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from heuristics.local_branching import LocalBranching
from learning.features import HISTORY_LENGTH, FeatureExtractor, resolve_columns, spec_difference
from lns.core.problem.mip import Problem, instance_name, read_problem
from lns.core.search.incumbent import Incumbent
from lns.core.search.loop import run_lns
from lns.core.search.neighborhood_size import AdaptiveSize
from lns.core.search.params import SubSolveParams
from lns.core.search.result import Callback
from lns.core.search.selection import Neighborhood, SearchState, Selector
from lns.core.search.stop import MaxIterations, NoImprovement, StopReason
from lns.core.solvers.protocol import SEED_BOUND, SolveOutcome, SolveStatus, no_session
from lns.core.solvers.scip.subsolver import ScipSubSolver

log = logging.getLogger("lns.collect")

DATASET_FORMAT = 1


@dataclass
class CollectConfig:
    """Limits of the expert data collection (the defaults fit a laptop; see the module docstring).

    Attributes
    ----------
    iterations : int
        LNS iterations with the LB expert per instance.
    initial_fraction, growth, max_fraction : float
        LB's radius ``k``: start fraction of the integer variables, growth after an iteration
        without improvement, cap (the CL-LNS rule of
        :class:`lns.core.search.neighborhood_size.AdaptiveSize`).
    expert : dict
        Constructor arguments of the ``local_branching`` selector (e.g. its ``time_limit``).
    initial_time_limit : float
        Seconds for SCIP's first incumbent.
    initial_solution_limit : int
        SCIP stops at this many solutions for the first incumbent (a weak start gives more LB
        steps).
    negative_time_limit : float
        Seconds per sub-solve of a negative candidate.
    swap_step : float
        Swap ratios are ``swap_step, 2 swap_step, ...`` (up to 1).
    tries_per_ratio, misses_per_ratio, max_negatives : int
        Negative search limits (paper: 90, 10, 90).
    max_tries : int
        Sub-solves of negative candidates per sample, in all (the paper has no such cap).
    max_failures : int
        Stop an instance after this many LB calls in a row without improvement (the incumbent is
        then usually a local optimum that only a much larger, slower LB ball would escape).
    positive_ratio, negative_ratio : float
        Keep positives improving by at least, and negatives by at most, these fractions of the best.
    lp_time_limit : float
        Seconds for the root LP of the features.
    """

    iterations: int = 10
    initial_fraction: float = 0.2
    growth: float = 1.02
    max_fraction: float = 0.5
    expert: dict | None = None
    initial_time_limit: float = 10.0
    initial_solution_limit: int = 1
    negative_time_limit: float = 2.0
    swap_step: float = 0.05
    tries_per_ratio: int = 4
    misses_per_ratio: int = 2
    max_negatives: int = 8
    max_tries: int = 16
    max_failures: int = 2
    positive_ratio: float = 0.5
    negative_ratio: float = 0.05
    lp_time_limit: float = 60.0


def improvement(problem: Problem, old: float, new: float) -> float:
    """How much ``new`` is better than ``old`` (positive when it improves), in the problem's
    sense."""
    return (old - new) if problem.sense == "minimize" else (new - old)


def changed_variables(problem: Problem, x: np.ndarray, incumbent: np.ndarray) -> np.ndarray:
    """0/1 vector (uint8, length n) of the integer variables whose rounded value differs from the
    incumbent."""
    diff = problem.integer_mask & (np.round(x) != np.round(incumbent))
    return diff.astype(np.uint8)


def swapped_neighborhood(
    problem: Problem, base: np.ndarray, n_swap: int, rng: np.random.Generator
) -> np.ndarray:
    """``base`` (0/1 vector) with ``n_swap`` of its variables replaced by as many other integer
    variables."""
    inside = np.flatnonzero(base)
    outside = np.flatnonzero(problem.integer_mask & (base == 0))
    n_swap = min(n_swap, len(inside), len(outside))
    result = base.copy()
    result[rng.choice(inside, n_swap, replace=False)] = 0
    result[rng.choice(outside, n_swap, replace=False)] = 1
    return result


def find_negatives(
    problem: Problem,
    solver: RenewedSolver,
    incumbent: np.ndarray,
    objective: float,
    base: np.ndarray,
    best_improvement: float,
    config: CollectConfig,
    rng: np.random.Generator,
) -> tuple[list, list, int]:
    """Negatives around ``base`` (the LB neighborhood): swapped variants whose sub-solve hardly
    improves.

    Returns
    -------
    negatives : list of numpy.ndarray (uint8, length n)
    improvements : list of float
        Improvement the sub-solve of each negative reached.
    tries : int
        Sub-solves spent.
    """
    negatives: list[np.ndarray] = []
    improvements: list[float] = []
    tries = 0
    size = int(base.sum())
    n_ratios = int(np.floor(1.0 / config.swap_step + 1e-9))
    for step in range(1, n_ratios + 1):
        n_swap = max(1, int(round(step * config.swap_step * size)))
        misses = 0
        for _ in range(config.tries_per_ratio):
            if len(negatives) >= config.max_negatives or tries >= config.max_tries:
                return negatives, improvements, tries
            candidate = swapped_neighborhood(problem, base, n_swap, rng)
            outcome = solver.solve(
                time_limit=config.negative_time_limit,
                seed=int(rng.integers(SEED_BOUND)),
                free=np.flatnonzero(problem.integer_mask & (candidate != 0)),
                start=incumbent,
            )
            tries += 1
            gain = 0.0
            if outcome.best is not None:
                gain = max(0.0, improvement(problem, objective, outcome.best.objective))
            if gain <= config.negative_ratio * best_improvement:
                negatives.append(candidate)
                improvements.append(gain)
                misses = 0
            else:
                misses += 1
                if misses >= config.misses_per_ratio:
                    break
    return negatives, improvements, tries


class RenewedSolver:
    """A SCIP sub-solver (with SCIP ``params``) that replaces itself after a solve it abandoned.

    SCIP may overrun a time limit inside one long LP (a root LP of a million nonzeros); the
    watchdog then abandons the solve, and its model stays in SCIP's use, so the next solve
    needs a new model. Collection goes on with one instead of ending the instance.

    A neighborhood's sub-solve (negatives, candidates) solves what the LNS loop solves by
    default: the reduced sub-MIP of the free variables where the rule of
    :func:`lns.core.solvers.scip.subsolver.prefers_reduced` picks it
    (:attr:`lns.SubSolveParams.sub_problem`), else the whole model.
    """

    def __init__(self, problem: Problem, params: dict | None = None):
        self.problem, self.params = problem, params
        self.current = self._new_solver()

    def _new_solver(self) -> ScipSubSolver:
        return ScipSubSolver(self.problem, self.params, sub_problem=SubSolveParams().sub_problem)

    def solve(self, **kwargs) -> SolveOutcome:
        """:meth:`ScipSubSolver.solve`; after an abandoned solve, the next one gets a new model."""
        outcome = self.current.solve(**kwargs)
        if outcome.status is SolveStatus.ABANDONED:
            self.current = self._new_solver()
        return outcome


class ExpertStep:
    """The sub-solver of the collection loop: it solves nothing.

    The expert's best solution (``Neighborhood.solution``, offered to the incumbent by the
    loop) is the step of each iteration, as in the paper's collection: LB's ILP already is the
    sub-problem, solved within the LB ball.
    """

    name = "expert"
    total_solve_time = 0.0

    def solve(self, **kwargs) -> SolveOutcome:
        return SolveOutcome(SolveStatus.OTHER)

    def stop(self) -> None:
        """Nothing runs, so nothing to stop."""

    def session(self):
        return no_session()


class SampleRecorder(Callback):
    """Records a contrastive sample at each selection where the LB expert improves the incumbent.

    Parameters
    ----------
    solver : RenewedSolver
        Solves the negative candidates.
    extractor : FeatureExtractor
        The state's features.
    config : CollectConfig
    rng : numpy.random.Generator
        The run's generator (negatives draw from it).

    Attributes
    ----------
    samples : list of dict
        One per improving iteration, in the format of :func:`load_instance_file`.
    """

    def __init__(
        self,
        solver: RenewedSolver,
        extractor: FeatureExtractor,
        config: CollectConfig,
        rng: np.random.Generator,
    ):
        self.solver, self.extractor, self.config, self.rng = solver, extractor, config, rng
        self.samples: list = []

    def on_selection(self, state: SearchState, size: int, neighborhood: Neighborhood) -> None:
        problem, incumbent, objective = state.problem, state.incumbent, state.objective
        improving = _improving(problem, neighborhood, objective)
        if not improving:
            log.info(
                "%s: iteration %d, LB (k=%d) found no improvement (%s)",
                problem.name,
                state.iteration,
                size,
                neighborhood.info.get("lb_status"),
            )
            return
        best_gain, best_x = max(improving, key=lambda item: item[0])
        positives, positive_gains = _unique_positives(
            problem, improving, incumbent, best_gain, self.config
        )
        base = changed_variables(problem, best_x, incumbent)
        negatives, negative_gains, tries = find_negatives(
            problem, self.solver, incumbent, objective, base, best_gain, self.config, self.rng
        )
        observation = self.extractor.observe(
            incumbent, state.history, radius=size, time_limit=self.config.lp_time_limit
        )
        self.samples.append(
            {
                "variable_features": observation.variable_features,
                "constraint_features": observation.constraint_features,
                "positives": np.array(positives, dtype=np.uint8),
                "negatives": np.array(negatives, dtype=np.uint8).reshape(-1, problem.n_vars),
                "positive_improvements": np.array(positive_gains),
                "negative_improvements": np.array(negative_gains),
                "iteration": state.iteration,
                "radius": size,
            }
        )
        log.info(
            "%s: iteration %d, k=%d, LB improved %.6g; %d positives, %d negatives from %d "
            "sub-solves",
            problem.name,
            state.iteration,
            size,
            best_gain,
            len(positives),
            len(negatives),
            tries,
        )


def _improving(problem: Problem, neighborhood: Neighborhood, objective: float) -> list:
    """``(gain, x)`` of the expert's feasible solutions that improve on ``objective``."""
    candidates = [
        problem.round_integers(np.asarray(x, dtype=float))
        for x in neighborhood.info.get("solutions", [])
    ]
    gains = [improvement(problem, objective, problem.objective_value(x)) for x in candidates]
    return [
        (g, x)
        for g, x in zip(gains, candidates, strict=True)
        if g > 1e-6 * max(1.0, abs(objective)) and problem.check(x).feasible
    ]


class Expert(Protocol):
    """What :func:`collect_instance` asks of an expert.

    Attributes
    ----------
    name : str
        Recorded in the file and in each sample (``"lb"``, ``"sampled"``).
    """

    name: str

    def settings(self) -> dict:
        """Its settings besides :class:`CollectConfig`, recorded in the file."""
        ...

    def samples(
        self,
        problem: Problem,
        config: CollectConfig,
        rng: np.random.Generator,
        solver: RenewedSolver,
        extractor: FeatureExtractor,
        incumbent: Incumbent,
    ) -> list:
        """The samples of a trajectory from ``incumbent`` (a first solution); ``solver`` is a
        SCIP sub-solver of ``problem`` with SCIP's default settings, ``rng`` the instance's."""
        ...


class LocalBranchingExpert:
    """The paper's expert: LNS with Local Branching (the module docstring)."""

    name = "lb"

    def settings(self) -> dict:
        """Its settings besides :class:`CollectConfig` (none)."""
        return {}

    def samples(
        self,
        problem: Problem,
        config: CollectConfig,
        rng: np.random.Generator,
        solver: RenewedSolver,
        extractor: FeatureExtractor,
        incumbent: Incumbent,
    ) -> list:
        """The samples of LNS with the LB expert from ``incumbent`` (:class:`SampleRecorder`)."""
        recorder = SampleRecorder(solver, extractor, config, rng)
        expert = LocalBranching(**(config.expert or {}))
        expert_trajectory(problem, expert, recorder, config, rng, incumbent)
        return recorder.samples


def collect_instance(
    problem: Problem,
    config: CollectConfig,
    seed: int,
    variable_columns: str | Sequence[str] = "base",
    expert: Expert | None = None,
) -> dict:
    """Run an expert on ``problem``; returns its samples (a dict of arrays and plain values).

    ``expert``: :class:`LocalBranchingExpert` (the default) or
    :class:`learning.sampled_expert.SampledExpert`; its name is recorded in the file
    (``expert``) and in each sample, its settings in ``expert_settings``.
    ``variable_columns`` (:func:`learning.features.resolve_columns`) are recorded; the Local
    Branching LP columns are computed with the expert's radius of each sample. The features
    cover every variable, the neighborhoods only change integer ones: ``integer_mask`` records
    which, so that training scores those alone (:class:`learning.dataset.Sample`).
    """
    expert = expert if expert is not None else LocalBranchingExpert()
    began = time.perf_counter()
    rng = np.random.default_rng(seed)
    solver = RenewedSolver(problem)
    extractor = FeatureExtractor(
        problem, lp_time_limit=config.lp_time_limit, variable_columns=variable_columns
    )
    incumbent = Incumbent(problem, began, history_length=HISTORY_LENGTH)
    solver.solve(
        time_limit=config.initial_time_limit,
        seed=int(rng.integers(SEED_BOUND)),
        solution_limit=config.initial_solution_limit,
        on_found=incumbent.offer_found,
    )
    data = {
        "format": DATASET_FORMAT,
        "instance": problem.name,
        "features": extractor.spec,
        "settings": asdict(config),
        "seed": seed,
        "expert": expert.name,
        "expert_settings": expert.settings(),
        "edge_index": extractor.edge_index,
        "edge_features": extractor.edge_features,
        "integer_mask": problem.integer_mask,
        "samples": [],
    }
    if incumbent.x is None:
        log.warning(
            "%s: no initial solution within %.1fs; no samples",
            problem.name,
            config.initial_time_limit,
        )
    else:
        samples = expert.samples(problem, config, rng, solver, extractor, incumbent)
        for sample in samples:
            sample["expert"] = expert.name
        data["samples"] = samples
    data["collect_time"] = time.perf_counter() - began
    return data


def expert_trajectory(
    problem: Problem,
    expert: Selector,
    recorder: Callback,
    config: CollectConfig,
    rng: np.random.Generator,
    incumbent: Incumbent,
) -> None:
    """LNS from ``incumbent`` whose steps are the ``expert``'s solutions, ``recorder`` watching.

    The neighborhood size follows the CL-LNS rule (:class:`CollectConfig`); the run ends after
    ``config.iterations`` steps or ``config.max_failures`` in a row without improvement.

    Raises
    ------
    KeyboardInterrupt
        The run was interrupted (an instance cut short must not be written as done).
    """
    size_rule = AdaptiveSize(
        len(problem.integer_indices),
        config.initial_fraction,
        config.growth,
        config.max_fraction,
        shrink=None,
    )
    stop = MaxIterations(config.iterations) | NoImprovement(iterations=config.max_failures)
    _, reason = run_lns(
        problem,
        expert,
        ExpertStep(),
        incumbent,
        rng=rng,
        stop=stop,
        callbacks=[recorder],
        size_rule=size_rule,
    )
    if reason is StopReason.INTERRUPTED:
        raise KeyboardInterrupt


def _unique_positives(problem, improving, incumbent, best_gain, config) -> tuple[list, list]:
    """Changed-variable vectors of the improving solutions good enough to be positives, best
    first, no duplicates."""
    positives, gains, seen = [], [], set()
    for gain, x in sorted(improving, key=lambda item: -item[0]):
        if gain < config.positive_ratio * best_gain:
            continue
        vector = changed_variables(problem, x, incumbent)
        key = vector.tobytes()
        if key in seen:
            continue
        seen.add(key)
        positives.append(vector)
        gains.append(gain)
    return positives, gains


def instance_file(out_dir: str | Path, path: str | Path) -> Path:
    """Where the samples of instance ``path`` are written."""
    return Path(out_dir) / f"{instance_name(Path(path))}.pt"


def collect_files(
    paths: list,
    out_dir: str | Path,
    config: CollectConfig,
    seed: int,
    variable_columns: str | Sequence[str] = "base",
    expert: Expert | None = None,
) -> list[Path]:
    """Collect every instance in ``paths`` whose output file is not there yet; return the files
    written.

    The seed of an instance is derived from ``seed`` and its position, so that a rerun of an
    interrupted collection reproduces the same samples. ``variable_columns``: the variable
    feature columns recorded (``"base"``, ``"all"`` or names); ``expert``: the expert
    (:func:`collect_instance`; default Local Branching).
    """
    import torch

    variable_columns = resolve_columns(variable_columns)  # a bad name fails before any solve
    written = []
    for position, path in enumerate(paths):
        target = instance_file(out_dir, path)
        if target.exists():
            log.info("%s exists: skipped", target)
            continue
        problem = read_problem(path)
        instance_seed = int(np.random.SeedSequence([seed, position]).generate_state(1)[0])
        data = collect_instance(problem, config, instance_seed, variable_columns, expert)
        data["source"] = str(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".partial{os.getpid()}")
        torch.save(_to_tensors(data), partial)
        partial.replace(target)
        log.info(
            "%s: %d samples in %.1fs -> %s",
            problem.name,
            len(data["samples"]),
            data["collect_time"],
            target,
        )
        written.append(target)
    return written


def _to_tensors(value):
    """numpy arrays -> tensors, recursively (so that ``torch.load(weights_only=True)`` reads
    the file)."""
    import torch

    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, dict):
        return {k: _to_tensors(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_tensors(v) for v in value]
    return value


def load_instance_file(path: str | Path) -> dict:
    """Read one instance's samples (``torch.load(weights_only=True)``), checking the format and
    features (:func:`learning.features.spec_difference`: any known variable columns)."""
    import torch

    from learning.checkpoint import CheckpointError

    data = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or data.get("format") != DATASET_FORMAT:
        raise CheckpointError(f"{path}: not a CL-LNS sample file of format {DATASET_FORMAT}")
    difference = spec_difference(data["features"])
    if difference:
        raise CheckpointError(
            f"{path}: collected with other features ({difference}); collect again"
        )
    return data
