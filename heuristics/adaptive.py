"""Adaptive LNS: a roulette wheel over several selectors, weighted by their recent success.

Ropke & Pisinger (2006) choose each iteration's destroy operator with probability
proportional to a weight, and after the iteration move that weight towards a score
for what the operator achieved: ``w_a <- decay * w_a + (1 - decay) * score``. Balans
(Cai et al. 2024) uses the same idea over MIP neighborhoods with a bandit. Here the
arms are selector objects; an arm's score is ``reward`` when its neighborhood
improved the incumbent and ``penalty`` otherwise. No selector is right for every
instance (LB-RELAX wins on set partitioning, random neighborhoods on others), and a
run of a few dozen iterations is enough for the wheel to find the one that works.
An arm is drawn with probability proportional to its weight divided by its (smoothed)
iteration time, i.e. by its success per second, so that an arm whose sub-problems are
slow to solve must improve more often to be chosen as often.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from heuristics.graph import GraphInduced
from heuristics.lb_relax import LBRelax
from heuristics.random_selector import RandomSelector
from heuristics.rins import RINS
from lns.core.selection import Neighborhood, SearchState, Selector


def default_arms() -> list[Selector]:
    """The arms of an :class:`AdaptiveSelector` built without any: the classical selectors
    that need no sub-solver of their own, with their default settings."""
    return [RandomSelector(), LBRelax(), RINS(), GraphInduced()]


class AdaptiveSelector(Selector):
    """Choose among the ``selectors`` (arms) each iteration, in proportion to adaptive weights.

    Parameters
    ----------
    selectors : sequence of Selector, optional
        The arms, as selector objects (:func:`lns.registry.make_selector` builds them from
        names: ``make_selector("adaptive", selectors=["random", "rins"])``). Default: a
        :class:`RandomSelector`, :class:`LBRelax`, :class:`RINS` and :class:`GraphInduced`
        with their default settings.
    decay : float
        Weight kept from the past at each update, in [0, 1).
    reward, penalty : float
        Scores of an improving and a non-improving iteration (``reward > penalty >= 0``).
    min_weight : float
        Floor of every weight, so that no arm is ever abandoned.
    per_second : bool
        Divide each weight by the arm's smoothed iteration time (success per second). Those
        times are measured, so they differ from run to run: ``False`` draws by the weights
        alone, and a run with an iteration limit and node limits then repeats exactly.

    Notes
    -----
    The loop reports each iteration's outcome through :meth:`update`; ``info["arm"]`` names
    the arm of each iteration (:attr:`arm_names`: the arms' ``name``, numbered where two arms
    share one), ``weights`` and ``seconds`` hold the current weights and smoothed iteration times.
    """

    name = "adaptive"

    def __init__(self, selectors: Sequence[Selector] | None = None, decay: float = 0.8,
                 reward: float = 1.0, penalty: float = 0.0, min_weight: float = 0.05,
                 per_second: bool = True):
        arms = default_arms() if selectors is None else list(selectors)
        if not arms or len({id(arm) for arm in arms}) != len(arms):
            raise ValueError(f"adaptive: selectors must be distinct selector objects, got {arms}")
        for arm in arms:
            if not isinstance(arm, Selector) or isinstance(arm, AdaptiveSelector):
                raise ValueError(f"adaptive: an arm must be a selector other than 'adaptive', "
                                 f"got {arm!r}")
        if not 0 <= decay < 1:
            raise ValueError(f"adaptive: decay must be in [0, 1), got {decay}")
        if not reward > penalty >= 0:
            raise ValueError(f"adaptive: need reward > penalty >= 0, got reward={reward}, "
                             f"penalty={penalty}")
        if not 0 < min_weight <= reward:
            raise ValueError(f"adaptive: min_weight must be in (0, reward], got {min_weight}")
        self.arms = arms
        names = [arm.name for arm in arms]
        self.arm_names = [name if names.count(name) == 1 else f"{name}[{i}]"
                          for i, name in enumerate(names)]
        self.decay, self.reward, self.penalty, self.min_weight = decay, reward, penalty, min_weight
        self.per_second = per_second
        self.setup_weights()

    def setup_weights(self) -> None:
        """Start every arm at the same weight and an unknown iteration time."""
        self.weights = np.full(len(self.arms), self.reward)
        self.seconds = np.full(len(self.arms), np.nan)
        self._last_arm: int | None = None

    def setup(self, problem) -> None:
        for arm in self.arms:
            arm.setup(problem)
        self.setup_weights()

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        seconds = np.where(np.isnan(self.seconds), np.nanmean(self.seconds) if np.isfinite(self.seconds).any()
                           else 1.0, self.seconds)
        rate = self.weights / np.maximum(seconds, 1e-3) if self.per_second else self.weights
        arm = int(rng.choice(len(self.arms), p=rate / rate.sum()))
        neighborhood = self.arms[arm](state, size, rng)
        self._last_arm = arm
        neighborhood.info["arm"] = self.arm_names[arm]
        return neighborhood

    def update(self, record) -> None:
        a = self._last_arm
        if a is None:
            return
        self.arms[a].update(record)
        score = self.reward if record.improved else self.penalty
        self.weights[a] = max(self.min_weight, self.decay * self.weights[a] + (1 - self.decay) * score)
        spent = record.select_time + record.solve_time
        self.seconds[a] = spent if np.isnan(self.seconds[a]) else self.decay * self.seconds[a] + (1 - self.decay) * spent
