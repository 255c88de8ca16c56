"""A local search from the incumbent, when the neighborhoods stop improving it.

On some problems every LNS stops at a solution that no neighborhood it draws improves: on a set
cover, neighborhoods of random columns, of the Local Branching LP or of a learned score end a few
columns above the best cover known, and stay there for minutes. A local search that walks
through infeasible points, its moves scored by weighted violations and the objective (CP-SAT's
violation local search, of the feasibility jump family: Luteberget and Sartor 2023), leaves such
a solution: from a cover that random LNS had not improved for seconds it finds covers that none
of the LNS runs of the same problem reached in minutes (``docs/cl_lns.md``, "A local search at
the stalls"). On other problems it finds nothing, so it gets its time from the LNS only when the
LNS has none to use, and little of it:

- a slice starts only once the incumbent has not improved for a tenth of the run so far (at
  least :data:`MIN_QUIET` seconds);
- the slices that improved nothing, with the model's translation, stay within
  :data:`SHARE` of the run; slices that improve are not counted: a search that pays keeps its
  turns;
- the first slice lasts :data:`FIRST_SLICE` seconds, each after one that improved nothing
  twice as long, up to :data:`MAX_SLICE`; the weights of the search start afresh each slice,
  so a longer slice searches deeper. Their number is not capped otherwise: on large set
  covers the first slice that improved anything came after three or four that had not.

The search runs on the whole problem through the CP-SAT sub-solver
(:class:`lns.core.solvers.cpsat.subsolver.CpSatSubSolver`): pure-integer problems only, from
the incumbent as a hint, with the cutoff of every sub-solve (only strictly better solutions,
checked against the problem). A problem CP-SAT does not take, or a machine without OR-Tools,
has no stall search; one that CP-SAT did not stop in time ends it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lns.core.errors import InvalidArgumentError, UnsupportedProblemError
from lns.core.problem.mip import Problem
from lns.core.search.incumbent import Incumbent
from lns.core.solvers.protocol import SEED_BOUND, SolveStatus, SubSolver

log = logging.getLogger("lns")

#: Seconds of the first slice.
FIRST_SLICE = 1.0
#: The longest slice, in seconds.
MAX_SLICE = 8.0
#: The share of the run's seconds the incumbent must have gone without improving.
QUIET = 0.1
#: The fewest seconds without improvement before a slice.
MIN_QUIET = 1.0
#: The share of the run's seconds that the fruitless slices (and the translation) may take.
SHARE = 0.1
#: CP-SAT's parameters of a slice: its violation local search alone, without presolve (which
#: would take seconds of each slice on a large problem).
PARAMETERS = {"use_ls_only": True, "cp_model_presolve": False}


@dataclass
class StallSlices:
    """When a stall search may run, and for how long (the rules of the module's docstring).

    Attributes
    ----------
    length : float
        Seconds of the next slice.
    spent : float
        Seconds of the slices that improved nothing, and of the translation.
    """

    length: float = FIRST_SLICE
    spent: float = 0.0

    def limit(self, elapsed: float, quiet: float) -> float | None:
        """The time limit of a slice starting ``elapsed`` seconds into the run, ``quiet``
        seconds after the last improvement, or ``None`` if none may start then."""
        if quiet < max(MIN_QUIET, QUIET * elapsed):
            return None
        if self.spent + self.length > SHARE * elapsed:
            return None
        return self.length

    def ran(self, seconds: float, improved: bool) -> None:
        """Count a slice that took ``seconds`` and ``improved`` the incumbent or not."""
        if not improved:
            self.spent += seconds
            self.length = min(2 * self.length, MAX_SLICE)


def violation_search(problem: Problem) -> SubSolver:
    """The CP-SAT sub-solver of ``problem`` with its violation local search alone.

    Raises
    ------
    ImportError
        OR-Tools is not installed.
    InvalidArgumentError
        The OR-Tools installed has no violation local search alone (``use_ls_only``).
    UnsupportedProblemError
        CP-SAT does not take the problem
        (:func:`lns.core.solvers.cpsat.model.build_cpsat_model`).
    """
    from lns.core.solvers.cpsat.subsolver import CpSatSubSolver

    return CpSatSubSolver(problem, params=PARAMETERS)


class StallSearch:
    """The loop's local search at its stalls: builds its solver at the first slice.

    Parameters
    ----------
    problem : Problem
    rng : numpy.random.Generator
        Draws the slices' seeds (a generator of its own, so that the slices leave the loop's
        draws as they would be without them).
    build : callable
        ``build(problem)``: the solver of the slices (:func:`violation_search`); its
        ``solve`` is called with every integer variable free.
    """

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        build: Callable[[Problem], SubSolver] = violation_search,
    ):
        self.problem = problem
        self.rng = rng
        self.build = build
        self.slices = StallSlices()
        self.solver: SubSolver | None = None
        #: No more slices: the solver could not be built, or did not stop in time.
        self.off = False

    def step(self, incumbent: Incumbent, time_left: float, iteration: int) -> bool:
        """Run a slice from the incumbent if one is due (see :class:`StallSlices`) and the
        solver can be built, before the loop's iteration ``iteration`` (its solutions are
        recorded as found there, the whole problem free); returns whether one ran (a failing
        one too: it ends the stall search)."""
        now = time.perf_counter()
        elapsed, quiet = now - incumbent.started, now - incumbent.improved_at
        limit = None if self.off else self.slices.limit(elapsed, quiet)
        if limit is None or time_left <= 0:
            return False
        if self.solver is None and not self._built():
            return False
        assert self.solver is not None and incumbent.x is not None
        improved = []
        try:
            outcome = self.solver.solve(
                time_limit=min(limit, time_left),
                seed=int(self.rng.integers(SEED_BOUND)),
                free=self.problem.integer_indices,
                start=incumbent.x,
                on_found=lambda found: improved.append(
                    incumbent.offer(
                        found.x,
                        found_at=found.time,
                        source="stall search",
                        iteration=iteration,
                        size=len(self.problem.integer_indices),
                    )
                ),
            )
        except Exception as error:  # the search goes on without it, the incumbent kept
            log.warning("%s: the stall search failed and ends: %s", self.problem.name, error)
            self.off = True
            return True
        self.slices.ran(outcome.solve_time, any(improved))
        log.debug(
            "%s: stall search of %.2fs (limit %.2fs): %s, improved %d times",
            self.problem.name,
            outcome.solve_time,
            limit,
            outcome.status.value,
            sum(improved),
        )
        if outcome.status is SolveStatus.ABANDONED:
            self.off = True
        return True

    def _built(self) -> bool:
        """Build the solver, its seconds counted as spent; ``False`` (and off) if it cannot be."""
        began = time.perf_counter()
        try:
            self.solver = self.build(self.problem)
        except (ImportError, InvalidArgumentError, UnsupportedProblemError) as error:
            log.debug("%s: no stall search (%s)", self.problem.name, error)
            self.off = True
        self.slices.spent += time.perf_counter() - began
        return not self.off
