"""How the cores of an ``auto`` portfolio go to the kinds of search: by measured improvement.

The ``auto`` portfolio on ``n`` cores starts more workers than cores (``n`` LNS workers and one
of each other kind available) and keeps ``n`` of them running: worker 0 (LNS) always, the
other ``n - 1`` cores (the *slots*) each given to one of the other workers for a slice of
:data:`SLICE` seconds, the rest paused (:mod:`lns.core.parallel.kinds.protocol`). At the end of
each slice a rule decides who holds each slot next, from what each worker earned: the
relative improvements of the shared incumbent that its solutions brought (``|f_old - f_new| /
max(|f_old|, |f_new|)``), per second it held a slot.

- :class:`StayRule` (``"stay"``): a worker that improved the incumbent during its slice keeps
  its slot; one that did not passes it to the next paused worker in turn (a rotation that
  stays with what improves).
- :class:`RateRule` (``"rate"``): each slot goes to the worker with the highest improvement per
  second held (both sums decayed by :data:`DECAY` each slice, so that what a worker did lately
  counts most), a worker not yet tried first; every :data:`EXPLORE`-th decision a slot goes
  to the worker that waited longest instead, among those due (:meth:`Allocation.due`): a worker
  that held slots without improving waits twice as long for each such slice in a row, so that a
  kind that never improves costs less and less of the run (down to one slice in 64), not one in
  :data:`EXPLORE`.

The slices begin when the LNS workers start (:meth:`Allocation.begin`); before the first
solution the workers of other kinds that hold a slot (:meth:`Allocation.prefer`) search for one
beside the main process's start search, the others joining them after a slice without a solution
(:mod:`lns.core.parallel.early`); from the first solution on only those that hold a slot run.

With a prior (:mod:`lns.core.parallel.prior`: a weight per worker, from the kinds that did
well on similar problems) the workers first hold the slots in the order of their weights, and a
worker whose weight is below :data:`DEFER_BELOW` is not tried before the others: it waits for
the rule's turns of the longest waiting (the rotation of ``stay``, the exploration of
``rate``), so that a wrong prior costs a late trial, not the kind.

``benchmarks/results/portfolio_kinds.md`` compares the two: they tie on the shifted geometric
mean primal integral (2.47 s for ``rate``, 2.46 s for ``stay``), and :data:`DEFAULT_RULE`,
``rate``, has the lower median and mean gap and the lower integral on 4 of the 6 instances.
"""

from __future__ import annotations

import time

#: Seconds a worker holds a slot before the rule decides again.
SLICE = 5.0
#: Weight of a slice's earnings against the next one's (:class:`RateRule`).
DECAY = 0.7
#: Every this many decisions, :class:`RateRule` gives a slot to the worker that waited longest
#: (of those due: :meth:`Allocation.due`).
EXPLORE = 4
#: The longest a worker that never improves waits for an exploration turn, in doublings of
#: :data:`EXPLORE` decisions (:meth:`Allocation.due`; 4: 64 decisions, 320 s of 5 s slices).
MAX_DOUBLINGS = 4
#: A worker whose prior weight is below this is tried only in the rule's turns of the longest
#: waiting (a weight of 0.4: on similar problems its primal integral was about 2.5 times the
#: best kind's).
DEFER_BELOW = 0.4


class Allocation:
    """Which workers hold a core; asked by the main process as the run goes.

    Parameters
    ----------
    candidates : list of int
        The workers that take turns in the slots (every worker but the always-running ones).
    slots : int
        Cores shared among ``candidates``.
    rule : StayRule or RateRule
    slice_seconds : float, optional
        Default: :data:`SLICE`.
    weights : dict, optional
        The prior: worker -> weight in [0, 1] (default: 1 for each, no preference).

    Attributes
    ----------
    holding : list of int
        The worker in each slot.
    """

    def __init__(
        self,
        candidates: list[int],
        slots: int,
        rule,
        slice_seconds: float | None = None,
        weights: dict | None = None,
    ):
        self.weights = {w: 1.0 if weights is None else weights.get(w, 1.0) for w in candidates}
        self.candidates = sorted(candidates, key=lambda w: -self.weights[w])
        self.rule = rule
        self.slice_seconds = SLICE if slice_seconds is None else slice_seconds
        self.holding = self.candidates[: max(0, min(slots, len(self.candidates)))]
        self.earned = dict.fromkeys(self.candidates, 0.0)
        self.held = dict.fromkeys(self.candidates, 0.0)
        self.last_slice = dict.fromkeys(self.candidates, -1)
        self.fruitless = dict.fromkeys(self.candidates, 0)
        self.slice_gain = dict.fromkeys(self.candidates, 0.0)
        self.decisions = 0
        self.since = time.perf_counter()

    def prefer(self, first: list) -> None:
        """Before the slices begin: the workers of ``first`` that are candidates hold the slots
        before the others (in the order of the weights)."""
        first = [w for w in self.candidates if w in first]
        order = first + [w for w in self.candidates if w not in first]
        self.holding = order[: len(self.holding)]

    def begin(self, now: float) -> None:
        """The first slice starts at ``now``."""
        self.since = now

    def paused(self) -> set[int]:
        """The candidates that do not hold a slot now."""
        return set(self.candidates) - set(self.holding)

    def credit(self, worker: int, gain: float) -> None:
        """``worker`` brought a relative improvement ``gain`` of the shared incumbent."""
        if worker in self.slice_gain:
            self.slice_gain[worker] += gain

    def drop(self, worker: int) -> None:
        """``worker`` ended (or cannot run): it takes no more turns."""
        if worker in self.candidates:
            self.candidates.remove(worker)
            if worker in self.holding:
                self.holding.remove(worker)
                self.holding += [w for w in self.waiting() if w not in self.holding][:1]

    def step(self, now: float) -> tuple[set[int], set[int]]:
        """At the end of a slice, the rule's decision: the workers to pause and to resume."""
        if now - self.since < self.slice_seconds or not self.candidates:
            return set(), set()
        seconds = now - self.since
        for worker in self.candidates:
            self.earned[worker] = self.earned[worker] * DECAY + self.slice_gain[worker]
            self.held[worker] *= DECAY
        for worker in self.holding:
            self.held[worker] += seconds
            self.last_slice[worker] = self.decisions
            gained = self.slice_gain[worker] > 0
            self.fruitless[worker] = 0 if gained else self.fruitless[worker] + 1
        before = list(self.holding)
        self.holding = self.rule.choose(self, before)
        self.decisions += 1
        self.slice_gain = dict.fromkeys(self.candidates, 0.0)
        self.since = now
        return set(before) - set(self.holding), set(self.holding) - set(before)

    def waiting(self) -> list[int]:
        """The candidates without a slot, the longest waiting first (of equal waits, the
        higher weight)."""
        return sorted(self.paused(), key=lambda w: (self.last_slice[w], -self.weights[w], w))

    def due(self, worker: int) -> bool:
        """Whether ``worker`` may take an exploration turn now: at once if its last slice
        improved the incumbent or it never held one; after ``n`` slices in a row without an
        improvement, once :data:`EXPLORE` ``* 2 ** (n - 1)`` decisions (at most
        :data:`MAX_DOUBLINGS` doublings) have passed since its last slice."""
        doublings = min(self.fruitless[worker] - 1, MAX_DOUBLINGS)
        return doublings < 0 or self.decisions - self.last_slice[worker] >= EXPLORE * 2**doublings

    def deferred(self, worker: int) -> bool:
        """Whether ``worker``'s weight is below :data:`DEFER_BELOW`."""
        return self.weights[worker] < DEFER_BELOW


class StayRule:
    """A slot's worker keeps it after a slice in which it improved the incumbent; else the
    slot goes to the worker that waited longest."""

    name = "stay"

    def choose(self, allocation: Allocation, holding: list[int]) -> list[int]:
        waiting = allocation.waiting()
        chosen = []
        for worker in holding:
            if allocation.slice_gain[worker] > 0 or not waiting:
                chosen.append(worker)
            else:
                chosen.append(waiting.pop(0))
                waiting.append(worker)
        return chosen


class RateRule:
    """Each slot to the best improvement per second held (untried workers first, the higher
    weight first, those deferred by the prior last), except every :data:`EXPLORE`-th decision,
    when one slot goes to the worker that waited longest of those due
    (:meth:`Allocation.due`)."""

    name = "rate"

    def choose(self, allocation: Allocation, holding: list[int]) -> list[int]:
        def rate(worker: int) -> float:
            held = allocation.held[worker]
            if held == 0:
                return 0.0 if allocation.deferred(worker) else float("inf")
            return allocation.earned[worker] / held

        weights = allocation.weights
        ranked = sorted(allocation.candidates, key=lambda w: (-rate(w), -weights[w], w))
        chosen = ranked[: len(holding)]
        waiting = [w for w in allocation.waiting() if w not in chosen and allocation.due(w)]
        if allocation.decisions % EXPLORE == EXPLORE - 1 and waiting and chosen:
            chosen[-1] = waiting[0]
        return chosen


RULES = {"stay": StayRule, "rate": RateRule}
#: The rule of ``PortfolioParams(mix="auto")``.
DEFAULT_RULE = "rate"
