"""Bandit policies that choose each LNS iteration's arm, and the statistics they learn from.

An *arm* is one way of choosing a neighborhood (a selector at a size regime). After each
iteration the arm that was played earns a reward ``r`` in [0, 1] (:func:`reward_of`), and a
policy turns the per-arm statistics into the next choice:

* :class:`Roulette`: the adaptive LNS wheel of Ropke & Pisinger (2006): an arm is drawn with
  probability proportional to an exponentially smoothed reward ``w_a <- d w_a + (1 - d) r``.
* :class:`UCB1`: Auer, Cesa-Bianchi & Fischer (2002): play every arm once, then the arm with
  the highest ``mean_a + c sqrt(ln N / n_a)``.
* :class:`Thompson`: Thompson sampling with a Beta-Bernoulli model (Agrawal & Goyal 2012):
  draw ``theta_a ~ Beta(1 + S_a, 1 + n_a - S_a)``, with ``S_a`` the sum of the arm's rewards,
  and play the largest draw.

With ``per_second`` every score (weight, index or draw) is multiplied by the arm's *speed*,
the mean seconds of an iteration over all arms divided by the arm's own: an arm whose
sub-problems take twice as long must succeed twice as often to be chosen as often. Times are
measured, so such a run cannot repeat exactly; without it, every draw comes from the run's
generator and a run with iteration and node limits repeats exactly.

The statistics are additive (:meth:`ArmStatistics.merge`), and can live in memory shared by
the workers of a parallel run (:meth:`ArmStatistics.shared`): each worker then draws its own
arms from what all of them have learnt.

References
----------
S. Ropke, D. Pisinger. "An adaptive large neighborhood search heuristic for the pickup and
delivery problem with time windows." Transportation Science 40(4), 2006.
P. Auer, N. Cesa-Bianchi, P. Fischer. "Finite-time analysis of the multiarmed bandit
problem." Machine Learning 47, 2002.
S. Agrawal, N. Goyal. "Analysis of Thompson sampling for the multi-armed bandit problem."
COLT 2012.
"""

from __future__ import annotations

import contextlib
import math
from abc import ABC, abstractmethod

import numpy as np

from lns.core.errors import InvalidArgumentError
from lns.core.problem.validation import check_arguments

#: Reward modes of :func:`reward_of`; neither uses measured time.
REWARDS = ("improved", "gain")


def reward_of(record, mode: str) -> float:
    """The reward in [0, 1] of one iteration (a :class:`lns.core.search.result.IterationRecord`).

    ``"improved"``: 1 if the iteration improved the incumbent, else 0. ``"gain"``: the
    improvement relative to the incumbent's objective, ``|f_before - f_after| / max(|f_before|,
    1)``, capped at 1.
    """
    if not record.improved:
        return 0.0
    if mode == "improved":
        return 1.0
    before, after = record.objective_before, record.objective_after
    if not (math.isfinite(before) and math.isfinite(after)):
        return 1.0
    return min(1.0, abs(before - after) / max(abs(before), 1.0))


class ArmStatistics:
    """What a bandit knows of its arms: plays, reward sums, seconds and a smoothed reward.

    Parameters
    ----------
    n_arms : int
    decay : float
        Weight kept from the past in the smoothed reward ``recent`` (the roulette's weight), in
        [0, 1).
    shared : multiprocessing.Array of float, optional
        Memory shared between processes that holds the four arrays (see :meth:`shared`):
        every process that holds a copy of these statistics reads and updates the same
        numbers, so parallel workers learn from each other's plays as they happen.

    Attributes
    ----------
    pulls, rewards, seconds : numpy.ndarray, shape (n_arms,)
        Plays of each arm, the sum of their rewards and of their seconds.
    recent : numpy.ndarray, shape (n_arms,)
        Exponentially smoothed reward, starting at 1 (optimistic, so every arm gets tried).
        Shared, it is smoothed over the plays of every process in the order they were made.
    """

    def __init__(self, n_arms: int, decay: float = 0.8, shared=None):
        if not 0 <= decay < 1:
            raise InvalidArgumentError(f"bandit: decay must be in [0, 1), got {decay}")
        self.decay, self.n_arms, self._shared = decay, n_arms, shared
        if shared is None:
            self._view(np.zeros(4 * n_arms))
            self.recent[:] = 1.0
        else:
            self._view(np.frombuffer(shared.get_obj(), dtype=float))

    @classmethod
    def shared(cls, n_arms: int, decay: float, context) -> ArmStatistics:
        """Fresh statistics in memory shared with the processes of ``context`` (a
        ``multiprocessing`` context) that are given a copy of them (pickled at their start)."""
        memory = context.Array("d", 4 * n_arms)
        np.frombuffer(memory.get_obj(), dtype=float)[3 * n_arms :] = 1.0
        return cls(n_arms, decay, memory)

    @property
    def is_shared(self) -> bool:
        return self._shared is not None

    def _view(self, values: np.ndarray) -> None:
        n = self.n_arms
        self.pulls, self.rewards = values[:n], values[n : 2 * n]
        self.seconds, self.recent = values[2 * n : 3 * n], values[3 * n :]

    def __getstate__(self) -> dict:
        if self._shared is None:
            return self.__dict__
        return {"decay": self.decay, "n_arms": self.n_arms, "_shared": self._shared}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self._shared is not None:
            self._view(np.frombuffer(self._shared.get_obj(), dtype=float))

    def update(self, arm: int, reward: float, seconds: float) -> None:
        """Record one play of ``arm`` that earned ``reward`` in ``seconds``."""
        with self._shared.get_lock() if self._shared is not None else contextlib.nullcontext():
            self.pulls[arm] += 1
            self.rewards[arm] += reward
            self.seconds[arm] += seconds
            self.recent[arm] = self.decay * self.recent[arm] + (1 - self.decay) * reward

    def merge(self, other: ArmStatistics) -> None:
        """Add the plays of ``other`` (e.g. another run's).

        Counts and sums add; ``recent`` becomes the play-weighted mean of the two, an arm
        that neither has played keeping its value.
        """
        if other.pulls.shape != self.pulls.shape:
            raise InvalidArgumentError(
                f"bandit: cannot merge statistics of {other.pulls.size} arms into {self.pulls.size}"
            )
        total = self.pulls + other.pulls
        share = np.divide(other.pulls, total, out=np.zeros_like(total), where=total > 0)
        self.recent[:] = (1 - share) * self.recent + share * other.recent
        self.pulls[:], self.rewards[:] = total, self.rewards + other.rewards
        self.seconds[:] = self.seconds + other.seconds

    def copy(self) -> ArmStatistics:
        """A copy of its own (not shared)."""
        twin = ArmStatistics(self.pulls.size, self.decay)
        twin.merge(self)
        return twin

    def speed(self) -> np.ndarray:
        """Mean seconds per play over all arms divided by each arm's own (1 for unplayed arms)."""
        total = self.seconds.sum()
        if total <= 0:
            return np.ones(self.pulls.size)
        overall = total / self.pulls.sum()
        mean = np.divide(
            self.seconds, self.pulls, out=np.full(self.pulls.size, overall), where=self.pulls > 0
        )
        return overall / np.maximum(mean, 1e-6)


class Policy(ABC):
    """Chooses an arm from :class:`ArmStatistics`; every random draw comes from ``rng``."""

    name = "policy"

    #: The statistics' smoothing of ``recent`` (see :class:`ArmStatistics`).
    decay = 0.8

    def statistics(self, n_arms: int, context=None) -> ArmStatistics:
        """Fresh statistics of the kind this policy reads; shared with the processes of the
        ``multiprocessing`` context ``context`` if one is given."""
        if context is not None:
            return ArmStatistics.shared(n_arms, self.decay, context)
        return ArmStatistics(n_arms, self.decay)

    @abstractmethod
    def scores(self, stats: ArmStatistics, rng: np.random.Generator) -> np.ndarray:
        """A non-negative score per arm, before the speed factor."""

    def choose(self, stats: ArmStatistics, rng: np.random.Generator, per_second: bool) -> int:
        """The arm to play next: the highest score (times the speed with ``per_second``)."""
        scores = self.scores(stats, rng) * (stats.speed() if per_second else 1.0)
        return int(np.argmax(scores))


class Roulette(Policy):
    """Draw in proportion to the smoothed reward, floored at ``min_weight`` (Ropke & Pisinger)."""

    name = "roulette"

    def __init__(self, decay: float = 0.8, min_weight: float = 0.05):
        if not 0 < min_weight <= 1:
            raise InvalidArgumentError(f"bandit: min_weight must be in (0, 1], got {min_weight}")
        if not 0 <= decay < 1:
            raise InvalidArgumentError(f"bandit: decay must be in [0, 1), got {decay}")
        self.decay, self.min_weight = decay, min_weight

    def scores(self, stats: ArmStatistics, rng: np.random.Generator) -> np.ndarray:
        return np.maximum(stats.recent, self.min_weight)

    def choose(self, stats: ArmStatistics, rng: np.random.Generator, per_second: bool) -> int:
        weights = self.scores(stats, rng) * (stats.speed() if per_second else 1.0)
        return int(rng.choice(weights.size, p=weights / weights.sum()))


class UCB1(Policy):
    """Every arm once (in random order), then ``argmax mean_a + c sqrt(ln N / n_a)``."""

    name = "ucb"

    def __init__(self, exploration: float = 0.5):
        if not exploration >= 0:
            raise InvalidArgumentError(f"bandit: exploration must be >= 0, got {exploration}")
        self.exploration = exploration

    def scores(self, stats: ArmStatistics, rng: np.random.Generator) -> np.ndarray:
        unplayed = stats.pulls == 0
        if unplayed.any():
            scores = np.zeros(stats.pulls.size)
            scores[rng.choice(np.flatnonzero(unplayed))] = 1.0
            return scores
        mean = stats.rewards / stats.pulls
        return mean + self.exploration * np.sqrt(math.log(stats.pulls.sum()) / stats.pulls)


class Thompson(Policy):
    """Play the largest draw ``theta_a ~ Beta(1 + S_a, 1 + n_a - S_a)`` (Beta-Bernoulli)."""

    name = "thompson"

    def scores(self, stats: ArmStatistics, rng: np.random.Generator) -> np.ndarray:
        return rng.beta(1 + stats.rewards, 1 + stats.pulls - stats.rewards)


POLICIES = {policy.name: policy for policy in (Roulette, UCB1, Thompson)}


def make_policy(policy: str | Policy, options: dict | None = None) -> Policy:
    """A policy object from its name (``"roulette"``, ``"ucb"``, ``"thompson"``) and options."""
    if isinstance(policy, Policy):
        if options:
            raise InvalidArgumentError("bandit: policy_options are for a policy given by name")
        return policy
    if policy not in POLICIES:
        raise InvalidArgumentError(
            f"bandit: unknown policy '{policy}', choose among {sorted(POLICIES)}"
        )
    check_arguments(f"bandit: policy '{policy}'", POLICIES[policy], **(options or {}))
    return POLICIES[policy](**(options or {}))
