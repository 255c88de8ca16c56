"""What each of CL-LNS's draws has given in a run, and the choice among them (Thompson
sampling)."""

from __future__ import annotations

import numpy as np

from lns.core.solvers.protocol import SolveStatus

#: The draws of :class:`learning.selector.CLLNS` from its scores, recorded per run.
MODEL_DRAWS = ("greedy", "sample")


class DrawRecord:
    """What each draw of a run gave: the top-scored (``"greedy"``), the sampled (``"sample"``)
    and, as an arm of ``random_arm``, the uniformly random (``"random"``) neighborhoods; per
    draw, how often it was used, how often it improved, its sub-solves that ran into their time
    limit, the seconds they took, the seconds its scores took and the objective it gained
    (``CLLNS.draw_record``; ``draw="auto"`` chooses by it)."""

    def __init__(self, draws: tuple[str, ...] = MODEL_DRAWS):
        self.draws = draws
        self.used = dict.fromkeys(draws, 0)
        self.improving = dict.fromkeys(draws, 0)
        self.timeouts = dict.fromkeys(draws, 0)
        self.seconds = dict.fromkeys(draws, 0.0)
        self.scoring = dict.fromkeys(draws, 0.0)
        self.gain = dict.fromkeys(draws, 0.0)

    def add(self, drawn: str, record, scoring: float = 0.0) -> None:
        self.used[drawn] += 1
        self.timeouts[drawn] += SolveStatus(record.status).out_of_time
        self.seconds[drawn] += record.solve_time
        self.scoring[drawn] += scoring
        if record.improved:
            self.improving[drawn] += 1
            self.gain[drawn] += abs(record.objective_after - record.objective_before)

    def best(
        self, timed: bool, rng: np.random.Generator, among: tuple[str, ...] | None = None
    ) -> str:
        """The first draw of ``among`` (default: all, in their order) not used yet, else the one
        with the most gain per second of sub-solving and scoring, or per neighborhood when not
        ``timed`` (a run without a deadline, which must repeat exactly), as drawn by Thompson
        sampling.

        Improvements are rare and their rate falls as the run goes on, so a draw judged by its
        record so far would never be tried again after a first failure. Instead each draw's
        rate of improvements is drawn from its Gamma posterior (its improvements and cost, with
        a prior of one improvement at the cost per improvement of all draws together) and
        multiplied by its mean gain per improvement (with one improvement of the mean gain of
        all draws): a draw with little record is tried again now and then, one that has cost
        much without gain seldom.
        """
        among = self.draws if among is None else among
        for drawn in among:
            if not self.used[drawn]:
                return drawn
        if timed:
            cost = {d: self.seconds[d] + self.scoring[d] for d in self.draws}
        else:
            cost = {d: float(self.used[d]) for d in self.draws}
        improvements = max(sum(self.improving.values()), 1)
        prior_cost = sum(cost.values()) / improvements
        prior_gain = sum(self.gain.values()) / improvements

        def sampled_rate(drawn: str) -> float:
            rate = rng.gamma(self.improving[drawn] + 1, 1 / max(cost[drawn] + prior_cost, 1e-3))
            return rate * (self.gain[drawn] + prior_gain) / (self.improving[drawn] + 1)

        return max(among, key=sampled_rate)
