"""The LNS loop: select a neighborhood, solve the sub-ILP with SCIP, keep it if better.

Every candidate solution is checked against the original problem before it
becomes the incumbent, so the loop never reports an infeasible point. The loop
keeps the best solution through a time limit, an iteration limit, Ctrl-C
(SCIP's own interrupt status or ``KeyboardInterrupt``) and failing sub-solves.
"""
from __future__ import annotations

import logging
import time
import numpy as np

from lns.core.selection import SearchState, Selector
from lns.core.errors import UnboundedProblemError
from lns.core.config import DEADLINE_MARGIN, LNSConfig
from lns.core.interrupt import active_guard
from lns.core.neighborhood_size import AdaptiveSize
from lns.core.problem import Problem
from lns.core.result import Callback, Improvement, IterationRecord
from lns.core.scip_subsolver import ScipSubSolver
from lns.core.subsolver import SEED_BOUND

log = logging.getLogger("lns")

class Incumbent:
    """The best feasible solution so far and the trajectory of its objective."""

    def __init__(self, problem: Problem, started: float, tol: float, history_length: int,
                 callbacks: list[Callback]):
        self.problem = problem
        self.started = started
        self.tol = tol
        self.history_length = history_length
        self.callbacks = callbacks
        self.x: np.ndarray | None = None
        self.objective: float | None = None
        self.history: list = []
        self.trajectory: list = []

    def initial_offer(self, found) -> bool:
        """Offer a solution of the initial (or plain) SCIP solve, a :class:`FoundSolution`."""
        return self.offer(found.x, found.time, -1, 0, "initial")

    def offer(self, x: np.ndarray, found_at: float, iteration: int, size: int, source: str) -> bool:
        """Accept ``x`` if it is feasible for the original problem and improves; return whether it did."""
        x = self.problem.round_integers(x)
        objective = self.problem.objective_value(x)
        if not self.problem.is_better(objective, self.objective, self.tol):
            return False
        check = self.problem.check(x)
        if not check.feasible:
            log.warning("%s: rejected a %s solution that violates the problem (%s)", self.problem.name, source, check)
            return False
        if self.x is not None:
            self.history = [self.x, *self.history][: self.history_length]
        self.x, self.objective = x, objective
        improvement = Improvement(found_at - self.started, objective, iteration, size, source)
        self.trajectory.append((improvement.time, objective))
        for callback in self.callbacks:
            callback.on_improvement(improvement)
        return True


def run_lns(problem: Problem, selector: Selector, solver: ScipSubSolver, incumbent: Incumbent, *,
            config: LNSConfig, rng: np.random.Generator, deadline: float, iteration_limit: int | None,
            callbacks: list[Callback]) -> tuple[list, str]:
    """Improve ``incumbent`` until the deadline, the iteration limit, optimality or Ctrl-C.

    Returns
    -------
    records : list of IterationRecord
    stop_reason : str
    """
    records: list = []
    try:
        selector.setup(problem)
        with solver.session():
            stop_reason = _search(problem, selector, solver, incumbent, records, config=config, rng=rng,
                                  deadline=deadline, iteration_limit=iteration_limit, callbacks=callbacks)
    except KeyboardInterrupt:
        stop_reason = "interrupted"
    return records, stop_reason


def _search(problem: Problem, selector: Selector, solver: ScipSubSolver, incumbent: Incumbent, records: list, *,
            config: LNSConfig, rng: np.random.Generator, deadline: float, iteration_limit: int | None,
            callbacks: list[Callback]) -> str:
    """The iterations of :func:`run_lns`: appends a record per iteration and returns the stop reason."""
    size_rule = AdaptiveSize(len(problem.integer_indices), config.initial_fraction, config.growth,
                             config.max_fraction, config.shrink, config.min_size)
    failures = 0
    iteration = 0
    guard = active_guard()
    while True:
        if guard is not None and guard.requested:
            return "interrupted"
        if iteration_limit is not None and iteration >= iteration_limit:
            return "iteration_limit"
        if deadline - time.perf_counter() <= DEADLINE_MARGIN:
            return "time_limit"
        target = size_rule.size
        state = SearchState(problem, incumbent.x, incumbent.objective, incumbent.history, iteration,
                            size_rule.at_cap, deadline - DEADLINE_MARGIN)
        began = time.perf_counter()
        neighborhood = selector(state, target, rng)
        select_time = time.perf_counter() - began
        before = incumbent.objective
        improved = False
        if neighborhood.solution is not None:
            improved = incumbent.offer(neighborhood.solution, time.perf_counter(), iteration,
                                       len(neighborhood.free), "selector")
        fixed_mask = problem.integer_mask.copy()
        fixed_mask[neighborhood.free] = False
        time_left = deadline - time.perf_counter() - DEADLINE_MARGIN
        if time_left <= 0:
            return "time_limit"
        seed = int(rng.integers(SEED_BOUND))
        accepted = []

        def offer(found, iteration=iteration, size=len(neighborhood.free)):
            accepted.append(incumbent.offer(found.x, found.time, iteration, size, "subsolve"))

        try:
            outcome = solver.solve(time_limit=min(config.iteration_time_limit, time_left), seed=seed,
                                   fixed=np.flatnonzero(fixed_mask), start=incumbent.x,
                                   node_limit=config.iteration_node_limit, on_found=offer)
        except Exception as error:  # a failing sub-solve must not lose the incumbent
            failures += 1
            log.warning("%s: sub-solve of iteration %d failed: %s", problem.name, iteration, error)
            status, solve_time = "error", 0.0
            if failures >= config.max_failures:
                return "failures"
        else:
            failures = 0
            status, solve_time = outcome.status, outcome.solve_time
            improved |= any(accepted)
        record = IterationRecord(iteration, selector.name, len(neighborhood.free), target, status, select_time,
                                 solve_time, before, incumbent.objective, improved,
                                 time.perf_counter() - incumbent.started)
        records.append(record)
        selector.update(record)
        for callback in callbacks:
            callback.on_iteration(record)
        iteration += 1
        if status == "userinterrupt":
            return "interrupted"
        if status in ("unbounded", "inforunbd"):  # a restriction with a feasible point is unbounded
            raise UnboundedProblemError(f"{problem.source or problem.name}: SCIP proved the problem unbounded")
        if status == "optimal" and not fixed_mask.any():
            return "optimal"
        size_rule.update(improved, timed_out=status == "timelimit")

