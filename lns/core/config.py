"""Settings of the LNS loop: one dataclass, the single source of its fields and defaults."""
from __future__ import annotations

from dataclasses import dataclass

#: Seconds kept in hand before the deadline, so that the run ends within it.
DEADLINE_MARGIN = 0.05


@dataclass
class LNSConfig:
    """Settings of the LNS loop (all have working defaults).

    Attributes
    ----------
    initial_fraction, growth, max_fraction, shrink, min_size
        The adaptive neighborhood size (:class:`lns.core.neighborhood_size.AdaptiveSize`).
    iteration_time_limit : float
        Seconds per sub-solve (clipped to the time left).
    iteration_node_limit : int
        Branch-and-bound nodes per sub-solve (-1: none); with an iteration limit and no
        sub-solve hitting its time limit, a run repeats exactly.
    initial_time_limit : float or None
        Seconds for the initial SCIP solve (``None``: the whole budget).
    initial_solution_limit : int
        The initial SCIP solve stops after this many solutions (-1: only at its time limit).
    history_length : int
        Earlier incumbents kept in the search state for selectors.
    max_failures : int
        Consecutive failing sub-solves after which the run stops.
    improvement_tol : float
        A new objective must beat the incumbent by ``improvement_tol * max(1, |incumbent|)``.
    scip_params : dict
        SCIP parameters for every solve.
    """

    initial_fraction: float = 0.2
    growth: float = 1.02
    max_fraction: float = 0.5
    shrink: float | None = 0.5
    min_size: int = 2
    iteration_time_limit: float = 5.0
    iteration_node_limit: int = -1
    initial_time_limit: float | None = None
    initial_solution_limit: int = 1
    history_length: int = 3
    max_failures: int = 5
    improvement_tol: float = 1e-6
    scip_params: dict | None = None
