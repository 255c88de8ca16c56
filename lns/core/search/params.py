"""Settings of the LNS loop, in small frozen groups: the neighborhood size, the start, each
sub-solve and the loop itself.

Each group checks its values on creation, so that the API and the command line refuse a bad
value, with its name, before anything is read. Every field has a working default. The groups
are fields of :class:`lns.params.SolveParams`, which also reads them from a file; the parts of
the search take the group they need (as PyVRP's ``GeneticAlgorithmParams`` and
``PenaltyParams``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lns.core.errors import InvalidArgumentError, UnknownNameError
from lns.core.problem.reduced import SUB_PROBLEMS
from lns.core.problem.validation import check_integer, check_real
from lns.core.solvers.scip.settings import SUB_MIP_SETTINGS

#: Names of the start strategies of :attr:`StartParams.strategy`
#: (:func:`lns.core.search.start.make_start`).
STARTS = ("first", "improving", "feasibility", "cpsat", "race")
#: Names of the sub-solvers of :attr:`SubSolveParams.solver`.
SUB_SOLVERS = ("scip", "cpsat")

_FRACTION = "expected a fraction in (0, 1]"
_LIMIT = "expected -1 (none) or an integer >= 1"


@dataclass(frozen=True)
class SizeParams:
    """The adaptive neighborhood size (:class:`lns.core.search.neighborhood_size.AdaptiveSize`).

    The size starts at ``initial_fraction`` of the integer variables, grows by ``growth`` after
    each iteration that improved nothing in its limits and shrinks by ``shrink`` after one that
    hit its time limit, between ``min_size`` variables and ``max_fraction`` of them.

    Attributes
    ----------
    initial_fraction : float
        The first size, as a fraction of the integer variables, in (0, 1].
    growth : float
        Factor (>= 1) on the size after an iteration that neither improved nor timed out, by
        at least one variable; 1 keeps the size fixed.
    max_fraction : float
        The largest size, as a fraction of the integer variables, in (0, 1].
    shrink : float or None
        Factor in (0, 1] on the size after a sub-solve that hit its time limit (``None``: never
        shrink).
    min_size : int
        The smallest size, in variables (>= 1).
    """

    initial_fraction: float = 0.2
    growth: float = 1.02
    max_fraction: float = 0.5
    shrink: float | None = 0.5
    min_size: int = 2

    def __post_init__(self) -> None:
        check_real(
            "initial_fraction", self.initial_fraction, _FRACTION, low=0, low_open=True, high=1
        )
        check_real("growth", self.growth, "expected a finite factor >= 1", low=1)
        check_real("max_fraction", self.max_fraction, _FRACTION, low=0, low_open=True, high=1)
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


@dataclass(frozen=True)
class StartParams:
    """How the first incumbent is found (:mod:`lns.core.search.start`), when no start is given.

    Attributes
    ----------
    strategy : {"feasibility", "improving", "first", "cpsat", "race"} or StartStrategy
        SCIP with feasibility emphasis until its solutions stop coming quickly
        (``"feasibility"``, the stall rule of ``stall_floor``, ``stall_factor`` and
        ``max_share``); the same with SCIP's own settings (``"improving"``); the run's
        sub-solver until its first ``solution_limit`` solutions (``"first"``); CP-SAT, for
        pure-integer problems (``"cpsat"``); feasibility-emphasis SCIP and CP-SAT at once, one
        thread each (``"race"``); or a strategy object. ``"feasibility"`` had the smallest
        geometric mean primal integral in ``lns-bench +experiment=fast_start`` (figures in
        :mod:`lns.core.search.start`). The stall rule reads the clock: with a
        node limit per sub-solve (:attr:`SubSolveParams.node_limit`, runs that repeat), a named
        start becomes ``"first"``.
    stall_floor, stall_factor, max_share : float
        The stall rule (:class:`lns.core.search.start.StallRule`): the start ends once no new
        solution came for ``max(stall_floor, stall_factor * t1)`` seconds (``t1``: seconds to
        its first solution), or once ``max_share`` of its time limit is spent.
    after_root : bool
        The stall rule's window opens only once SCIP solved its first LP: presolving and the
        root LP, with the heuristics that read it, are not cut short.
    time_limit : float or None
        Seconds for the start solve (``None``: the whole budget); with no solution by then, the
        start goes on for the rest of the budget.
    solution_limit : int
        The ``"first"`` start stops after this many solutions (-1: only at its time limit).
    greedy : bool
        On a covering or packing problem with binary variables (set cover, vertex cover,
        independent set, auctions) start from a greedy solution instead
        (:mod:`lns.core.search.greedy_start`): the LNS begins at once.
    """

    strategy: Any = (
        "feasibility"  # str | StartStrategy, which OmegaConf's structured configs refuse
    )
    stall_floor: float = 1.0
    stall_factor: float = 2.0
    max_share: float = 0.2
    after_root: bool = True
    time_limit: float | None = None
    solution_limit: int = 1
    greedy: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.strategy, str) and self.strategy not in STARTS:
            raise UnknownNameError("strategy", self.strategy, STARTS)
        if not isinstance(self.strategy, str) and not callable(self.strategy):
            raise InvalidArgumentError(
                f"strategy={self.strategy!r} is invalid: expected one of "
                f"{list(STARTS)} or a start strategy (lns.core.search.start)"
            )
        check_real("stall_floor", self.stall_floor, "expected finite seconds >= 0", low=0)
        check_real("stall_factor", self.stall_factor, "expected a finite factor >= 0", low=0)
        check_real("max_share", self.max_share, _FRACTION, low=0, low_open=True, high=1)
        check_real(
            "time_limit",
            self.time_limit,
            "expected finite seconds > 0, or None (the whole budget)",
            low=0,
            low_open=True,
            none_ok=True,
        )
        check_integer("solution_limit", self.solution_limit, _LIMIT, low=1, also=(-1,))


@dataclass(frozen=True)
class SubSolveParams:
    """The solver of the LNS sub-problems (and of the first solution) and its limits.

    Attributes
    ----------
    solver : {"scip", "cpsat"} or SubSolver
        SCIP (:class:`lns.core.solvers.scip.subsolver.ScipSubSolver`), CP-SAT for pure-integer
        problems (:class:`lns.core.solvers.cpsat.subsolver.CpSatSubSolver`), or an object
        following the :class:`lns.core.solvers.protocol.SubSolver` protocol, used as it is (a
        sequential run only: the workers of a portfolio build theirs by name).
    time_limit : float
        Seconds per sub-solve (clipped to the time left).
    node_limit : int
        Branch-and-bound nodes per sub-solve (-1: none); with an iteration limit and no
        sub-solve hitting its time limit, a run repeats exactly.
    sub_mip : {"default", "fast_presolving", "fast"}
        SCIP settings of the LNS sub-solver
        (:data:`lns.core.solvers.scip.settings.SUB_MIP_SETTINGS`), under ``scip_params``; the
        start and plain SCIP keep SCIP's defaults. ``"fast"``, the default, was chosen on the
        MIPLIB 2017 tuning part (``benchmarks/results/sub_mip_60s.md``).
    sub_problem : {"auto", "reduced", "whole"}
        What the SCIP sub-solver solves in an LNS iteration: the sub-MIP of the free variables
        and their rows (:mod:`lns.core.problem.reduced`), the whole model with the fixed
        variables' bounds changed, or either, chosen per iteration by
        :func:`lns.core.solvers.scip.subsolver.prefers_reduced`
        (``benchmarks/results/sub_problem_rule.md``).
    scip_params : dict or None
        SCIP parameters of every SCIP solve of an LNS run: the sub-solves, the start and a
        portfolio's ``scip`` workers.
    """

    solver: Any = "scip"  # str | SubSolver, which OmegaConf's structured configs refuse
    time_limit: float = 5.0
    node_limit: int = -1
    sub_mip: str = "fast"
    sub_problem: str = "auto"
    scip_params: dict | None = None

    def __post_init__(self) -> None:
        if isinstance(self.solver, str) and self.solver not in SUB_SOLVERS:
            raise UnknownNameError("solver", self.solver, SUB_SOLVERS)
        if not isinstance(self.solver, str) and not callable(getattr(self.solver, "solve", None)):
            raise InvalidArgumentError(
                f"solver={self.solver!r} is invalid: expected one of {list(SUB_SOLVERS)} or a "
                f"sub-solver (lns.core.solvers.protocol.SubSolver)"
            )
        check_real(
            "time_limit", self.time_limit, "expected finite seconds > 0", low=0, low_open=True
        )
        check_integer("node_limit", self.node_limit, _LIMIT, low=1, also=(-1,))
        if self.sub_mip not in SUB_MIP_SETTINGS:
            raise UnknownNameError("sub_mip", self.sub_mip, SUB_MIP_SETTINGS)
        if self.sub_problem not in SUB_PROBLEMS:
            raise UnknownNameError("sub_problem", self.sub_problem, SUB_PROBLEMS)
        if self.scip_params is not None and not isinstance(self.scip_params, Mapping):
            raise InvalidArgumentError(
                f"scip_params={self.scip_params!r} is invalid: expected a "
                f"dict of SCIP parameters, or None"
            )

    def sub_mip_params(self) -> dict:
        """SCIP parameters of the LNS sub-solver: the ``sub_mip`` preset, then ``scip_params``."""
        return {**SUB_MIP_SETTINGS[self.sub_mip], **(self.scip_params or {})}


@dataclass(frozen=True)
class LoopParams:
    """When the loop takes a solution, what it remembers, and when it gives up.

    Attributes
    ----------
    history_length : int
        Earlier incumbents kept in the search state for selectors (such as ``crossover``).
    max_failures : int
        Consecutive failing sub-solves (raising an error) after which the run stops.
    improvement_tol : float
        A new objective must beat the incumbent by ``improvement_tol * max(1, |incumbent|)``
        (:class:`lns.core.search.incumbent.ImprovingOnly`).
    stall_search : bool
        When the incumbent has not improved for a while, run CP-SAT's violation local search
        from it for a slice of time (pure-integer problems, runs without a node limit per
        sub-solve; :mod:`lns.core.search.stall_search`).
    """

    history_length: int = 3
    max_failures: int = 5
    improvement_tol: float = 1e-6
    stall_search: bool = True

    def __post_init__(self) -> None:
        check_integer("history_length", self.history_length, "expected an integer >= 0", low=0)
        check_integer("max_failures", self.max_failures, "expected an integer >= 1", low=1)
        check_real("improvement_tol", self.improvement_tol, "expected a finite number >= 0", low=0)
