"""The selector protocol: what a neighborhood selector sees and what it returns.

A selector is a callable ``(state, size, rng) -> Neighborhood`` (see
:class:`Selector`). It frees about ``size`` integer variables; the LNS loop
fixes every other integer variable at its incumbent value and lets SCIP
re-optimise the rest.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from lns.core.problem.mip import Problem


@dataclass
class SearchState:
    """What the LNS loop knows when it asks for a neighborhood.

    Attributes
    ----------
    problem : Problem
        The original problem.
    incumbent : numpy.ndarray, shape (n,)
        The best solution so far (feasible, integers integral).
    objective : float
        Its objective, in the problem's own sense.
    history : list of numpy.ndarray
        Earlier incumbents, most recent first (at most ``history_length`` of them).
    iteration : int
        Number of the iteration about to run (0-based).
    at_cap : bool
        The neighborhood size has reached its cap and the last iteration did not improve:
        selectors that rank variables switch from greedy to sampling (CL-LNS).
    deadline : float
        ``time.perf_counter()`` value at which the run must end; a selector that solves
        something must stop by then.
    """

    problem: Problem
    incumbent: np.ndarray
    objective: float
    history: list = field(default_factory=list)
    iteration: int = 0
    at_cap: bool = False
    deadline: float = float("inf")

    def time_left(self) -> float:
        return self.deadline - time.perf_counter()


@dataclass
class Neighborhood:
    """The variables a selector frees, and optionally a solution it found on the way.

    Attributes
    ----------
    free : numpy.ndarray of int
        Indices of integer variables to re-optimise; the other integer variables are fixed.
    solution : numpy.ndarray, optional
        A complete solution the selector found (Local Branching finds improving solutions
        while it chooses); the loop checks it and keeps it if it improves the incumbent.
    info : dict
        Selector-specific numbers for the per-iteration record (e.g. selection LP status).
    time_limit : float, optional
        Seconds the selector allows this neighborhood's sub-solve, below the loop's own limit
        (which still applies); ``None``: the loop's. A selector that tries a neighborhood of
        unknown worth can cap what a failure costs (CL-LNS's probes).
    """

    free: np.ndarray
    solution: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    time_limit: float | None = None


class Selector(ABC):
    """Base class of neighborhood selectors.

    Subclasses set ``name`` (their registry name) and implement :meth:`__call__`. They may
    override :meth:`setup` for work done once per problem (its time counts in the budget)
    and :meth:`update` to learn from each iteration's outcome.
    """

    name: str = "selector"

    # check, setup and update are optional hooks: empty by design, not abstract.
    def check(self, problem: Problem) -> None:  # noqa: B027
        """Refuse ``problem`` with a one-line error if this selector cannot work on it.

        Called once the problem is read, before any solving, so that a run fails before it
        spends its budget. The default accepts every problem.
        """

    def setup(self, problem: Problem) -> None:  # noqa: B027
        """Prepare for ``problem`` (called once before the first iteration)."""

    def update(self, record) -> None:  # noqa: B027
        """Learn from the outcome of the iteration that used this selector's last neighborhood.

        ``record`` is the iteration's :class:`lns.core.search.result.IterationRecord` (improved or
        not,
        sub-solve status and times). Adaptive selectors override it; the default ignores it.
        """

    def share_statistics(self, context) -> None:  # noqa: B027
        """Learn, from now on, in memory shared with the worker processes of a parallel run
        (started from the ``multiprocessing`` context ``context``) that get a copy of this
        selector. Adaptive selectors override it; the default has nothing to share."""

    @abstractmethod
    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        """Choose about ``size`` integer variables of ``state.problem`` to free."""


class FunctionSelector(Selector):
    """A plain function ``(state, size, rng) -> Neighborhood`` used as a selector.

    The function may also return the indices to free (any integer array), which are wrapped in a
    :class:`Neighborhood`. Its ``__name__`` is the selector's name in the run's records.
    """

    def __init__(self, function):
        self.function = function
        self.name = getattr(function, "__name__", type(function).__name__)

    def __call__(self, state: SearchState, size: int, rng: np.random.Generator) -> Neighborhood:
        chosen = self.function(state, size, rng)
        if isinstance(chosen, Neighborhood):
            return chosen
        return Neighborhood(np.asarray(chosen, dtype=np.int64))
