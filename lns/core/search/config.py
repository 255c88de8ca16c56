"""Settings of the LNS loop: one dataclass, the single source of its fields and defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.problem.reduced import CONTINUOUS_RULES, SUB_PROBLEMS
from lns.core.problem.validation import check_integer, check_real
from lns.core.solvers.scip.settings import SUB_MIP_SETTINGS

#: Seconds kept in hand before the deadline, so that the run ends within it.
DEADLINE_MARGIN = 0.05
#: Names of the start strategies of ``LNSConfig.start`` (:func:`lns.core.search.start.make_start`).
STARTS = ("first", "improving", "feasibility", "cpsat", "race")


@dataclass
class LNSConfig:
    """Settings of the LNS loop (all have working defaults).

    Attributes
    ----------
    initial_fraction, growth, max_fraction, shrink, min_size
        The adaptive neighborhood size (:class:`lns.core.search.neighborhood_size.AdaptiveSize`).
    iteration_time_limit : float
        Seconds per sub-solve (clipped to the time left).
    iteration_node_limit : int
        Branch-and-bound nodes per sub-solve (-1: none); with an iteration limit and no
        sub-solve hitting its time limit, a run repeats exactly.
    start : {"feasibility", "improving", "first", "cpsat", "race"} or StartStrategy
        How the first incumbent is found (:mod:`lns.core.search.start`): SCIP with feasibility
        emphasis until its solutions stop coming quickly (``"feasibility"``, the stall rule of
        ``start_stall_floor``, ``start_stall_factor``, ``start_max_share``); the same with
        SCIP's own settings (``"improving"``); the run's sub-solver until its first
        ``initial_solution_limit`` solutions (``"first"``); CP-SAT, for pure-integer problems
        (``"cpsat"``); feasibility-emphasis SCIP and CP-SAT at once, one thread each
        (``"race"``); or a strategy object. ``"feasibility"`` had the smallest geometric mean
        primal integral in ``lns-bench +experiment=fast_start`` (figures in
        :mod:`lns.core.search.start`). The stall rule reads the clock: with
        ``iteration_node_limit`` set (runs that repeat), a named start becomes ``"first"``.
    start_stall_floor, start_stall_factor, start_max_share : float
        The stall rule (:class:`lns.core.search.start.StallRule`): the start ends once no new
        solution
        came for ``max(floor, factor * t1)`` seconds (``t1``: seconds to its first solution),
        or once ``max_share`` of its time limit is spent.
    start_after_root : bool
        The stall rule's window opens only once SCIP solved its first LP (``after_root``):
        presolving and the root LP, with the heuristics that read it, are not cut short.
    initial_time_limit : float or None
        Seconds for the start solve (``None``: the whole budget).
    initial_solution_limit : int
        The ``"first"`` start stops after this many solutions (-1: only at its time limit).
    history_length : int
        Earlier incumbents kept in the search state for selectors.
    max_failures : int
        Consecutive failing sub-solves after which the run stops.
    improvement_tol : float
        A new objective must beat the incumbent by ``improvement_tol * max(1, |incumbent|)``.
    scip_params : dict
        SCIP parameters for every solve.
    sub_mip : {"default", "fast_presolving", "fast"}
        SCIP settings of the LNS sub-solver
        (:data:`lns.core.solvers.scip.settings.SUB_MIP_SETTINGS`),
        under ``scip_params``; plain SCIP runs (``method="scip"``) keep SCIP's defaults.
        ``"fast"`` (the default) had a 0.79x shifted geometric mean primal integral of
        ``"default"``'s on the MIPLIB 2017 tuning part (``benchmarks/results/sub_mip_60s.md``).
    sub_problem : {"auto", "reduced", "whole"}
        What the SCIP sub-solver solves in an LNS iteration: the sub-MIP of the free variables
        and their rows (:mod:`lns.core.problem.reduced`), the whole model with the fixed
        variables' bounds changed, or either, chosen per iteration by
        :func:`lns.core.solvers.scip.subsolver.prefers_reduced`
        (``benchmarks/results/sub_problem_rule.md``).
    reduced_continuous : {"all", "adjacent"}
        Which continuous variables a reduced sub-MIP keeps free: all, or those that share a row
        with a free integer variable (the others fixed at the incumbent).

    Raises
    ------
    lns.core.errors.InvalidArgumentError
        A value out of its range or of the wrong type (checked on creation, so that the
        API and the command line refuse it before anything is read).
    """

    initial_fraction: float = 0.2
    growth: float = 1.02
    max_fraction: float = 0.5
    shrink: float | None = 0.5
    min_size: int = 2
    iteration_time_limit: float = 5.0
    iteration_node_limit: int = -1
    start: Any = "feasibility"  # str | StartStrategy, which OmegaConf's structured configs refuse
    start_stall_floor: float = 1.0
    start_stall_factor: float = 2.0
    start_max_share: float = 0.2
    start_after_root: bool = True
    initial_time_limit: float | None = None
    initial_solution_limit: int = 1
    history_length: int = 3
    max_failures: int = 5
    improvement_tol: float = 1e-6
    scip_params: dict | None = None
    sub_mip: str = "fast"
    sub_problem: str = "auto"
    reduced_continuous: str = "all"

    def __post_init__(self):
        fraction, limit = "expected a fraction in (0, 1]", "expected -1 (none) or an integer >= 1"
        check_real(
            "initial_fraction", self.initial_fraction, fraction, low=0, low_open=True, high=1
        )
        check_real("growth", self.growth, "expected a finite factor >= 1", low=1)
        check_real("max_fraction", self.max_fraction, fraction, low=0, low_open=True, high=1)
        check_real(
            "shrink",
            self.shrink,
            "expected a factor in (0, 1], or None (never shrink)",
            low=0,
            low_open=True,
            high=1,
            none_ok=True,
        )
        check_integer("min_size", self.min_size, "expected an integer >= 1", low=1)
        check_real(
            "iteration_time_limit",
            self.iteration_time_limit,
            "expected finite seconds > 0",
            low=0,
            low_open=True,
        )
        check_integer("iteration_node_limit", self.iteration_node_limit, limit, low=1, also=(-1,))
        check_real(
            "initial_time_limit",
            self.initial_time_limit,
            "expected finite seconds > 0, or None (the whole budget)",
            low=0,
            low_open=True,
            none_ok=True,
        )
        check_integer(
            "initial_solution_limit", self.initial_solution_limit, limit, low=1, also=(-1,)
        )
        if isinstance(self.start, str) and self.start not in STARTS:
            raise UnknownNameError("start", self.start, STARTS)
        if not isinstance(self.start, str) and not callable(self.start):
            raise InvalidArgumentError(
                f"start={self.start!r} is invalid: expected one of "
                f"{list(STARTS)} or a start strategy (lns.core.search.start)"
            )
        check_real(
            "start_stall_floor", self.start_stall_floor, "expected finite seconds >= 0", low=0
        )
        check_real(
            "start_stall_factor", self.start_stall_factor, "expected a finite factor >= 0", low=0
        )
        check_real("start_max_share", self.start_max_share, fraction, low=0, low_open=True, high=1)
        check_integer("history_length", self.history_length, "expected an integer >= 0", low=0)
        check_integer("max_failures", self.max_failures, "expected an integer >= 1", low=1)
        check_real("improvement_tol", self.improvement_tol, "expected a finite number >= 0", low=0)
        self._check_names()
        if self.scip_params is not None and not isinstance(self.scip_params, Mapping):
            raise InvalidArgumentError(
                f"scip_params={self.scip_params!r} is invalid: expected a "
                f"dict of SCIP parameters, or None"
            )

    def _check_names(self) -> None:
        """Refuse an unknown name of a sub-MIP setting, sub-problem rule or continuous rule."""
        if self.sub_mip not in SUB_MIP_SETTINGS:
            raise UnknownNameError("sub_mip", self.sub_mip, SUB_MIP_SETTINGS)
        if self.sub_problem not in SUB_PROBLEMS:
            raise UnknownNameError("sub_problem", self.sub_problem, SUB_PROBLEMS)
        if self.reduced_continuous not in CONTINUOUS_RULES:
            raise UnknownNameError("reduced_continuous", self.reduced_continuous, CONTINUOUS_RULES)

    def sub_solver_params(self) -> dict:
        """SCIP parameters of the LNS sub-solver: the ``sub_mip`` preset, then ``scip_params``."""
        return {**SUB_MIP_SETTINGS[self.sub_mip], **(self.scip_params or {})}
