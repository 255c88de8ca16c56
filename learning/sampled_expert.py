"""The sampled-neighborhood expert: contrastive samples at the cost of LNS iterations.

The Local Branching expert (:mod:`learning.collect`) solves one hard ILP per sample (the paper
gives it an hour) and then sub-solves swapped neighborhoods for the negatives. This expert
labels neighborhoods by what the LNS loop itself would get from them. Along an LNS trajectory
on a training instance, at each incumbent:

1. draw ``candidates`` neighborhoods of the current size ``k`` from the proposals
   (:mod:`learning.proposals`: random, LB-RELAX sampling, graph, and a trained model's sampling
   when a checkpoint is given), shared round-robin among them; duplicates are solved once;
2. sub-solve each, the other integer variables fixed at the incumbent, with the loop's
   per-iteration limits and SCIP settings, in a pool of processes
   (:class:`learning.candidate_pool.CandidatePool`; seeds drawn from the run's generator);
3. label them with the paper's rules: positives improve by at least ``positive_ratio`` (50%) of
   the best candidate's improvement, negatives by at most ``negative_ratio`` (5%); no sample when
   no candidate improves;
4. move to the best candidate's solution (the size then follows the CL-LNS rule, as the LB
   expert's radius does).

A positive or a negative is the candidate's neighborhood (its ``k`` free variables), not the
variables its solution changed: every vector of a sample then has the same size, so that the
InfoNCE scores ``a^T π`` compare neighborhoods of one size, as the selector's choices are.
The samples have the LB expert's format (:func:`learning.collect.load_instance_file`), so
``lns-train`` reads them unchanged; each also records the proposal of each positive and
negative (``positive_proposals``, ``negative_proposals``).

Expert iteration: a collection with a checkpoint adds the model's sampling as a proposal, so a
second round is ``lns-collect expert=sampled checkpoint=<round 1 model>``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from learning.candidate_pool import CandidatePool, CandidatePoolError, available_cores
from learning.checkpoint_file import read_checkpoint
from learning.collect import CollectConfig, RenewedSolver, expert_trajectory, improvement
from learning.features import FeatureExtractor
from learning.proposals import CLASSICAL_PROPOSALS, make_proposals, proposal_names
from learning.selector import resolve_checkpoint
from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.problem.mip import Problem
from lns.core.search.incumbent import Incumbent
from lns.core.search.result import Callback
from lns.core.search.selection import Neighborhood, SearchState, Selector
from lns.core.solvers.protocol import SEED_BOUND
from lns.core.solvers.scip.settings import SUB_MIP_SETTINGS

log = logging.getLogger("lns.collect")


@dataclass
class SampledConfig:
    """Settings of the sampled expert (those it shares with the LB expert are in
    :class:`learning.collect.CollectConfig`: steps, size rule, first incumbent, label ratios).

    Attributes
    ----------
    candidates : int
        Neighborhoods drawn at each incumbent (``M``).
    proposals : list of str
        Proposals sharing them (:data:`learning.proposals.PROPOSALS`); a ``checkpoint`` adds
        ``model``.
    checkpoint : str or None
        A trained model whose sampling is one more proposal (expert iteration).
    workers : int or None
        Processes solving the candidates, each with its own sub-solver; ``None``: the cores this
        process may use.
    time_limit : float
        Seconds per candidate's sub-solve (the LNS loop's ``SubSolveParams.time_limit``).
    node_limit : int
        Branch-and-bound nodes per sub-solve (-1: none); with it and no time limit reached, a
        collection repeats exactly.
    sub_mip : str
        SCIP settings of the sub-solves (:data:`lns.core.solvers.scip.settings.SUB_MIP_SETTINGS`;
        the
        loop's default ``fast``).
    """

    candidates: int = 16
    proposals: list = field(default_factory=lambda: list(CLASSICAL_PROPOSALS))
    checkpoint: str | None = None
    workers: int | None = None
    time_limit: float = 5.0
    node_limit: int = -1
    sub_mip: str = "fast"

    def __post_init__(self):
        if not (isinstance(self.candidates, int) and self.candidates >= 1):
            raise InvalidArgumentError(
                f"candidates must be a positive integer, got {self.candidates!r}"
            )
        if self.workers is not None and not (isinstance(self.workers, int) and self.workers >= 1):
            raise InvalidArgumentError(
                f"workers must be a positive integer or null, got {self.workers!r}"
            )
        if not self.time_limit > 0:
            raise InvalidArgumentError(
                f"time_limit must be positive seconds, got {self.time_limit!r}"
            )
        if self.sub_mip not in SUB_MIP_SETTINGS:
            raise UnknownNameError("sub_mip setting", self.sub_mip, SUB_MIP_SETTINGS)
        self.proposals = proposal_names(self.proposals, self.checkpoint)
        if self.checkpoint is not None:  # a missing or refused model fails before any solve
            read_checkpoint(resolve_checkpoint(self.checkpoint))


def label_candidates(
    gains: np.ndarray, tolerance: float, positive_ratio: float, negative_ratio: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """The positives (best first) and negatives among candidates of improvements ``gains``.

    Positives improve by at least ``positive_ratio`` of the best improvement, negatives by at
    most ``negative_ratio`` of it; NaN gains (failed sub-solves) are neither. ``None`` when no
    candidate improves by more than ``tolerance``.
    """
    gains = np.asarray(gains, dtype=float)
    valid = np.isfinite(gains)
    if not valid.any() or gains[valid].max() <= tolerance:
        return None
    best = gains[valid].max()
    positives = np.flatnonzero(valid & (gains >= positive_ratio * best))
    positives = positives[np.argsort(-gains[positives], kind="stable")]
    negatives = np.flatnonzero(valid & (gains <= negative_ratio * best))
    return positives, negatives


def candidate_gains(problem: Problem, objective: float, results: list) -> np.ndarray:
    """Improvement of each :class:`CandidateResult` over ``objective`` (0 when its sub-solve
    found nothing better, NaN when it failed or its solution is not feasible)."""
    gains = np.zeros(len(results))
    for i, result in enumerate(results):
        if result.status == "error":
            gains[i] = np.nan
        elif result.x is not None:
            if problem.check(result.x).feasible:
                gains[i] = max(
                    0.0, improvement(problem, objective, problem.objective_value(result.x))
                )
            else:
                log.warning("%s: a candidate's solution is not feasible; ignored", problem.name)
                gains[i] = np.nan
    return gains


def shares(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` counts, round-robin (the first ones get one more)."""
    return [total // parts + (i < total % parts) for i in range(parts)]


class CandidateSearch(Selector):
    """The expert's step as a selector: draw candidates, solve them, return the best.

    The returned neighborhood is the best candidate, its solution the step; ``info`` holds
    ``candidates`` (index arrays), ``proposals`` (their names), ``gains`` and
    ``candidate_time`` (seconds of the sub-solves, wall clock).
    """

    name = "sampled"

    def __init__(self, proposals: list, pool: CandidatePool, config: SampledConfig):
        self.proposals, self.pool, self.config = proposals, pool, config

    def draw(self, state: SearchState, size: int, rng: np.random.Generator) -> tuple[list, list]:
        """Distinct candidates of ``size`` variables, and the proposal of each."""
        candidates, names, seen = [], [], set()
        for proposal, count in zip(
            self.proposals, shares(self.config.candidates, len(self.proposals)), strict=True
        ):
            for free in proposal.draw(state, size, count, rng):
                key = np.asarray(free, dtype=np.int64).tobytes()
                if key not in seen:
                    seen.add(key)
                    candidates.append(np.asarray(free, dtype=np.int64))
                    names.append(proposal.name)
        return candidates, names

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        candidates, names = self.draw(state, size, rng)
        seeds = [int(rng.integers(SEED_BOUND)) for _ in candidates]
        began = time.perf_counter()
        limit = min(self.config.time_limit, max(0.01, state.time_left()))
        results = self.pool.solve(candidates, seeds, state.incumbent, limit, self.config.node_limit)
        if results and all(r.status == "error" for r in results):
            raise CandidatePoolError(
                f"{state.problem.name}: all {len(results)} sub-solves of step {state.iteration} "
                "failed (see the warnings above)"
            )
        gains = candidate_gains(state.problem, state.objective, results)
        info = {
            "candidates": candidates,
            "proposals": names,
            "gains": gains,
            "candidate_time": time.perf_counter() - began,
        }
        if not candidates:
            return Neighborhood(np.zeros(0, dtype=np.int64), info=info)
        best = int(np.nanargmax(gains)) if np.isfinite(gains).any() else 0
        step = results[best].x if np.isfinite(gains[best]) and gains[best] > 0 else None
        return Neighborhood(candidates[best], solution=step, info=info)


class CandidateRecorder(Callback):
    """Records a contrastive sample at each step where a candidate improved the incumbent.

    Attributes
    ----------
    samples : list of dict
        One per improving step, in the format of :func:`learning.collect.load_instance_file`.
    """

    def __init__(self, extractor: FeatureExtractor, config: CollectConfig):
        self.extractor, self.config = extractor, config
        self.samples: list = []

    def on_selection(self, state: SearchState, size: int, neighborhood: Neighborhood) -> None:
        problem, info = state.problem, neighborhood.info
        gains, names = info["gains"], info["proposals"]
        tolerance = 1e-6 * max(1.0, abs(state.objective))
        labels = label_candidates(
            gains, tolerance, self.config.positive_ratio, self.config.negative_ratio
        )
        if labels is None:
            log.info(
                "%s: step %d, none of %d candidates (k=%d) improved in %.1fs",
                problem.name,
                state.iteration,
                len(gains),
                size,
                info["candidate_time"],
            )
            return
        positives, negatives = labels
        vectors = np.zeros((len(gains), problem.n_vars), dtype=np.uint8)
        for row, free in enumerate(info["candidates"]):
            vectors[row, free] = 1
        observation = self.extractor.observe(
            state.incumbent, state.history, radius=size, time_limit=self.config.lp_time_limit
        )
        self.samples.append(
            {
                "variable_features": observation.variable_features,
                "constraint_features": observation.constraint_features,
                "positives": vectors[positives],
                "negatives": vectors[negatives],
                "positive_improvements": gains[positives],
                "negative_improvements": gains[negatives],
                "positive_proposals": [names[i] for i in positives],
                "negative_proposals": [names[i] for i in negatives],
                "candidate_time": info["candidate_time"],
                "iteration": state.iteration,
                "radius": size,
            }
        )
        log.info(
            "%s: step %d, k=%d, best of %d candidates improved %.6g (%s); %d positives, "
            "%d negatives in %.1fs",
            problem.name,
            state.iteration,
            size,
            len(gains),
            gains[positives[0]],
            names[positives[0]],
            len(positives),
            len(negatives),
            info["candidate_time"],
        )


class SampledExpert:
    """The sampled-neighborhood expert, for :func:`learning.collect.collect_instance`.

    Parameters
    ----------
    config : SampledConfig
    """

    name = "sampled"

    def __init__(self, config: SampledConfig | None = None):
        self.config = config if config is not None else SampledConfig()

    def settings(self) -> dict:
        """Its :class:`SampledConfig`, as a dict (recorded in each file)."""
        return asdict(self.config)

    def samples(
        self,
        problem: Problem,
        config: CollectConfig,
        rng: np.random.Generator,
        solver: RenewedSolver,
        extractor: FeatureExtractor,
        incumbent: Incumbent,
    ) -> list:
        """The samples of an LNS trajectory from ``incumbent`` (``solver`` is not used: each
        pool process holds its own, with the loop's settings)."""
        proposals = make_proposals(
            self.config.proposals, self.config.checkpoint, config.lp_time_limit
        )
        workers = self.config.workers or available_cores()
        recorder = CandidateRecorder(extractor, config)
        with CandidatePool(problem, SUB_MIP_SETTINGS[self.config.sub_mip], workers) as pool:
            search = CandidateSearch(proposals, pool, self.config)
            expert_trajectory(problem, search, recorder, config, rng, incumbent)
        return recorder.samples
