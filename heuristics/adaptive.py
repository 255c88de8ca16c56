"""Adaptive LNS: a bandit over arms, each a selector at a size regime.

Ropke & Pisinger (2006) choose each iteration's destroy operator adaptively from its past
success; Balans (Cai et al. 2024) does the same over MIP neighborhoods with a bandit. Here an
arm is a selector object with a size multiplier: the arm frees ``m * size`` variables of the
size the loop asks for (rounded, and clipped to the integer variables), so the bandit learns
the neighborhood's size as well as its kind. No selector is right for every instance
(LB-RELAX wins on set partitioning, random neighborhoods on others). The policies
(:mod:`heuristics.bandit`): the roulette wheel (the default), UCB1 and Thompson sampling.
The roulette had the lowest mean and shifted geometric mean primal integral of the three
on 6 instances at 30 s (``lns-bench +experiment=bandit``; ``benchmarks/results/bandit.md``):
a small, noisy measurement, few instances and seeds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from heuristics.bandit import REWARDS, Policy, make_policy, reward_of
from heuristics.crossover import Crossover
from heuristics.dins import DINS
from heuristics.graph_induced import GraphInduced
from heuristics.lb_relax import LBRelax
from heuristics.random_selector import RandomSelector
from heuristics.rins import RINS
from lns.core.errors import InvalidArgumentError
from lns.core.search.selection import Neighborhood, SearchState, Selector

#: The size regimes of the default random arm (multipliers of the loop's size).
RANDOM_SIZES = (0.5, 1.0, 2.0)


def default_arms() -> list[tuple[Selector, float]]:
    """The arms of an :class:`AdaptiveSelector` built without any, as (selector, multiplier).

    Random neighborhoods at half, once and twice the loop's size (the strongest single
    selector measured on this project's benchmarks, so its size matters most), and LB-RELAX,
    RINS, graph-induced, DINS and crossover neighborhoods at the loop's size: 8 arms.
    """
    random = RandomSelector()
    return [(random, m) for m in RANDOM_SIZES] + [
        (selector, 1.0) for selector in (LBRelax(), RINS(), GraphInduced(), DINS(), Crossover())
    ]


class AdaptiveSelector(Selector):
    """Choose an arm (a selector at a size regime) each iteration with a bandit policy.

    Parameters
    ----------
    selectors : sequence of Selector or (Selector, float), optional
        The selectors, as objects (:func:`lns.registry.make_selector` builds them from names:
        ``make_selector("adaptive", selectors=["random", "rins"])``). A plain selector makes one
        arm per multiplier in ``sizes``; a ``(selector, multiplier)`` pair makes one arm.
        Default: :func:`default_arms`.
    policy : str or heuristics.bandit.Policy
        ``"roulette"`` (the adaptive LNS wheel), ``"ucb"`` (UCB1) or ``"thompson"``
        (Beta-Bernoulli Thompson sampling), or a policy object.
    policy_options : dict, optional
        Constructor arguments of the policy named (``decay``, ``min_weight`` for the roulette,
        ``exploration`` for UCB1).
    sizes : sequence of float
        Size multipliers of each plain selector in ``selectors`` (each > 0); the default arms
        carry their own.
    reward : str
        ``"improved"`` (1 or 0) or ``"gain"`` (relative improvement), see
        :func:`heuristics.bandit.reward_of`.
    per_second : bool
        Weigh each arm by its speed (success per second). Those times are measured, so they
        differ from run to run: ``False`` makes a run with an iteration limit and node limits
        repeat exactly.

    Notes
    -----
    ``info["arm"]`` names each iteration's arm (:attr:`arm_names`: the selector's ``name``,
    ``@m`` for a multiplier other than 1, numbered where two arms would share a name).
    :attr:`statistics` (:class:`heuristics.bandit.ArmStatistics`) holds what the bandit has
    learnt; it can be merged with another run's. In a parallel run, :meth:`share_statistics`
    puts them in memory the workers share (:mod:`lns.core.parallel.portfolio` does, except in
    deterministic mode): each worker draws its own arms from what all have learnt.
    """

    name = "adaptive"

    def __init__(
        self,
        selectors: Sequence[Selector | tuple] | None = None,
        policy: str | Policy = "roulette",
        policy_options: dict | None = None,
        sizes: Sequence[float] = (1.0,),
        reward: str = "improved",
        per_second: bool = True,
    ):
        sizes = list(sizes)
        if not sizes or not all(isinstance(m, (int, float)) and m > 0 for m in sizes):
            raise InvalidArgumentError(f"adaptive: sizes must be positive multipliers, got {sizes}")
        pairs = default_arms() if selectors is None else _pairs(selectors, sizes)
        if reward not in REWARDS:
            raise InvalidArgumentError(
                f"adaptive: reward must be one of {list(REWARDS)}, got {reward!r}"
            )
        self.arms = [selector for selector, _ in pairs]
        self.multipliers = np.array([m for _, m in pairs], dtype=float)
        names = [arm.name if m == 1 else f"{arm.name}@{m:g}" for arm, m in pairs]
        self.arm_names = [
            name if names.count(name) == 1 else f"{name}[{i}]" for i, name in enumerate(names)
        ]
        try:
            self.policy = make_policy(policy, policy_options)
        except ValueError as error:
            raise InvalidArgumentError(f"adaptive: {error}") from None
        self.reward, self.per_second = reward, per_second
        self.reset_statistics()

    def reset_statistics(self) -> None:
        """Forget what the bandit has learnt (statistics of its own from now on)."""
        self.statistics = self.policy.statistics(len(self.arms))
        self._last_arm: int | None = None

    def share_statistics(self, context) -> None:
        """Learn from now on in statistics shared with the processes of the ``multiprocessing``
        context ``context`` that get a copy of this selector; :meth:`setup` keeps them."""
        self.statistics = self.policy.statistics(len(self.arms), context)
        self._last_arm = None

    def check(self, problem) -> None:
        """Every arm's check (a learned arm refuses a checkpoint that does not fit, and starts
        preparing its features, before the run solves anything)."""
        for selector in {id(arm): arm for arm in self.arms}.values():
            selector.check(problem)

    def setup(self, problem) -> None:
        for selector in {id(arm): arm for arm in self.arms}.values():
            selector.setup(problem)
        if not self.statistics.is_shared:  # a worker's setup must not erase the others' plays
            self.reset_statistics()

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        arm = self.policy.choose(self.statistics, rng, self.per_second)
        n_integer = max(1, len(state.problem.integer_indices))
        scaled = int(np.clip(round(size * self.multipliers[arm]), 1, n_integer))
        neighborhood = self.arms[arm](state, scaled, rng)
        self._last_arm = arm
        neighborhood.info["arm"] = self.arm_names[arm]
        return neighborhood

    def update(self, record) -> None:
        arm = self._last_arm
        if arm is None:
            return
        self.arms[arm].update(record)
        self.statistics.update(
            arm, reward_of(record, self.reward), record.select_time + record.solve_time
        )


def _pairs(selectors, sizes) -> list[tuple[Selector, float]]:
    """(selector, multiplier) per arm; a clear error for anything else."""
    pairs = []
    for item in selectors:
        selector, multipliers = (item[0], [item[1]]) if isinstance(item, tuple) else (item, sizes)
        if not isinstance(selector, Selector) or isinstance(selector, AdaptiveSelector):
            raise InvalidArgumentError(
                f"adaptive: an arm must be a selector other than 'adaptive', got {selector!r}"
            )
        pairs += [(selector, float(m)) for m in multipliers]
    keys = [(id(selector), m) for selector, m in pairs]
    if not pairs or len(set(keys)) != len(keys):
        raise InvalidArgumentError(
            f"adaptive: selectors must be distinct selector objects, got {selectors}"
        )
    for _, m in pairs:
        if not m > 0:
            raise InvalidArgumentError(f"adaptive: a size multiplier must be > 0, got {m}")
    return pairs
